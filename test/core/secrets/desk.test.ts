import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PersonId } from "../../../core/ids.js";
import { SECRET_LINK_TTL_MS, SecretDesk } from "../../../core/secrets/desk.js";
import { SecretVault } from "../../../core/secrets/vault.js";
import type { SqliteStore } from "../../../core/storage/sqlite/index.js";
import { storeWithPerson } from "../sentinel/helpers.js";
import { Outbound } from "../../../core/outbox/index.js";

const VALUE = "desk-secret-VALUE-991";

describe("SecretDesk: one-time links to store a secret", () => {
  let store: SqliteStore;
  let personId: PersonId;
  let dir: string;
  let vault: SecretVault;
  let now: Date;
  let pokes: number;
  let desk: SecretDesk;

  beforeEach(async () => {
    ({ store, personId } = await storeWithPerson());
    dir = await mkdtemp(join(tmpdir(), "familiar-desk-"));
    vault = await SecretVault.open({ dataDir: dir });
    now = new Date("2026-12-01T10:00:00Z");
    pokes = 0;
    const clock = { now: () => now };
    desk = new SecretDesk({ vault, store, clock, publicUrl: () => "https://familiar.example/", outbound: new Outbound({ store, clock, wake: () => void pokes++ }) });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const tokenOf = (url: string) => url.split("/secret/")[1]!;

  it("stores into the link's person's vault once, tells the chat the name only, audits without the value", async () => {
    const { url } = desk.offer(personId, "API");
    expect(url).toMatch(/^https:\/\/familiar\.example\/secret\/[A-Za-z0-9_-]{43}$/);
    const token = tokenOf(url);
    expect(desk.peek(token)).toEqual({ personId, name: "API" });
    expect(await desk.submit(token, { name: "API", value: VALUE, origins: ["https://api.example.com/v1"] })).toEqual({ ok: true, name: "API", origins: ["https://api.example.com"] });
    expect(vault.substituteSecrets("{{secret:API}}", "https://api.example.com", personId)).toBe(VALUE);
    expect(await desk.submit(token, { name: "API", value: "again-value", origins: ["https://api.example.com"] })).toMatchObject({ ok: false, status: 410 });
    expect(desk.peek(token)).toBeNull();
    const out = await store.outbox.listOutbound(personId, { limit: 10 });
    expect(out.items.map((m) => m.text)).toEqual([expect.stringMatching(/^Stored your secret API/)]);
    expect(pokes).toBe(1);
    const audit = await store.audit.listAudit(personId, { limit: 10 });
    expect(audit.items.map((e) => e.kind)).toContain("secret.stored");
    expect(JSON.stringify([out, audit])).not.toContain(VALUE);
  });

  it("refuses bad input without spending the link, and expires links", async () => {
    const token = tokenOf(desk.offer(personId).url);
    expect(await desk.submit(token, { name: "bad name", value: VALUE, origins: ["https://a.example"] })).toMatchObject({ ok: false, status: 400 });
    expect(await desk.submit(token, { name: "OK", value: VALUE, origins: ["ftp://a.example"] })).toMatchObject({ ok: false, status: 400 });
    expect(await desk.submit(token, { name: "OK", value: "", origins: ["https://a.example"] })).toMatchObject({ ok: false, status: 400 });
    expect(desk.peek(token)).not.toBeNull();
    now = new Date(now.getTime() + SECRET_LINK_TTL_MS);
    expect(desk.peek(token)).toBeNull();
    expect(await desk.submit(token, { name: "OK", value: VALUE, origins: ["https://a.example"] })).toMatchObject({ ok: false, status: 410 });
    expect(await desk.submit("not-a-token", { name: "OK", value: VALUE, origins: ["https://a.example"] })).toMatchObject({ ok: false, status: 410 });
    expect(vault.list()).toEqual([]);
  });
});
