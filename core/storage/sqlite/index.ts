/**
 * SQLite store adapter (better-sqlite3): Familiar's embedded default under `DATA_DIR`.
 *
 * @example
 *   import { openSqliteStore } from "./core/storage/sqlite/index.js";
 *   const store = openSqliteStore({ path: "data/familiar.db" });
 *   await store.transaction(async () => { … });
 *   await store.close();
 */
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from "./store.js";
export { migrate, migrations, type Migration, type MigrationReport } from "./migrations.js";
export { ftsQuery } from "./memory.js";
