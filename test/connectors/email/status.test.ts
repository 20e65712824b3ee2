/**
 * A mailbox's status as the Connections section shows it, across sync sessions: each session's
 * watcher starts knowing nothing, and until its first pass or failure the state, last sync and last
 * error of before still hold — a new session never shows "never synced" while it connects.
 */
import { describe, expect, it } from "vitest";
import { statusOf } from "../../../connectors/email/service.js";
import type { ConnectionStatus } from "../../../core/connections/index.js";
import type { WatchStatus } from "../../../connectors/email/watcher.js";

const t0 = new Date("2026-12-02T07:00:00Z");
const now = new Date("2026-12-02T07:04:00Z");
const synced: ConnectionStatus = { state: "ok", mode: "stopped", lastSyncAt: t0, lastError: null, checkedAt: t0 };
const watch = (patch: Partial<WatchStatus>): WatchStatus => ({ mode: "connecting", lastSyncAt: null, lastError: null, failures: 0, retryAt: null, ...patch });

describe("a mailbox's status across sync sessions", () => {
  it("keeps the last sync and the state while a new session connects", () => {
    expect(statusOf(watch({}), now, synced)).toEqual({ state: "ok", mode: "connecting", lastSyncAt: t0, lastError: null, checkedAt: now });
  });

  it("takes the session's pass once there is one, and its failure with the last sync of before", () => {
    const t1 = new Date("2026-12-02T07:04:01Z");
    expect(statusOf(watch({ mode: "idle", lastSyncAt: t1.toISOString() }), now, synced)).toEqual({ state: "ok", mode: "idle", lastSyncAt: t1, lastError: null, checkedAt: now });
    expect(statusOf(watch({ mode: "waiting", lastError: "The IMAP server at imap.example.com:993 refused the user name or app password." }), now, synced)).toEqual({
      state: "error",
      mode: "waiting",
      lastSyncAt: t0,
      lastError: "The IMAP server at imap.example.com:993 refused the user name or app password.",
      checkedAt: now,
    });
  });

  it("keeps a problem of before until the new session has news", () => {
    const failed: ConnectionStatus = { ...synced, state: "error", lastError: "Nothing answered at imap.example.com:993 (connection refused)." };
    expect(statusOf(watch({}), now, failed)).toMatchObject({ state: "error", lastError: failed.lastError, lastSyncAt: t0, mode: "connecting" });
    expect(statusOf(watch({ mode: "idle", lastSyncAt: now.toISOString() }), now, failed)).toMatchObject({ state: "ok", lastError: null });
  });

  it("says nothing is known of a mailbox never checked", () => {
    const never: ConnectionStatus = { state: "unknown", mode: "stopped", lastSyncAt: null, lastError: null, checkedAt: null };
    expect(statusOf(watch({}), now, never)).toEqual({ ...never, mode: "connecting", checkedAt: now });
  });
});
