/**
 * `npm run bench -- email`: the email connector against a real Dovecot with a 10,000-message INBOX
 * (written straight into its Maildir, test/helpers/mail/maildir.ts: plain, HTML newsletters, sign-in
 * codes, invoices with a PDF, replies). Emits:
 *
 * - `email.first_sync`: the first pass over the full mailbox (EXAMINE, the newest message; it sets
 *   the mark at the end and announces nothing, so its cost does not grow with the mailbox), with
 *   Dovecot's own first indexing of the 10,000 files timed apart (`server_index_ms`).
 * - `email.full_sync`: a pass that hands on all 10,000 messages (as if all had arrived since the last
 *   pass): headers, flags and structure fetched in chunks of 100, parsed in the two mail workers, the
 *   subject through the one-time-code filter, sender verdicts, every arrival recorded in SQLite with
 *   its mark. Time, messages per second, the process's RSS before and at its peak, heap growth.
 * - `email.incremental_sync`: a pass with nothing new, and one after 20 new mails (LMTP).
 * - `email.search`: what `email_search` does against the server (IMAP SEARCH, then fetching and
 *   parsing the hits, at most 30): by sender, by subject, by words in the body (Dovecot without a
 *   full-text index reads every message), unread with attachment; p50/p99/max.
 * - `email.filter`: the one-time-code filter's throughput on the labelled corpus (mail-filter.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ImapFlow } from "imapflow";
import { arrivalChange } from "../../connectors/email/arrivals.js";
import { closeImap, openImap } from "../../connectors/email/imap-connect.js";
import { MailboxClient, type MailQuery } from "../../connectors/email/mailbox-client.js";
import { createParsePool } from "../../connectors/email/parse-pool.js";
import { syncMailbox, type MailboxMark, type MailboxSyncStore } from "../../connectors/email/sync.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import type { NewConnectionChange } from "../../core/connections/index.js";
import type { Json } from "../../core/json.js";
import { fillMaildir } from "../helpers/mail/maildir.js";
import { settingsFor, startMailServers, testMail } from "../helpers/mail/servers.js";
import { measureFilterThroughput } from "./mail-filter.js";
import { round, spread } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

const MESSAGES = 10_000;
const mb = (bytes: number) => round(bytes / 1024 / 1024);

/** Samples the process's RSS every 50 ms while `work` runs; returns its result and the peak. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  try {
    const value = await work();
    return { value, peak: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

export async function bench(emit: Emit): Promise<void> {
  const servers = await startMailServers({ smtp: false });
  const dir = mkdtempSync(join(tmpdir(), "familiar-bench-email-"));
  const store = openSqliteStore({ path: join(dir, "familiar.db") });
  const parser = createParsePool({ workers: 2 });
  let client: ImapFlow | null = null;
  let ops: MailboxClient | null = null;
  try {
    const [ana] = servers.accounts;
    const settings = settingsFor(servers, ana);
    let t0 = performance.now();
    await fillMaildir(servers.dovecot, ana, MESSAGES);
    const fillMs = performance.now() - t0;

    const person = await store.persons.createPerson({ displayName: "Ana" });
    const connection = await store.connections.createConnection({ personId: person.id, kind: "email", label: ana.address, settings: settings, capabilities: ["read"], source: "person" });
    const ctx = { connectionId: connection.id, path: "INBOX", authservIds: [], ownAddresses: [ana.address] };
    const syncStore: MailboxSyncStore<NewConnectionChange> = {
      readMark: async (path) => (await store.changes.readCursor(connection.id, path)) as MailboxMark | null,
      commit: async (path, mark, arrivals) => void (await store.changes.commitChanges({ connectionId: connection.id, personId: person.id, source: path, cursor: mark as unknown as Json, changes: arrivals, now: new Date() })),
    };
    const pass = () => syncMailbox(client!, { mailboxKey: "INBOX", path: "INBOX", store: syncStore, parser, toArrival: (p, f) => arrivalChange(p, f, ctx), now: () => new Date() });

    // Dovecot reads the 10,000 new files once (its own cost, not Familiar's): a STATUS before timing.
    client = await openImap(settings, { password: ana.password });
    t0 = performance.now();
    await client.status("INBOX", { messages: true });
    const indexMs = performance.now() - t0;
    t0 = performance.now();
    const first = await pass();
    emit({ bench: "email.first_sync", messages: MESSAGES, first_sync_ms: round(performance.now() - t0), announced: first.offered, server_index_ms: round(indexMs), maildir_fill_ms: round(fillMs) });

    // Every message as new: the mark back to the start of this UIDVALIDITY.
    await syncStore.commit("INBOX", { ...first.mark, lastUid: 0, lastReceivedAt: null }, []);
    global.gc?.();
    const rssBefore = process.memoryUsage.rss();
    const heapBefore = process.memoryUsage().heapUsed;
    t0 = performance.now();
    const full = await withPeakRss(pass);
    const fullMs = performance.now() - t0;
    const recorded = await store.changes.latestSeq(person.id);
    emit({
      bench: "email.full_sync",
      messages: full.value.offered,
      recorded,
      full_sync_ms: round(fullMs),
      messages_per_s: round((full.value.offered / fullMs) * 1000),
      rss_before_mb: mb(rssBefore),
      rss_peak_mb: mb(full.peak),
      heap_growth_mb: mb(process.memoryUsage().heapUsed - heapBefore),
    });

    t0 = performance.now();
    await pass();
    const emptyMs = performance.now() - t0;
    for (let i = 0; i < 20; i++) await servers.deliver(ana.address, testMail(`Incremental ${i}`));
    t0 = performance.now();
    const incremental = await pass();
    emit({ bench: "email.incremental_sync", nothing_new_ms: round(emptyMs), new_messages: incremental.offered, twenty_new_ms: round(performance.now() - t0) });
    await closeImap(client);
    client = null;

    ops = new MailboxClient(settings, { password: ana.password }, { parser });
    const queries: [string, MailQuery, number][] = [
      ["from", { from: "sender5@shop5.test" }, 20],
      ["subject", { subject: "Invoice 77" }, 20],
      ["body_text", { text: "shopping with us" }, 5],
      ["unread_attachment", { unread: true, hasAttachment: true }, 20],
    ];
    for (const [name, query, runs] of queries) {
      const times: number[] = [];
      let hits = 0;
      for (let i = 0; i < runs; i++) {
        t0 = performance.now();
        const found = await ops.searchUids(query, 30);
        const fetched = await ops.fetch(found.uids.map((uid) => ({ path: found.path, uidValidity: found.uidValidity, uid })), { maxBytes: 1024 * 1024 });
        times.push(performance.now() - t0);
        hits = fetched.length;
      }
      emit({ bench: "email.search", query: name, runs, hits, ...spread(times, "_ms") });
    }

    const filter = await measureFilterThroughput(2_000);
    emit({ bench: "email.filter", ...filter });
  } finally {
    if (client) await closeImap(client);
    await ops?.close();
    await parser.close();
    await store.close();
    await servers.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
