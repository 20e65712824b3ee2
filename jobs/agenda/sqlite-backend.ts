/**
 * Agenda backend on SQLite (better-sqlite3) for embedded mode: one job table in a database file
 * under DATA_DIR, shareable by several processes. Pair it with Agenda's
 * `InMemoryNotificationChannel` so jobs saved in this process start within milliseconds; other
 * processes on the same file pick jobs up on their `processEvery` scan.
 */
import Database from "better-sqlite3";
import type BetterSqlite3 from "better-sqlite3";
import type { AgendaBackend, NotificationChannel } from "agenda";
import { ValidationError } from "../../core/errors.js";
import { SqliteJobRepository } from "./sqlite/repository.js";

export { SqliteJobRepository } from "./sqlite/repository.js";

/** Where the jobs live: a file path (the backend opens and closes it) or an open connection. */
export type SqliteBackendConfig = (
  | {
      /** Database file; created if missing. Opened in WAL mode with a busy timeout. */
      path: string;
      db?: never;
    }
  | {
      /** A connection the caller owns; the backend never closes it or changes its pragmas. */
      db: BetterSqlite3.Database;
      path?: never;
    }
) & {
  /** Job table name (default `agenda_jobs`): letters, digits and `_`, not starting with a digit. */
  tableName?: string;
  /** How long a statement waits for another process's write lock, in ms (default 5000; owned connections only). */
  busyTimeoutMs?: number;
  /** Notification channel exposed to Agenda, e.g. `new InMemoryNotificationChannel()`. */
  notificationChannel?: NotificationChannel;
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `AgendaBackend` storing jobs in SQLite.
 *
 * @example
 * const backend = new SqliteBackend({ path: "data/jobs.db", notificationChannel: new InMemoryNotificationChannel() });
 * const agenda = new Agenda({ backend });
 *
 * @throws ValidationError for a table name that is not a plain identifier; better-sqlite3's
 *   SqliteError when the file cannot be opened (thrown here, before Agenda's constructor runs
 *   `connect()`, whose rejection Agenda would leave unhandled).
 */
export class SqliteBackend implements AgendaBackend {
  readonly name = "SQLite";
  readonly repository: SqliteJobRepository;
  readonly ownsConnection: boolean;
  readonly notificationChannel: NotificationChannel | undefined;
  /** No persistent job log: Agenda's `logging` option is optional and not used by Familiar. */
  readonly logger = undefined;

  constructor(config: SqliteBackendConfig) {
    const tableName = config.tableName ?? "agenda_jobs";
    if (!IDENTIFIER.test(tableName)) {
      throw new ValidationError(`SQLite job table name ${JSON.stringify(tableName)} is invalid: use letters, digits and _`);
    }
    this.notificationChannel = config.notificationChannel;
    if (config.db) {
      const db = config.db;
      this.ownsConnection = false;
      this.repository = new SqliteJobRepository({ open: () => db, ownsConnection: false, tableName });
    } else if (typeof config.path === "string" && config.path.length > 0) {
      const path = config.path;
      const busyTimeoutMs = config.busyTimeoutMs ?? 5000;
      this.ownsConnection = true;
      this.repository = new SqliteJobRepository({
        open: () => {
          const db = new Database(path);
          db.pragma("journal_mode = WAL");
          db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
          db.pragma("synchronous = NORMAL");
          return db;
        },
        ownsConnection: true,
        tableName,
      });
    } else {
      throw new ValidationError("SqliteBackend needs either { path } or { db }");
    }
  }

  /** Re-opens the database after `disconnect` (the first connection is opened by the constructor). */
  async connect(): Promise<void> {
    await this.repository.connect();
  }

  /** Closes the database file if this backend opened it. */
  async disconnect(): Promise<void> {
    await this.repository.disconnect();
  }
}
