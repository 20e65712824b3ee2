/**
 * The email connector at run time: the parse workers, one operations client per mailbox (reused,
 * closed when idle), and the sync sessions the `email.sync` job runs — one per mailbox folder,
 * holding IMAP IDLE (or polling) for `sessionMs`, then returning so the next run (here or in another
 * process sharing the store) takes over. Credentials come from the person's vault at each use.
 */
import { z } from "zod";
import type { Clock } from "../../core/clock.js";
import type { Connections } from "../../core/connections/index.js";
import type { ConnectionId, PersonId } from "../../core/ids.js";
import type { Logger } from "../../core/log/index.js";
import type { Connection, ConnectionStatus, NewConnectionChange } from "../../core/connections/index.js";
import type { Json } from "../../core/json.js";
import type { Store } from "../../core/storage/index.js";
import { arrivalChange } from "./arrivals.js";
import { openImap } from "./imap-connect.js";
import { MailboxClient } from "./mailbox-client.js";
import type { MailParsePool } from "./parse-pool.js";
import { emailSettingsSchema, trustedAuthservIds, type EmailSettings } from "./settings.js";
import { syncMailbox, type MailboxMark, type MailboxSyncStore } from "./sync.js";
import { MailboxWatcher, type WatchStatus } from "./watcher.js";

/** Timings of the sync sessions (from the EMAIL_* settings). */
export interface EmailTimings {
  sessionMs: number;
  watchdogMs: number;
  pollMs: number;
}

/**
 * The `email.sync` jobs as the service schedules them (app/ binds them to the Scheduler, one key per
 * connection). `start` makes the connection's job repeat: each run is one session, and the next run
 * is due while a session still holds the job's lock, so sessions follow each other at once — in this
 * process or, with MongoDB, in whichever picks the job up (a dead process's lock runs out).
 */
export interface SyncJobs {
  start(connectionId: string): Promise<void>;
  /** Whether a job for the connection exists (due, or running). */
  exists(connectionId: string): Promise<boolean>;
  cancel(connectionId: string): Promise<void>;
}

export interface EmailServiceDeps {
  connections: Connections;
  store: Pick<Store, "changes">;
  clock: Clock;
  logger: Logger;
  parser: MailParsePool;
  /** Hands new mail on to the watches (core/runtime ChangeDispatcher). */
  dispatcher: { poke(personId: PersonId): void };
  timings: EmailTimings;
  jobs: SyncJobs;
}

/** A mailbox ready to use: its record, settings and credential. */
export interface Account {
  connection: Connection;
  settings: EmailSettings;
  password: string;
}

const markSchema = z.object({ uidValidity: z.string(), lastUid: z.number().int().min(0), lastReceivedAt: z.string().nullable(), syncedAt: z.string() });

export class EmailService {
  private readonly clients = new Map<string, { key: string; client: MailboxClient }>();
  private readonly sessions = new Map<string, Set<MailboxWatcher>>();
  private stopping = false;

  constructor(readonly deps: EmailServiceDeps) {}

  /** The mailbox of a connection (null when gone, not email, or without a credential). */
  async account(id: ConnectionId | string): Promise<Account | null> {
    const connection = await this.deps.connections.get(id as ConnectionId);
    if (!connection || connection.kind !== "email") return null;
    const settings = emailSettingsSchema.safeParse(connection.settings);
    const password = this.deps.connections.secretOf(connection);
    if (!settings.success || password === null) return null;
    return { connection, settings: settings.data, password };
  }

  /** The person's email accounts that have `capability`, oldest first. */
  async accounts(personId: PersonId, capability: string): Promise<Account[]> {
    const out: Account[] = [];
    for (const c of await this.deps.connections.list({ personId, kind: "email" })) {
      if (!c.capabilities.includes(capability)) continue;
      const a = await this.account(c.id);
      if (a) out.push(a);
    }
    return out;
  }

  /** Every address of the person's mailboxes (mail from them is never answered). */
  async ownAddresses(personId: PersonId): Promise<string[]> {
    const list = await this.deps.connections.list({ personId, kind: "email" });
    return list.map((c) => c.label.toLowerCase());
  }

  /** The operations client of an account (one per connection, rebuilt when its settings change). */
  client(account: Account): MailboxClient {
    const key = JSON.stringify([account.settings, account.password.length, account.connection.updatedAt.getTime()]);
    const cached = this.clients.get(account.connection.id);
    if (cached && cached.key === key) return cached.client;
    if (cached) void cached.client.close().catch(() => undefined);
    const client = new MailboxClient(account.settings, { password: account.password }, { parser: this.deps.parser });
    this.clients.set(account.connection.id, { key, client });
    return client;
  }

  /**
   * One sync session of a mailbox (a run of the `email.sync` job): every watched folder catches up,
   * then waits for new mail for `sessionMs`. Never throws; what goes wrong is the connection's status,
   * in words. A mailbox that is gone or without the read grant is not synced and its job is ended.
   */
  async runSession(connectionId: string): Promise<void> {
    if (this.stopping) return;
    const account = await this.account(connectionId);
    if (!account || !account.connection.capabilities.includes("read")) {
      await this.deps.jobs.cancel(connectionId).catch((err: unknown) => this.deps.logger.warn({ err, connectionId }, "could not end the sync job of a mailbox that may not be read"));
      return;
    }
    await Promise.all(account.settings.watch.map((path) => this.runSync(account, path)));
  }

  /** One folder's session: a watcher until `sessionMs` has passed or the service stops. */
  private async runSync(account: Account, path: string): Promise<void> {
    const { connection, settings, password } = account;
    const { clock, logger, timings } = this.deps;
    const ctx = { connectionId: connection.id, path, authservIds: trustedAuthservIds(settings), ownAddresses: await this.ownAddresses(connection.personId) };
    const watcher = new MailboxWatcher({
      path,
      connect: (onError) => openImap(settings, { password }, { onError: (e) => onError(e.message) }),
      sync: (client) => syncMailbox(client, { mailboxKey: path, path, store: this.syncStore(connection), parser: this.deps.parser, toArrival: (p, f) => arrivalChange(p, f, ctx), now: () => clock.now() }),
      pollMs: timings.pollMs,
      watchdogMs: timings.watchdogMs,
      now: () => clock.now(),
      onStatus: (s) => void this.deps.connections.setStatus(connection.id, statusOf(s, clock.now(), connection.status)).catch(() => undefined),
      log: (event, data) => logger.info({ connectionId: connection.id, ...data }, event),
    });
    const running = this.sessions.get(connection.id) ?? new Set<MailboxWatcher>();
    running.add(watcher);
    this.sessions.set(connection.id, running);
    try {
      await watcher.run(clock.now().getTime() + timings.sessionMs);
    } catch (err) {
      logger.warn({ err, connectionId: connection.id, path }, "email sync session failed");
    } finally {
      running.delete(watcher);
    }
  }

  /**
   * A mailbox was connected, changed or disconnected (core/connections calls this). A new one gets its
   * starting mark at once (mail from now on is new mail), a running session ends (the next one uses
   * the new settings), and its job is scheduled — or cancelled when it is gone or may not be read.
   */
  async changed(id: string, connection: Connection | null): Promise<void> {
    for (const w of this.sessions.get(id) ?? []) w.stop();
    const cached = this.clients.get(id);
    if (cached) {
      this.clients.delete(id);
      await cached.client.close().catch(() => undefined);
    }
    if (!connection || !connection.capabilities.includes("read")) return this.deps.jobs.cancel(id);
    const account = await this.account(id);
    if (account) await this.baseline(account);
    await this.deps.jobs.start(id);
  }

  /** Sets the starting mark of folders never synced (a first pass), so mail arriving from now on is announced. */
  private async baseline(account: Account): Promise<void> {
    const fresh = [];
    for (const path of account.settings.watch) if ((await this.deps.store.changes.readCursor(account.connection.id, path)) === null) fresh.push(path);
    if (fresh.length === 0) return;
    try {
      const client = await openImap(account.settings, { password: account.password });
      try {
        for (const path of fresh) await syncMailbox(client, { mailboxKey: path, path, store: this.syncStore(account.connection), parser: this.deps.parser, toArrival: () => { throw new Error("a first pass announces nothing"); }, now: () => this.deps.clock.now() });
      } finally {
        await client.logout().catch(() => client.close());
      }
    } catch (err) {
      this.deps.logger.info({ err, connectionId: account.connection.id }, "the first sync of a new mailbox runs with its job instead");
    }
  }

  /** Schedules a sync job for every readable mailbox that has none (at start, and after a lost reschedule). */
  async ensureJobs(): Promise<number> {
    let scheduled = 0;
    for (const c of await this.deps.connections.list({ kind: "email" })) {
      if (!c.capabilities.includes("read") || (await this.deps.jobs.exists(c.id))) continue;
      await this.deps.jobs.start(c.id);
      scheduled++;
    }
    return scheduled;
  }

  /** The sync's store: the folder's mark as the cursor, arrivals as connection changes. */
  private syncStore(connection: Connection): MailboxSyncStore<NewConnectionChange> {
    const { store, clock, dispatcher } = this.deps;
    return {
      async readMark(path) {
        const parsed = markSchema.safeParse(await store.changes.readCursor(connection.id, path));
        return parsed.success ? parsed.data : null;
      },
      async commit(path, mark: MailboxMark, arrivals) {
        const recorded = await store.changes.commitChanges({ connectionId: connection.id, personId: connection.personId, source: path, cursor: mark as unknown as Json, changes: arrivals, now: clock.now() });
        if (recorded.length > 0) dispatcher.poke(connection.personId);
      },
    };
  }

  /** Ends the running sync sessions (shutdown: the jobs return, Agenda can drain) and closes the clients. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const set of this.sessions.values()) for (const w of set) w.stop();
    for (const { client } of this.clients.values()) await client.close().catch(() => undefined);
    this.clients.clear();
  }
}

/**
 * The Connections section's view of a watcher's state. Each sync session has a watcher of its own,
 * which knows nothing before its first pass: until it has news (a pass or a failure), the state,
 * last sync and last error of before (`prior`, the status when the session began) still hold, so a
 * new session never shows "never synced" while it connects.
 */
export function statusOf(s: WatchStatus, now: Date, prior: ConnectionStatus): ConnectionStatus {
  if (!s.lastError && !s.lastSyncAt) return { ...prior, mode: s.mode, checkedAt: now };
  return {
    state: s.lastError ? "error" : "ok",
    mode: s.mode,
    lastSyncAt: s.lastSyncAt ? new Date(s.lastSyncAt) : prior.lastSyncAt,
    lastError: s.lastError,
    checkedAt: now,
  };
}
