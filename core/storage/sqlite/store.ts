import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { systemClock, type Clock } from "../../clock.js";
import { StoreUnavailableError } from "../../errors.js";
import type { Store, StoreHealth } from "../index.js";
import { SqliteAccessRepository } from "./roles.js";
import { SqliteApprovalRepository } from "./approval-requests.js";
import { SqliteAuditRepository } from "./audit.js";
import { SqliteContext, mapSqliteError } from "./context.js";
import { SqliteConversationRepository } from "./conversation.js";
import { TxGate } from "./gate.js";
import { SqliteGoalRepository } from "./goals.js";
import { SqliteGrantRepository } from "./grants.js";
import { SqliteHookRepository } from "./hooks.js";
import { SqliteChangeRepository, SqliteConnectionRepository } from "./connections.js";
import { SqliteArtifactRepository } from "./artifacts.js";
import { SqliteInboundRepository } from "./inbound.js";
import { SqliteJournalRepository } from "./journal.js";
import { SqliteLocalMailboxRepository } from "./local-mailbox.js";
import { SqliteMemoryRepository } from "./memory.js";
import { type Migration, type MigrationReport, migrate, migrations } from "./migrations.js";
import { SqliteNotificationRepository } from "./notifications.js";
import { SqliteOutboxRepository } from "./outbox.js";
import { SqlitePersonRepository } from "./persons.js";
import { SqliteSentinelStateRepository } from "./sentinel-state.js";
import { SqliteTaskRepository } from "./tasks.js";
import { SqliteModelUsageRepository } from "./usage.js";
import { SqliteHookEventRepository } from "./hook-events.js";

/** Where the store lives: a file path (created with its parent directory) or a connection you opened. */
export type SqliteStoreOptions = ({ path: string } | { db: Database.Database }) & {
  /** How long a statement waits for another process's write lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** Schema history to apply (default: Familiar's own `migrations`); tests pass extended lists. */
  migrations?: readonly Migration[];
  /** Clock stamping records (default: the system clock). */
  clock?: Clock;
};

/** The SQLite implementation of every repository port, on one better-sqlite3 connection. */
export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly supportsTransactions = true;
  readonly persons: SqlitePersonRepository;
  readonly conversation: SqliteConversationRepository;
  readonly goals: SqliteGoalRepository;
  readonly tasks: SqliteTaskRepository;
  readonly journal: SqliteJournalRepository;
  readonly memory: SqliteMemoryRepository;
  readonly grants: SqliteGrantRepository;
  readonly approvals: SqliteApprovalRepository;
  readonly sentinel: SqliteSentinelStateRepository;
  readonly access: SqliteAccessRepository;
  readonly audit: SqliteAuditRepository;
  readonly outbox: SqliteOutboxRepository;
  readonly inbound: SqliteInboundRepository;
  readonly notifications: SqliteNotificationRepository;
  readonly localMailbox: SqliteLocalMailboxRepository;
  readonly hooks: SqliteHookRepository;
  readonly connections: SqliteConnectionRepository;
  readonly changes: SqliteChangeRepository;
  readonly usage: SqliteModelUsageRepository;
  readonly hookEvents: SqliteHookEventRepository;
  readonly artifacts: SqliteArtifactRepository;
  private readonly ctx: SqliteContext;

  /** Use `openSqliteStore`; the constructor expects a connection already configured and migrated. */
  constructor(
    readonly db: Database.Database,
    /** What opening this store migrated. */
    readonly migration: MigrationReport,
    private readonly ownsDb: boolean,
    clock: Clock = systemClock,
  ) {
    this.ctx = new SqliteContext(db, new TxGate(), clock);
    this.persons = new SqlitePersonRepository(this.ctx);
    this.conversation = new SqliteConversationRepository(this.ctx);
    this.goals = new SqliteGoalRepository(this.ctx);
    this.tasks = new SqliteTaskRepository(this.ctx);
    this.journal = new SqliteJournalRepository(this.ctx);
    this.memory = new SqliteMemoryRepository(this.ctx);
    this.grants = new SqliteGrantRepository(this.ctx);
    this.approvals = new SqliteApprovalRepository(this.ctx);
    this.sentinel = new SqliteSentinelStateRepository(this.ctx);
    this.access = new SqliteAccessRepository(this.ctx);
    this.audit = new SqliteAuditRepository(this.ctx);
    this.outbox = new SqliteOutboxRepository(this.ctx);
    this.inbound = new SqliteInboundRepository(this.ctx);
    this.notifications = new SqliteNotificationRepository(this.ctx);
    this.localMailbox = new SqliteLocalMailboxRepository(this.ctx);
    this.hooks = new SqliteHookRepository(this.ctx);
    this.connections = new SqliteConnectionRepository(this.ctx);
    this.changes = new SqliteChangeRepository(this.ctx);
    this.usage = new SqliteModelUsageRepository(this.ctx);
    this.hookEvents = new SqliteHookEventRepository(this.ctx);
    this.artifacts = new SqliteArtifactRepository(this.ctx);
  }

  /**
   * Runs `fn` in one write transaction (`BEGIN IMMEDIATE` … `COMMIT`, or `ROLLBACK` and rethrow when
   * `fn` throws). While it is open, store calls from outside `fn` wait for it to end, so they are
   * neither part of it nor rolled back with it; calls made inside `fn` (followed through
   * AsyncLocalStorage) run in it. A nested `transaction` is a savepoint: its failure undoes only its
   * own writes if the caller catches the error. Keep `fn` short: it holds the file's write lock.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    const sql = (statement: string) => {
      try {
        this.db.exec(statement);
      } catch (error) {
        throw mapSqliteError(error);
      }
    };
    return this.ctx.gate.transaction(fn, {
      begin: (depth) => sql(depth === 1 ? "BEGIN IMMEDIATE" : `SAVEPOINT familiar_tx_${depth}`),
      commit: (depth) => {
        if (depth > 1) return sql(`RELEASE familiar_tx_${depth}`);
        try {
          sql("COMMIT");
        } catch (error) {
          if (this.db.inTransaction) this.db.exec("ROLLBACK");
          throw error;
        }
      },
      rollback: (depth) => {
        if (depth > 1) {
          sql(`ROLLBACK TO familiar_tx_${depth}`);
          sql(`RELEASE familiar_tx_${depth}`);
        } else if (this.db.inTransaction) {
          sql("ROLLBACK");
        }
      },
    });
  }

  /** Runs `SELECT 1`; reports `ok: false` with the reason instead of throwing. */
  async health(): Promise<StoreHealth> {
    try {
      const one = await this.ctx.run(() => this.ctx.stmt("SELECT 1").pluck().get());
      return one === 1 ? { ok: true, kind: "sqlite" } : { ok: false, kind: "sqlite", detail: "SELECT 1 returned an unexpected value" };
    } catch (error) {
      return { ok: false, kind: "sqlite", detail: (error as Error).message };
    }
  }

  /** Closes the connection if `openSqliteStore` opened it (a connection passed in stays open). Idempotent. */
  async close(): Promise<void> {
    if (this.ownsDb && this.db.open) {
      await this.ctx.gate.run(() => this.db.close());
    }
  }
}

/**
 * Opens (creating if needed) a SQLite store and migrates it to the current schema. Sets WAL
 * journaling, `busy_timeout`, `foreign_keys = ON` and `synchronous = NORMAL` (durable across process
 * crashes; WAL loses at most the last transactions on power loss).
 *
 * @example const store = openSqliteStore({ path: join(DATA_DIR, "familiar.db") });
 * @throws StoreUnavailableError when the file cannot be opened or a migration fails.
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  let db: Database.Database;
  const ownsDb = "path" in options;
  try {
    if ("path" in options) {
      if (options.path !== ":memory:") mkdirSync(dirname(options.path), { recursive: true });
      db = new Database(options.path);
    } else {
      db = options.db;
    }
  } catch (error) {
    const where = "path" in options ? options.path : "(connection)";
    throw new StoreUnavailableError(`cannot open SQLite database ${where}: ${(error as Error).message}`, { cause: error });
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("foreign_keys = ON");
    db.pragma("synchronous = NORMAL");
    const clock = options.clock ?? systemClock;
    const report = migrate(db, options.migrations ?? migrations, () => clock.now().getTime());
    return new SqliteStore(db, report, ownsDb, clock);
  } catch (error) {
    if (ownsDb) db.close();
    throw mapSqliteError(error);
  }
}
