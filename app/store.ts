/**
 * The store and the scheduler, picked from the settings: SQLite under DATA_DIR with Agenda loaded
 * only when a job must run (the embedded default), or MongoDB with Agenda's MongoDB backend when
 * MONGODB_URI is set (the driver is imported only then). Either store is wrapped by the secret
 * boundary (core/storage/scrubbing.ts) before anything uses it.
 */
import { chmodSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MongoClient } from "mongodb";
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config/index.js";
import type { Logger } from "../core/log/index.js";
import type { Scheduler } from "../core/scheduling/index.js";
import { scrubbingStore, type Store } from "../core/storage/index.js";
import { openSqliteStore } from "../core/storage/sqlite/index.js";
// Agenda itself (jobs/agenda) is imported only when a job needs it.
import { LazyScheduler, sqliteJobsExist } from "../jobs/index.js";

/** The store, the scheduler, and (with MongoDB) the connected client the WhatsApp session backup shares. */
export interface Storage {
  store: Store;
  scheduler: Scheduler;
  mongoClient?: MongoClient;
}

/**
 * DATA_DIR, made if missing and private to this account (0700; its database, vault and key files
 * 0600): it holds the conversation, memory and keys. Resolves to its absolute path.
 */
export function prepareDataDir(config: Config, logger: Logger): string {
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dataDir, 0o700);
    for (const name of readdirSync(dataDir)) {
      if (/\.(db|db-wal|db-shm|json|key)$/.test(name)) chmodSync(join(dataDir, name), 0o600);
    }
  } catch (err) {
    // A directory someone else owns (a mounted volume) is left as is and reported.
    logger.warn({ err, dataDir }, "could not make the data folder private to this account");
  }
  return dataDir;
}

/**
 * Opens the store and makes the scheduler. With MONGODB_URI the connection is checked before
 * anything else starts; throws when the store cannot be opened.
 */
export async function createStorage(config: Config, parts: { dataDir: string; clock: Clock; logger: Logger; scrubDeep: <T>(value: T) => T }): Promise<Storage> {
  const { dataDir, clock, logger } = parts;
  if (config.MONGODB_URI) {
    const { connectMongoStore } = await import("../core/storage/mongo/index.js");
    const mongo = await connectMongoStore(config.MONGODB_URI);
    const scheduler = await (await import("../jobs/agenda/index.js")).createMongoScheduler({ client: mongo.client, logger });
    return { store: scrubbingStore(mongo, parts.scrubDeep), scheduler, mongoClient: mongo.client };
  }
  const store = openSqliteStore({ path: join(dataDir, "familiar.db"), clock });
  const jobsPath = join(dataDir, "jobs.db");
  const scheduler = new LazyScheduler({
    load: async () => (await import("../jobs/agenda/index.js")).createEmbeddedScheduler({ path: jobsPath, logger, soleOwner: true }),
    hasJobs: () => sqliteJobsExist(jobsPath),
    backend: "agenda-sqlite",
    logger,
  });
  // Secrets boundary: audit rows, journal entries and error fields are scrubbed of configured tokens,
  // vault values (every encoding) and token shapes before they are written.
  return { store: scrubbingStore(store, parts.scrubDeep), scheduler };
}
