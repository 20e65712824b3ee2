/**
 * One sync pass against a real Dovecot: the first pass announces nothing old, later passes hand on
 * exactly the new mail, a crash between chunks or before a commit loses nothing and repeats nothing,
 * and a rebuilt mailbox (new UIDVALIDITY) neither re-announces old mail nor misses what came meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rm, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { ImapFlow } from "imapflow";
import { startMailServers, settingsFor, testMail, type MailServers } from "../../helpers/mail/servers.js";
import { MemorySyncStore } from "../../fakes/mail-sync-store.js";
import { waitFor } from "../../helpers/wait.js";
import { openImap, closeImap } from "../../../connectors/email/imap-connect.js";
import { createParsePool } from "../../../connectors/email/parse-pool.js";
import { arrivalKey, syncMailbox, type ServerFacts } from "../../../connectors/email/sync.js";
import type { ParsedMessage } from "../../../connectors/email/message.js";

interface Seen {
  key: string;
  subject: string;
  uid: number;
}
const toArrival = (parsed: ParsedMessage | { unreadable: string }, facts: ServerFacts): Seen =>
  "unreadable" in parsed ? { key: arrivalKey(null, facts), subject: parsed.unreadable, uid: facts.uid } : { key: arrivalKey(parsed.messageId, facts), subject: parsed.subject, uid: facts.uid };

describe("syncMailbox against Dovecot", () => {
  let servers: MailServers;
  let client: ImapFlow;
  const parser = createParsePool();
  beforeAll(async () => {
    servers = await startMailServers({ smtp: false });
  }, 60_000);
  afterAll(async () => {
    if (client) await closeImap(client);
    await parser.close();
    await servers?.close();
  });

  const connect = async () => {
    const [ana] = servers.accounts;
    client = await openImap(settingsFor(servers, ana), { password: ana.password });
    return client;
  };
  const pass = (store: MemorySyncStore<Seen>, extra: { chunkSize?: number; afterCommit?: (n: number) => void } = {}) =>
    syncMailbox(client, { mailboxKey: "ana/INBOX", path: "INBOX", store, parser, toArrival, now: () => new Date(), ...extra });
  const subjects = (store: MemorySyncStore<Seen>) => store.list("ana/INBOX").map((a) => a.subject);

  it("starts at the mailbox's end, then hands on each new message once", async () => {
    const [ana] = servers.accounts;
    for (const s of ["old 1", "old 2", "old 3"]) await servers.deliver(ana.address, testMail(s));
    await connect();
    const store = new MemorySyncStore<Seen>();
    expect(await pass(store)).toMatchObject({ kind: "baseline", offered: 0, mark: { lastUid: 3 } });
    await servers.deliver(ana.address, testMail("new 1"));
    await servers.deliver(ana.address, testMail("new 2"));
    expect(await pass(store)).toMatchObject({ kind: "incremental", offered: 2, mark: { lastUid: 5 } });
    expect(await pass(store)).toMatchObject({ kind: "incremental", offered: 0 });
    expect(subjects(store)).toEqual(["new 1", "new 2"]);
  });

  it("loses and repeats nothing when a pass dies between chunks or before a commit", async () => {
    const [ana] = servers.accounts;
    const store = new MemorySyncStore<Seen>();
    await pass(store);
    for (let i = 1; i <= 5; i++) await servers.deliver(ana.address, testMail(`burst ${i}`));
    await expect(pass(store, { chunkSize: 2, afterCommit: (n) => { if (n === 2) throw new Error("killed"); } })).rejects.toThrow("killed");
    expect(subjects(store)).toEqual(["burst 1", "burst 2"]);
    store.failNextCommit = new Error("killed before the transaction");
    await expect(pass(store, { chunkSize: 2 })).rejects.toThrow("killed before");
    expect(subjects(store)).toEqual(["burst 1", "burst 2"]);
    await pass(store, { chunkSize: 2 });
    expect(subjects(store)).toEqual(["burst 1", "burst 2", "burst 3", "burst 4", "burst 5"]);
  });

  it("after the mailbox is rebuilt (new UIDVALIDITY) announces only what is new", async () => {
    const [ana] = servers.accounts;
    const store = new MemorySyncStore<Seen>();
    await pass(store);
    // INTERNALDATE has whole seconds: keep the earlier tests' mail out of this one's second.
    const second = Math.floor(Date.now() / 1000);
    await waitFor(() => Math.floor(Date.now() / 1000) > second, "the next whole second", { intervalMs: 20 });
    await servers.deliver(ana.address, testMail("before rebuild", { id: "<rebuild-1@outside.test>" }));
    await pass(store);
    const before = await store.readMark("ana/INBOX");
    await closeImap(client);
    await servers.dovecot.stop();
    // Dovecot forgets the mailbox's UIDs: the next SELECT shows a new UIDVALIDITY.
    const box = join(servers.dovecot.options.dir, "mail", ana.address);
    for (const f of await readdir(box)) if (f.startsWith("dovecot")) await rm(join(box, f), { recursive: true, force: true });
    await servers.dovecot.start();
    await servers.deliver(ana.address, testMail("after rebuild", { id: "<rebuild-2@outside.test>" }));
    await connect();
    const report = await pass(store);
    expect(report.kind).toBe("recovered");
    expect(report.mark.uidValidity).not.toBe(before?.uidValidity);
    expect(subjects(store)).toEqual(["before rebuild", "after rebuild"]);
    await servers.deliver(ana.address, testMail("later"));
    expect(await pass(store)).toMatchObject({ kind: "incremental", offered: 1 });
    expect(subjects(store)).toEqual(["before rebuild", "after rebuild", "later"]);
  });
});
