/**
 * One sync pass over one mailbox: hand on every message that arrived since the last pass, exactly
 * once, across restarts and kills.
 *
 * The mailbox's place is its **mark**: the UIDVALIDITY and the highest UID handed on (RFC 3501
 * §2.3.1.1: UIDs only mean something under one UIDVALIDITY, and new mail always gets a higher UID).
 * - First pass: the mark starts at UIDNEXT − 1 — mail already there is not "new" and is not announced.
 * - Later passes: UIDs above the mark are fetched (headers, flags, size, structure — never bodies)
 *   in chunks, oldest first; each chunk's arrivals and the advanced mark are committed together by
 *   the store, so a kill before a commit re-fetches that chunk and a kill after it never repeats it.
 * - A changed UIDVALIDITY (the mailbox was rebuilt): every message the server received at or after
 *   the newest one handed on (INTERNALDATE, the server's own clock) is offered again; the store drops
 *   arrivals whose key (the Message-ID) it already holds, so nothing is announced twice and nothing
 *   that arrived meanwhile is missed.
 */
import type { ImapFlow, MessageStructureObject } from "imapflow";
import type { MailParsePool } from "./parse-pool.js";
import type { ParsedMessage } from "./message.js";

/** Where a mailbox stands. `uidValidity` is a decimal string (it is a 32-bit unsigned number). */
export interface MailboxMark {
  uidValidity: string;
  /** Highest UID already handed on; 0 when none. */
  lastUid: number;
  /** INTERNALDATE of the newest message handed on or already there at the start, ISO 8601; null when none. */
  lastReceivedAt: string | null;
  /** When the last pass committed, ISO 8601. */
  syncedAt: string;
}

/** What the IMAP server says about a message besides its headers. */
export interface ServerFacts {
  uid: number;
  uidValidity: string;
  /** INTERNALDATE, ISO 8601. */
  receivedAt: string;
  size: number;
  seen: boolean;
  flagged: boolean;
  /** Some part is an attachment (by BODYSTRUCTURE: disposition attachment, or a named non-text part). */
  hasAttachments: boolean;
}

/**
 * The store side of sync: the mark, and an atomic commit. `commit` must record the arrivals — skipping
 * any whose `key` it already holds for this mailbox — and move the mark in one transaction.
 * `A` is what the store keeps per arrival (built by {@link SyncOptions.toArrival}).
 */
export interface MailboxSyncStore<A extends { key: string }> {
  readMark(mailbox: string): Promise<MailboxMark | null>;
  commit(mailbox: string, mark: MailboxMark, arrivals: readonly A[]): Promise<void>;
}

export interface SyncOptions<A extends { key: string }> {
  /** The store's name for this mailbox (connection and folder), e.g. `conn_1/INBOX`. */
  mailboxKey: string;
  /** IMAP folder path. */
  path: string;
  store: MailboxSyncStore<A>;
  parser: MailParsePool;
  /**
   * Builds what is kept of a new message from its parsed header section (or the reason it could not
   * be read) and the server's facts. This is where the one-time-code filter applies to the subject.
   */
  toArrival(parsed: ParsedMessage | { unreadable: string }, facts: ServerFacts): A;
  now: () => Date;
  /** Messages fetched and committed together (default 100). */
  chunkSize?: number;
  /** Called after each committed chunk (tests use it to crash mid-sync). */
  afterCommit?: (committed: number) => void | Promise<void>;
}

export interface SyncReport {
  /** "baseline" on the first pass, "recovered" after a UIDVALIDITY change, else "incremental". */
  kind: "baseline" | "incremental" | "recovered";
  /** Messages handed to the store (before its de-duplication). */
  offered: number;
  mark: MailboxMark;
}

/** Stable key of a message: its Message-ID, or its UID under its UIDVALIDITY when it has none. */
export function arrivalKey(messageId: string | null, facts: Pick<ServerFacts, "uid" | "uidValidity">): string {
  const id = messageId?.trim();
  return id ? `mid:${id.toLowerCase()}` : `uid:${facts.uidValidity}/${facts.uid}`;
}

/** Whether a BODYSTRUCTURE has a part that is an attachment. */
export function structureHasAttachment(node: MessageStructureObject | undefined): boolean {
  if (!node) return false;
  if (node.childNodes?.length) return node.childNodes.some(structureHasAttachment);
  if ((node.disposition ?? "").toLowerCase() === "attachment") return true;
  const named = node.dispositionParameters?.filename ?? node.parameters?.name;
  const type = node.type.toLowerCase();
  return Boolean(named) && !type.startsWith("text/") && !(type.startsWith("image/") && (node.disposition ?? "").toLowerCase() === "inline");
}

/**
 * Runs one pass. The client must be connected; the pass takes the mailbox lock itself (EXAMINE:
 * read-only, nothing is marked seen). @throws what imapflow throws (the caller reconnects)
 */
export async function syncMailbox<A extends { key: string }>(client: ImapFlow, options: SyncOptions<A>): Promise<SyncReport> {
  const lock = await client.getMailboxLock(options.path, { readOnly: true });
  try {
    // A fresh EXAMINE each pass: UIDVALIDITY and UIDNEXT as they are now, not as first selected.
    const box = await client.mailboxOpen(options.path, { readOnly: true });
    const uidValidity = String(box.uidValidity);
    const mark = await options.store.readMark(options.mailboxKey);
    const stamp = () => options.now().toISOString();
    if (!mark) {
      const newest = box.exists > 0 ? await client.fetchOne("*", { uid: true, internalDate: true }) : false;
      const first: MailboxMark = { uidValidity, lastUid: Math.max(0, box.uidNext - 1), lastReceivedAt: newest && newest.internalDate ? new Date(newest.internalDate).toISOString() : null, syncedAt: stamp() };
      await options.store.commit(options.mailboxKey, first, []);
      return { kind: "baseline", offered: 0, mark: first };
    }
    const recovering = mark.uidValidity !== uidValidity;
    let uids: number[];
    const notBefore = recovering && mark.lastReceivedAt ? Date.parse(mark.lastReceivedAt) : 0;
    if (recovering) {
      const found = box.exists === 0 ? [] : await client.search(notBefore ? { since: new Date(notBefore) } : { all: true }, { uid: true });
      uids = Array.isArray(found) ? found : [];
    } else {
      const found = box.exists === 0 ? [] : await client.search({ uid: `${mark.lastUid + 1}:*` }, { uid: true });
      uids = (Array.isArray(found) ? found : []).filter((u) => u > mark.lastUid);
    }
    // While recovering, chunks are committed under the old mark: a kill mid-recovery starts the
    // recovery again (the store's key check drops what was already handed on).
    let current: MailboxMark = mark;
    let newest = mark.lastReceivedAt;
    let offered = 0;
    const size = options.chunkSize ?? 100;
    for (let i = 0; i < uids.length; i += size) {
      const chunk = uids.slice(i, i + size);
      const { arrivals, latest } = await fetchChunk(client, chunk, uidValidity, notBefore, options);
      if (latest && (!newest || latest > newest)) newest = latest;
      current = recovering ? mark : { uidValidity, lastUid: chunk[chunk.length - 1]!, lastReceivedAt: newest, syncedAt: stamp() };
      await options.store.commit(options.mailboxKey, current, arrivals);
      offered += arrivals.length;
      await options.afterCommit?.(offered);
    }
    if (recovering) {
      current = { uidValidity, lastUid: Math.max(box.uidNext - 1, uids[uids.length - 1] ?? 0, 0), lastReceivedAt: newest, syncedAt: stamp() };
      await options.store.commit(options.mailboxKey, current, []);
    } else if (uids.length === 0) {
      current = { ...mark, syncedAt: stamp() };
      await options.store.commit(options.mailboxKey, current, []);
    }
    return { kind: recovering ? "recovered" : "incremental", offered, mark: current };
  } finally {
    lock.release();
  }
}

async function fetchChunk<A extends { key: string }>(client: ImapFlow, chunk: number[], uidValidity: string, notBefore: number, options: SyncOptions<A>): Promise<{ arrivals: A[]; latest: string | null }> {
  const fetched = await client.fetchAll(chunk.join(","), { uid: true, flags: true, internalDate: true, size: true, bodyStructure: true, headers: true }, { uid: true });
  fetched.sort((a, b) => a.uid - b.uid);
  const arrivals: A[] = [];
  let latest: string | null = null;
  for (const m of fetched) {
    const received = m.internalDate ? new Date(m.internalDate) : options.now();
    if (!latest || received.toISOString() > latest) latest = received.toISOString();
    if (notBefore && received.getTime() < notBefore) continue;
    const facts: ServerFacts = {
      uid: m.uid,
      uidValidity,
      receivedAt: received.toISOString(),
      size: m.size ?? 0,
      seen: m.flags?.has("\\Seen") ?? false,
      flagged: m.flags?.has("\\Flagged") ?? false,
      hasAttachments: structureHasAttachment(m.bodyStructure),
    };
    const parsed = m.headers ? await options.parser.parse(m.headers, { headersOnly: true }) : { ok: false as const, reason: "could not read this message: the server sent no headers" };
    arrivals.push(options.toArrival(parsed.ok ? parsed.message : { unreadable: parsed.reason }, facts));
  }
  return { arrivals, latest };
}
