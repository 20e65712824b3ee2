/**
 * Ready-made schedulers: embedded (SQLite file + in-process notifications) and MongoDB.
 */
import { Agenda, InMemoryNotificationChannel, type AgendaBackend } from "agenda";
import type { MongoClient } from "mongodb";
import type BetterSqlite3 from "better-sqlite3";
import { StoreUnavailableError } from "../../core/errors.js";
import type { Logger } from "../../core/log/index.js";
import { DueTimes, recordDueTimes } from "./due-times.js";
import { AgendaScheduler } from "./scheduler.js";
import { SqliteBackend } from "./sqlite-backend.js";

/** Tuning shared by both factories. */
export interface SchedulerTuning {
  logger?: Logger;
  /** Name of this worker, stored as `lastModifiedBy` on the jobs it touches. */
  workerName?: string;
  /**
   * How often the database is scanned for due jobs, in ms (Agenda default 5000). Jobs saved by
   * another process start within this delay; a repeat interval shorter than it is stretched to it.
   */
  processEveryMs?: number;
  /** Default lock lifetime, in ms (Agenda default 600000): a dead worker's job is retaken after it. */
  lockLifetimeMs?: number;
  /** Maximum jobs running at once in this process (Agenda default 20). */
  maxConcurrency?: number;
  /** Clock for first-run computation (tests). */
  now?: () => Date;
}

/**
 * Connects the backend (errors surface here), then builds Agenda on it. Agenda's constructor calls
 * `connect()` again without a catch; the wrapper returns the memoized, already resolved connect.
 */
async function build(
  backend: AgendaBackend,
  tuning: SchedulerTuning,
  onConnectError: (error: unknown) => Error,
): Promise<AgendaScheduler> {
  const dueTimes = new DueTimes();
  const wrapped = recordDueTimes(backend, dueTimes);
  try {
    await wrapped.connect();
  } catch (error) {
    throw onConnectError(error);
  }
  const agenda = new Agenda({
    backend: wrapped,
    ...(tuning.workerName ? { name: tuning.workerName } : {}),
    ...(tuning.processEveryMs ? { processEvery: tuning.processEveryMs } : {}),
    ...(tuning.lockLifetimeMs ? { defaultLockLifetime: tuning.lockLifetimeMs } : {}),
    ...(tuning.maxConcurrency ? { maxConcurrency: tuning.maxConcurrency } : {}),
  });
  await agenda.ready;
  return new AgendaScheduler(agenda, {
    backend: backend.name,
    dueTimes,
    ownsConnection: backend.ownsConnection ?? true,
    disconnect: () => wrapped.disconnect(),
    ...(tuning.logger ? { logger: tuning.logger } : {}),
    ...(tuning.now ? { now: tuning.now } : {}),
  });
}

/**
 * Embedded scheduler: jobs in a SQLite file (or a connection you own) with Agenda's
 * `InMemoryNotificationChannel`, so a job saved in this process starts within milliseconds.
 * Other processes sharing the file see new jobs on their next scan (`processEveryMs`).
 *
 * @throws ValidationError for a bad table name; better-sqlite3's SqliteError if the file cannot be opened.
 */
export async function createEmbeddedScheduler(
  options: ({ path: string; db?: never } | { db: BetterSqlite3.Database; path?: never }) &
    SchedulerTuning & {
      tableName?: string;
      /** This process is the only one using the file (embedded mode): locks left at start belong to dead processes and are released. */
      soleOwner?: boolean;
    },
): Promise<AgendaScheduler> {
  const backend = new SqliteBackend({
    ...(options.db ? { db: options.db } : { path: options.path }),
    ...(options.tableName ? { tableName: options.tableName } : {}),
    notificationChannel: new InMemoryNotificationChannel(),
  });
  const scheduler = await build(backend, options, (error) =>
    error instanceof Error ? error : new StoreUnavailableError(`SQLite scheduler could not open its job table: ${String(error)}`, { cause: error }),
  );
  if (options.soleOwner) {
    const released = backend.repository.releaseAllLocks();
    if (released > 0) options.logger?.info({ released }, "released job locks left by a previous process");
  }
  return scheduler;
}

/**
 * MongoDB scheduler on a client you already connected (`await client.connect()`); the client is
 * never closed here. Jobs go to `collection` (default `agendaJobs`) of `dbName` (default: the
 * database of the connection string). Polling only: new jobs start within `processEveryMs`.
 *
 * @throws StoreUnavailableError when the server does not answer a ping or the job index cannot be created.
 */
export async function createMongoScheduler(
  options: { client: MongoClient; dbName?: string; collection?: string } & SchedulerTuning,
): Promise<AgendaScheduler> {
  const db = options.client.db(options.dbName);
  try {
    await db.command({ ping: 1 });
  } catch (error) {
    throw new StoreUnavailableError(`MongoDB did not answer a ping for the scheduler (database ${db.databaseName}): connect the client first and check MONGODB_URI`, { cause: error });
  }
  // Loaded only in MongoDB mode, so the embedded default never pays for the driver.
  const { MongoBackend } = await import("@agendajs/mongo-backend");
  const backend = new MongoBackend({ mongo: db, ...(options.collection ? { collection: options.collection } : {}) });
  return build(
    backend,
    options,
    (error) => new StoreUnavailableError(`MongoDB scheduler could not prepare its job collection in ${db.databaseName}: ${String(error)}`, { cause: error }),
  );
}
