/**
 * A connection's state in plain words, the same in the web app's Connections section and in the
 * chat's `/connect` list: whether it works, what its sync is doing (for a mailbox: IMAP IDLE alive
 * or polling), and the last problem as the connector put it (never a credential: the store scrubs
 * status errors).
 */
import type { Connection } from "./records.js";

/** The words of {@link describeStatus}. */
export interface StatusWords {
  /** `connected`, `problem`, `connecting` or `not checked yet`. */
  state: "connected" | "problem" | "connecting" | "not checked yet";
  /** What the sync is doing, one sentence. */
  sync: string;
}

/** Describes `connection`'s status (mode names: ConnectionStatus in records.ts). */
export function describeStatus(connection: Pick<Connection, "kind" | "capabilities" | "status">): StatusWords {
  const s = connection.status;
  const state = s.state === "ok" ? "connected" : s.state === "error" ? "problem" : s.mode === "connecting" ? "connecting" : "not checked yet";
  return { state, sync: syncWords(connection) };
}

function syncWords({ kind, capabilities, status }: Pick<Connection, "kind" | "capabilities" | "status">): string {
  if (!capabilities.includes("read")) return "Not syncing: Read is not granted.";
  const mail = kind === "email";
  switch (status.mode) {
    case "idle":
      return "IMAP IDLE alive: new mail is noticed as it arrives (and checked again every few minutes in case IDLE goes quiet).";
    case "polling":
      return mail ? "Polling: the server offers no IMAP IDLE, so Familiar checks for new mail regularly." : "Synced on a schedule.";
    case "connecting":
      return "Connecting…";
    case "waiting":
      return "Reconnecting after a failure: waiting a little before the next try.";
    default:
      return status.lastSyncAt ? "Between sync sessions: the next one starts shortly." : "Waiting for its first sync.";
  }
}
