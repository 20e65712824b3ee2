/**
 * Operations on one mailbox account over IMAP — search, read, attachments, drafts, the Sent copy,
 * move and flags — on one session that is opened when needed and closed after `idleCloseMs` unused.
 * Everything a message says comes back parsed by the worker pool (never parsed here). Messages are
 * addressed by {@link MessageRef}: folder, UIDVALIDITY and UID; a ref from before a mailbox rebuild
 * is refused as not found instead of pointing at another message.
 */
import type { ImapFlow, SearchObject } from "imapflow";
import { closeImap, openImap, where } from "./imap-connect.js";
import { EmailError, describeMailError } from "./errors.js";
import type { EmailCredentials, EmailSettings } from "./settings.js";
import type { MailParsePool } from "./parse-pool.js";
import type { ParseOutcome } from "./message.js";
import { structureHasAttachment, type ServerFacts } from "./sync.js";

/** Where a message is. */
export interface MessageRef {
  path: string;
  uidValidity: string;
  uid: number;
}

/** What a search asks the server; text fields match case-insensitively as substrings (IMAP SEARCH). */
export interface MailQuery {
  from?: string;
  to?: string;
  subject?: string;
  text?: string;
  /** Received on or after, ISO date or date-time. */
  since?: string;
  /** Received before. */
  before?: string;
  /** true: unread only; false: read only. */
  unread?: boolean;
  /** true: with an attachment only; false: without. */
  hasAttachment?: boolean;
  /** Folder (default INBOX). */
  path?: string;
}

/** A message fetched from the server: where it is, the server's facts, and the worker's parse. */
export interface FetchedMessage {
  ref: MessageRef;
  facts: ServerFacts;
  parsed: ParseOutcome;
}

/** Special-use folders (RFC 6154). */
export type SpecialUse = "\\Drafts" | "\\Sent" | "\\Archive" | "\\Trash" | "\\Junk";

export interface MailboxClientOptions {
  parser: MailParsePool;
  /** Close the session after this long unused, ms (default 30 s). */
  idleCloseMs?: number;
  /** Largest message fetched whole for search results, bytes (default 1 MB); larger ones are read by headers. */
  searchFetchBytes?: number;
  /** Largest message fetched for reading, bytes (default 25 MB, the parse cap). */
  readFetchBytes?: number;
}

/** Refs as the model sees them are built elsewhere; this checks one for its folder. */
export function sameMailbox(client: ImapFlow, ref: MessageRef): boolean {
  return Boolean(client.mailbox && client.mailbox.path === ref.path && String(client.mailbox.uidValidity) === ref.uidValidity);
}

export class MailboxClient {
  private session: Promise<ImapFlow> | null = null;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly settings: EmailSettings,
    private readonly credentials: EmailCredentials,
    private readonly options: MailboxClientOptions,
  ) {}

  /** Runs `work` with the session's lock on `path` (opened read-write unless `readOnly`). */
  private async inFolder<T>(path: string, readOnly: boolean, work: (client: ImapFlow, uidValidity: string) => Promise<T>): Promise<T> {
    const client = await this.client();
    const wasOpen = Boolean(client.mailbox && client.mailbox.path === path);
    let lock;
    try {
      lock = await client.getMailboxLock(path, { readOnly });
      // A folder already open shows new mail only after the server tells the session (a NOOP):
      // without it a SEARCH misses what arrived since (Dovecot).
      if (wasOpen) await client.noop();
    } catch (err) {
      throw describeMailError(err, "imap", where(this.settings, "imap"), this.credentials.password);
    }
    try {
      if (!client.mailbox) throw new EmailError("mailbox_missing", `The folder ${path} could not be opened.`, true);
      return await work(client, String(client.mailbox.uidValidity));
    } catch (err) {
      throw describeMailError(err, "imap", where(this.settings, "imap"), this.credentials.password);
    } finally {
      lock.release();
      this.armIdleClose();
    }
  }

  private async client(): Promise<ImapFlow> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.session) {
      const existing = await this.session.catch(() => null);
      if (existing && existing.usable) return existing;
    }
    this.session = openImap(this.settings, this.credentials, { socketTimeoutMs: 120_000 });
    const opened = this.session;
    const client = await opened.catch((err: unknown) => {
      if (this.session === opened) this.session = null;
      throw err;
    });
    client.on("close", () => {
      if (this.session === opened) this.session = null;
    });
    return client;
  }

  private armIdleClose(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    // close() catches the logout itself; a throw of client.close() is nothing to act on here.
    this.idleTimer = setTimeout(() => {
      this.close().catch(() => undefined);
    }, this.options.idleCloseMs ?? 30_000);
    this.idleTimer.unref();
  }

  /** Logs out (if a session is open). */
  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const session = this.session;
    this.session = null;
    const client = await session?.catch(() => null);
    if (client) await closeImap(client);
  }

  /** Logs in, opens INBOX and closes: the IMAP half of the Connections page's Test. @throws EmailError */
  async test(): Promise<{ messages: number }> {
    return this.inFolder("INBOX", true, async (client) => ({ messages: client.mailbox ? client.mailbox.exists : 0 }));
  }

  /** The path of a special-use folder, or null when the server has none. */
  async specialFolder(use: SpecialUse): Promise<string | null> {
    const client = await this.client();
    try {
      const list = await client.list();
      return list.find((f) => f.specialUse === use)?.path ?? null;
    } catch (err) {
      throw describeMailError(err, "imap", where(this.settings, "imap"), this.credentials.password);
    } finally {
      this.armIdleClose();
    }
  }

  /**
   * UIDs matching `query`, newest first, at most `limit` (the server searches; `hasAttachment` is
   * checked by BODYSTRUCTURE on the newest candidates).
   */
  async searchUids(query: MailQuery, limit: number): Promise<{ path: string; uidValidity: string; uids: number[] }> {
    const path = query.path ?? "INBOX";
    return this.inFolder(path, true, async (client, uidValidity) => {
      const criteria: SearchObject = {};
      if (query.from) criteria.from = query.from;
      if (query.to) criteria.to = query.to;
      if (query.subject) criteria.subject = query.subject;
      if (query.text) criteria.text = query.text;
      if (query.since) criteria.since = new Date(query.since);
      if (query.before) criteria.before = new Date(query.before);
      if (query.unread !== undefined) criteria.seen = !query.unread;
      if (Object.keys(criteria).length === 0) criteria.all = true;
      const found = await client.search(criteria, { uid: true });
      let uids = (Array.isArray(found) ? found : []).sort((a, b) => b - a);
      if (query.hasAttachment !== undefined) {
        const candidates = uids.slice(0, Math.max(limit * 10, 200));
        const withParts = candidates.length ? await client.fetchAll(candidates.join(","), { uid: true, bodyStructure: true }, { uid: true }) : [];
        const keep = new Set(withParts.filter((m) => structureHasAttachment(m.bodyStructure) === query.hasAttachment).map((m) => m.uid));
        uids = candidates.filter((u) => keep.has(u));
      }
      return { path, uidValidity, uids: uids.slice(0, limit) };
    });
  }

  /**
   * Fetches and parses messages. Messages above `maxBytes` (default: the read cap) are parsed by their
   * header section only. Refs from another UIDVALIDITY are skipped (not found).
   */
  async fetch(refs: readonly MessageRef[], options: { maxBytes?: number } = {}): Promise<FetchedMessage[]> {
    const byPath = new Map<string, MessageRef[]>();
    for (const r of refs) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
    const out: FetchedMessage[] = [];
    const maxBytes = options.maxBytes ?? this.options.readFetchBytes ?? 25 * 1024 * 1024;
    for (const [path, list] of byPath) {
      const got = await this.inFolder(path, true, async (client, uidValidity) => {
        const wanted = list.filter((r) => r.uidValidity === uidValidity).map((r) => r.uid);
        if (wanted.length === 0) return [];
        const meta = await client.fetchAll(wanted.join(","), { uid: true, flags: true, internalDate: true, size: true, bodyStructure: true }, { uid: true });
        const result: FetchedMessage[] = [];
        for (const m of meta) {
          const small = (m.size ?? 0) <= maxBytes;
          const body = await client.fetchOne(String(m.uid), small ? { uid: true, source: true } : { uid: true, headers: true }, { uid: true });
          const raw = body ? (small ? body.source : body.headers) : undefined;
          const facts: ServerFacts = {
            uid: m.uid,
            uidValidity,
            receivedAt: (m.internalDate ? new Date(m.internalDate) : new Date(0)).toISOString(),
            size: m.size ?? 0,
            seen: m.flags?.has("\\Seen") ?? false,
            flagged: m.flags?.has("\\Flagged") ?? false,
            hasAttachments: structureHasAttachment(m.bodyStructure),
          };
          const parsed: ParseOutcome = raw ? await this.options.parser.parse(raw, { headersOnly: !small }) : { ok: false, reason: "could not read this message: the server sent nothing" };
          result.push({ ref: { path, uidValidity, uid: m.uid }, facts, parsed });
        }
        return result;
      });
      out.push(...got);
    }
    return out;
  }

  /** Downloads one attachment part, at most `maxBytes`. @throws EmailError not_found / too_large */
  async attachment(ref: MessageRef, partId: string, maxBytes: number): Promise<Buffer> {
    return this.inFolder(ref.path, true, async (client, uidValidity) => {
      if (uidValidity !== ref.uidValidity) throw new EmailError("not_found", "That message is no longer in the folder.", false);
      const download = await client.download(String(ref.uid), partId, { uid: true, maxBytes: maxBytes + 1 });
      if (!download.content) throw new EmailError("not_found", "That attachment is not in the message.", false);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of download.content as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) throw new EmailError("too_large", `The attachment is larger than ${Math.round(maxBytes / 1048576)} MB.`, false);
        chunks.push(chunk);
      }
      return Buffer.concat(chunks);
    });
  }

  /** Stores a message in `path` (a draft, the Sent copy) with `flags`; returns its ref when the server says. */
  async append(path: string, raw: Buffer, flags: string[]): Promise<MessageRef | null> {
    const client = await this.client();
    try {
      const res = await client.append(path, raw, flags);
      return res && res.uid && res.uidValidity !== undefined ? { path: res.destination, uidValidity: String(res.uidValidity), uid: res.uid } : null;
    } catch (err) {
      throw describeMailError(err, "imap", where(this.settings, "imap"), this.credentials.password);
    } finally {
      this.armIdleClose();
    }
  }

  /** Whether `path` holds a message with this Message-ID (a send already made). */
  async hasMessageId(path: string, messageId: string): Promise<boolean> {
    return this.inFolder(path, true, async (client) => {
      const found = await client.search({ header: { "message-id": messageId } }, { uid: true });
      return Array.isArray(found) && found.length > 0;
    });
  }

  /** Moves a message to `destination`. @throws EmailError not_found */
  async move(ref: MessageRef, destination: string): Promise<void> {
    await this.inFolder(ref.path, false, async (client, uidValidity) => {
      await mustExist(client, ref, uidValidity);
      const res = await client.messageMove(String(ref.uid), destination, { uid: true });
      if (!res) throw new EmailError("not_found", "That message could not be moved (it may be gone).", false);
    });
  }

  /** Sets or clears flags (`\\Seen`, `\\Flagged`, `\\Answered`). @throws EmailError not_found */
  async setFlags(ref: MessageRef, add: string[], remove: string[]): Promise<void> {
    await this.inFolder(ref.path, false, async (client, uidValidity) => {
      await mustExist(client, ref, uidValidity);
      if (add.length) await client.messageFlagsAdd(String(ref.uid), add, { uid: true });
      if (remove.length) await client.messageFlagsRemove(String(ref.uid), remove, { uid: true });
    });
  }
}

/** @throws EmailError not_found when the ref's message is not (or no longer) in its folder. */
async function mustExist(client: ImapFlow, ref: MessageRef, uidValidity: string): Promise<void> {
  const found = uidValidity === ref.uidValidity ? await client.search({ uid: String(ref.uid) }, { uid: true }) : [];
  if (!Array.isArray(found) || !found.includes(ref.uid)) throw new EmailError("not_found", "That message is no longer in the folder.", false);
}
