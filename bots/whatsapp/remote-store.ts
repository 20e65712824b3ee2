import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { GridFSBucket, type MongoClient, type ObjectId } from "mongodb";
import type { Store as WwebjsStore } from "whatsapp-web.js";
import type { Logger } from "../../core/log/index.js";

/**
 * The WhatsApp session backup for whatsapp-web.js `RemoteAuth`, kept in MongoDB GridFS.
 *
 * What RemoteAuth (whatsapp-web.js 1.34.7, `src/authStrategies/RemoteAuth.js`) does with its store,
 * `dataPath` being `path.resolve(options.dataPath)` and `session` being `RemoteAuth-<clientId>`:
 * - `sessionExists({ session })` at start (`extractRemoteSession`), after `ready` (`afterAuthReady`,
 *   not awaited by `Client`) and before a logout deletes the backup.
 * - `save({ session })` right after it zipped the profile to `<dataPath>/<session>.zip`; it deletes that
 *   zip when `save` settles. Called from a `setInterval` callback: a rejection there is unhandled.
 * - `extract({ session, path })` with `path` = `<dataPath>/<session>.zip`, only when `sessionExists`
 *   said yes, from `beforeBrowserInitialized` (awaited by `Client.initialize`, and again after a logout
 *   from a page event nobody awaits). It then reads exactly `path` with `fs.createReadStream` piped into
 *   unzipper with no 'error' listener on the read stream: a missing file is an uncaught exception.
 * - `delete({ session })` on logout and on a disconnect, from page callbacks nobody awaits.
 *
 * So `save` must read the zip from `<dataPath>`, not from the working directory: `wwebjs-mongo` reads
 * `<session>.zip` relative to `process.cwd()` and crashes the process with that uncaught ENOENT unless
 * the two coincide. Here `sessionExists`, `save` and `delete` never reject (they log); `extract` rejects
 * instead of leaving no file, and is reached only where the rejection is awaited (see its comment).
 */

/** The store contract of `RemoteAuth`, with the argument shapes it passes. */
export interface RemoteAuthStore {
  sessionExists(options: { session: string }): Promise<boolean>;
  save(options: { session: string }): Promise<void>;
  extract(options: { session: string; path: string }): Promise<void>;
  delete(options: { session: string }): Promise<void>;
}

/** Compile-time proof that our store satisfies whatsapp-web.js's own `Store` typing. */
const _storeSatisfiesWwebjs: WwebjsStore = null as unknown as RemoteAuthStore;
void _storeSatisfiesWwebjs;

/** A stored backup as GridFS describes it (a subset of the driver's `GridFSFile`). */
export interface SessionFile {
  _id: ObjectId;
  filename: string;
  /** Bytes. */
  length: number;
  uploadDate: Date;
}

/**
 * The four GridFS operations the store uses. The driver's `GridFSBucket` satisfies it (proved below);
 * tests pass a fake. `delete` rejects when no file has the id (after removing orphaned chunks).
 */
export interface SessionBucket {
  openUploadStream(filename: string, options?: { metadata?: Record<string, unknown> }): Writable & { readonly id: ObjectId };
  openDownloadStream(id: ObjectId): Readable;
  find(filter: { filename: string }, options?: { sort?: Record<string, 1 | -1> }): { toArray(): Promise<SessionFile[]> };
  delete(id: ObjectId): Promise<void>;
}

/** Compile-time proof that the driver's `GridFSBucket` satisfies `SessionBucket`. */
const _bucketSatisfiesPort: SessionBucket = null as unknown as GridFSBucket;
void _bucketSatisfiesPort;

/** The GridFS bucket name: collections `whatsapp_sessions.files` and `whatsapp_sessions.chunks`. */
export const SESSION_BUCKET_NAME = "whatsapp_sessions";

/** The `clientId` Familiar gives RemoteAuth; RemoteAuth allows only `[-_\w]+`. */
export const REMOTE_AUTH_CLIENT_ID = "familiar";

/** RemoteAuth's session name (its rule: `RemoteAuth-<clientId>`, or `RemoteAuth` without a client id). */
export function remoteSessionName(clientId: string | undefined = REMOTE_AUTH_CLIENT_ID): string {
  return clientId ? `RemoteAuth-${clientId}` : "RemoteAuth";
}

/**
 * WhatsApp session backups in GridFS, one file name per session (`<session>.zip`), newest only.
 *
 * @example
 *   const sessions = createGridFsSessionStore({ client: mongo.client, dbName: "familiar", logger });
 *   new RemoteAuth({ store: sessions.at(dataPath), dataPath, clientId, backupSyncIntervalMs: 300_000 });
 */
export class GridFsSessionStore {
  /** Sessions deleted by this process (even if the database refused): absent until the next save. */
  private readonly deleted = new Set<string>();
  /** The database's last answer per session, used when it cannot answer. */
  private readonly known = new Map<string, boolean>();

  constructor(
    private readonly bucket: SessionBucket,
    private readonly logger: Logger,
  ) {}

  /**
   * The RemoteAuth store for a client whose RemoteAuth `dataPath` is `dataPath`: `save` reads
   * `<resolve(dataPath)>/<session>.zip`, the file RemoteAuth just wrote. Pass the same `dataPath` to both.
   */
  at(dataPath: string): BoundSessionStore {
    return new BoundSessionStore(this, resolve(dataPath));
  }

  /**
   * True when a backup of `session` is stored; false after this process deleted it. On a database error
   * it logs and answers the database's last answer, or true if it never answered: at start RemoteAuth
   * then calls `extract`, which rejects, so `Client.initialize` rejects and the channel retries with
   * backoff, instead of RemoteAuth wiping the profile and asking for a new QR during an outage.
   */
  async sessionExists(session: string): Promise<boolean> {
    if (this.deleted.has(session)) return false;
    try {
      const exists = (await this.files(session)).length > 0;
      this.known.set(session, exists);
      return exists;
    } catch (err) {
      const assumed = this.known.get(session) ?? true;
      this.logger.error({ err, session, assumed }, "whatsapp: could not check the session backup in MongoDB; assuming the last known answer");
      return assumed;
    }
  }

  /**
   * Uploads the zip at `zipPath` as the newest backup of `session`, then deletes older backups. On any
   * error it logs and resolves, keeping the previous backup (RemoteAuth retries at the next interval).
   */
  async save(session: string, zipPath: string): Promise<void> {
    let upload: (Writable & { readonly id: ObjectId }) | null = null;
    try {
      upload = this.bucket.openUploadStream(`${session}.zip`, { metadata: { session } });
      await pipeline(createReadStream(zipPath), upload);
    } catch (err) {
      this.logger.error({ err, session, zipPath }, "whatsapp: could not back up the session to MongoDB; the previous backup is kept");
      const failed = upload?.id;
      // GridFSBucket.delete removes orphaned chunks of a partial upload before reporting "not found".
      if (failed) await this.bucket.delete(failed).catch(() => undefined);
      return;
    }
    this.deleted.delete(session);
    this.known.set(session, true);
    try {
      const [, ...older] = await this.files(session);
      for (const file of older) await this.bucket.delete(file._id);
      this.logger.info({ session, removed: older.length }, "whatsapp: session backed up to MongoDB");
    } catch (err) {
      this.logger.warn({ err, session }, "whatsapp: session backed up, but older backups could not be removed");
    }
  }

  /**
   * Writes the newest backup of `session` to exactly `path` (through `<path>.part`, renamed when
   * complete, so `path` never holds a partial zip).
   * @throws Error when the backup cannot be read (logged, no file left at `path`). Resolving without a
   *   file would crash the process in RemoteAuth's unzip; the rejection instead reaches
   *   `Client.initialize` (the channel retries with backoff). RemoteAuth's other caller, the re-start
   *   after a logout, follows `delete`, after which `sessionExists` answers false and `extract` is not
   *   called.
   */
  async extract(session: string, path: string): Promise<void> {
    const part = `${path}.part`;
    try {
      await rm(path, { force: true });
      const [newest] = await this.files(session);
      if (!newest) throw new Error(`no backup named ${session}.zip in GridFS bucket ${SESSION_BUCKET_NAME}`);
      await mkdir(dirname(path), { recursive: true });
      await pipeline(this.bucket.openDownloadStream(newest._id), createWriteStream(part));
      await rename(part, path);
    } catch (err) {
      await rm(part, { force: true }).catch(() => undefined);
      this.logger.error({ err, session, path }, "whatsapp: could not restore the session from MongoDB; WhatsApp Web will retry");
      throw new Error(`WhatsApp session ${session} could not be restored from MongoDB GridFS bucket ${SESSION_BUCKET_NAME}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
  }

  /**
   * Deletes every backup of `session`, logging a failure, and remembers the session as deleted either
   * way: after a logout RemoteAuth asks `sessionExists` again at once, from a page event nobody awaits,
   * and must not go on to restore the logged-out session (or reach `extract` and its rejection).
   */
  async delete(session: string): Promise<void> {
    this.deleted.add(session);
    this.known.set(session, false);
    try {
      for (const file of await this.files(session)) await this.bucket.delete(file._id);
      this.logger.info({ session }, "whatsapp: session backup deleted from MongoDB");
    } catch (err) {
      this.logger.error({ err, session }, "whatsapp: could not delete the session backup from MongoDB");
    }
  }

  /** Backups of `session`, newest first (upload time, then id, which grows within a process). */
  private async files(session: string): Promise<SessionFile[]> {
    const files = await this.bucket.find({ filename: `${session}.zip` }, { sort: { uploadDate: -1, _id: -1 } }).toArray();
    return files;
  }
}

/** A `GridFsSessionStore` bound to RemoteAuth's `dataPath`: the object handed to `RemoteAuth`. */
export class BoundSessionStore implements RemoteAuthStore {
  constructor(
    private readonly sessions: GridFsSessionStore,
    /** Absolute: RemoteAuth's `path.resolve(dataPath)`, where it writes `<session>.zip`. */
    readonly dataPath: string,
  ) {}

  /** Where RemoteAuth writes (before `save`) and reads (after `extract`) the zip of `session`. */
  zipPath(session: string): string {
    return join(this.dataPath, `${session}.zip`);
  }

  sessionExists({ session }: { session: string }): Promise<boolean> {
    return this.sessions.sessionExists(session);
  }

  save({ session }: { session: string }): Promise<void> {
    return this.sessions.save(session, this.zipPath(session));
  }

  extract({ session, path }: { session: string; path: string }): Promise<void> {
    return this.sessions.extract(session, path);
  }

  delete({ session }: { session: string }): Promise<void> {
    return this.sessions.delete(session);
  }
}

/**
 * The production store: GridFS bucket `whatsapp_sessions` in the database the Mongo store uses, on
 * the client the composition root already connected (the store never connects or closes it).
 */
export function createGridFsSessionStore(options: { client: MongoClient; dbName: string; logger: Logger }): GridFsSessionStore {
  const bucket = new GridFSBucket(options.client.db(options.dbName), { bucketName: SESSION_BUCKET_NAME });
  return new GridFsSessionStore(bucket, options.logger);
}
