import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { MongoClient } from "mongodb";
import { afterEach, describe, expect, it } from "vitest";
import { HttpServer } from "../../web/http/server.js";
import { createMessengers } from "../../app/messengers.js";
import { createWhatsAppChannel, type WhatsAppChannel } from "../../bots/whatsapp/channel.js";
import { realWhatsAppLibrary, type WhatsAppLibrary } from "../../bots/whatsapp/port.js";
import {
  createGridFsSessionStore,
  GridFsSessionStore,
  remoteSessionName,
  type RemoteAuthStore,
} from "../../bots/whatsapp/remote-store.js";
import { loadConfig } from "../../core/config/load.js";
import { createLogger } from "../../core/log/logger.js";
import { FakeGridFsBucket } from "../fakes/gridfs-bucket.js";
import { FakeWhatsAppLibrary } from "../fakes/whatsapp-client.js";

/** The real whatsapp-web.js auth strategies (CommonJS), driven without Chromium. */
const wwebjs = createRequire(import.meta.url)("whatsapp-web.js") as typeof import("whatsapp-web.js");

/** The RemoteAuth internals the tests drive (whatsapp-web.js 1.34.7, src/authStrategies/RemoteAuth.js). */
interface RemoteAuthInternals {
  dataPath: string;
  clientId?: string;
  backupSyncIntervalMs: number;
  store: RemoteAuthStore & { dataPath?: string };
  setup(client: unknown): void;
  beforeBrowserInitialized(): Promise<void>;
  storeRemoteSession(options?: { emit: boolean }): Promise<void>;
  logout(): Promise<void>;
}

const SESSION = remoteSessionName();
const dirs: string[] = [];
const channels: WhatsAppChannel[] = [];
afterEach(async () => {
  await Promise.all(channels.splice(0).map((c) => c.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "familiar-wa-remote-"));
  dirs.push(dir);
  return dir;
}

const tick = (ms = 10): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Reads a file unzipped by RemoteAuth. RemoteAuth resolves on unzipper's 'finish', which fires when the
 * zip is parsed, before the last entries are flushed to disk; Chromium's launch normally outlasts that.
 */
async function readUnzipped(path: string): Promise<string> {
  for (let i = 0; i < 100 && !existsSync(path); i++) await tick();
  await tick(20);
  return readFileSync(path, "utf8");
}

function capture() {
  const lines: string[] = [];
  const { logger } = createLogger({ level: "info", destination: new Writable({ write: (c, _e, cb) => void (lines.push(String(c)), cb()) }) });
  return { logger, lines, text: () => lines.join("") };
}

function storeWith(bucket: FakeGridFsBucket) {
  const log = capture();
  return { sessions: new GridFsSessionStore(bucket, log.logger), ...log };
}

/** A real RemoteAuth on `dataPath` whose store calls are recorded, set up on a minimal client. */
function remoteAuth(sessions: GridFsSessionStore, dataPath: string) {
  const bound = sessions.at(dataPath);
  const calls: [string, unknown][] = [];
  const recorded: RemoteAuthStore = {
    sessionExists: (o) => (calls.push(["sessionExists", o]), bound.sessionExists(o)),
    save: (o) => (calls.push(["save", o]), bound.save(o)),
    extract: (o) => (calls.push(["extract", o]), bound.extract(o)),
    delete: (o) => (calls.push(["delete", o]), bound.delete(o)),
  };
  const auth = new wwebjs.RemoteAuth({ store: recorded, dataPath, clientId: "familiar", backupSyncIntervalMs: 60_000 }) as unknown as RemoteAuthInternals;
  const client = { options: { puppeteer: {} as { userDataDir?: string } }, emitted: [] as string[], emit(event: string) { this.emitted.push(event); } };
  auth.setup(client);
  return { auth, client, calls };
}

/** A Chromium profile as WhatsApp Web leaves it: RemoteAuth keeps only Default/{IndexedDB,Local Storage}. */
function writeProfile(userDataDir: string, token: string): void {
  mkdirSync(join(userDataDir, "Default", "Local Storage", "leveldb"), { recursive: true });
  mkdirSync(join(userDataDir, "Default", "IndexedDB"), { recursive: true });
  mkdirSync(join(userDataDir, "Default", "Cache"), { recursive: true });
  writeFileSync(join(userDataDir, "Default", "Local Storage", "leveldb", "000003.log"), token);
  writeFileSync(join(userDataDir, "Default", "IndexedDB", "wa.db"), "indexed");
  writeFileSync(join(userDataDir, "Default", "Cache", "blob"), "cache");
}

describe("GridFS session store under the real RemoteAuth", () => {
  it("R1: RemoteAuth saves and restores through GridFS at <dataPath>/<session>.zip, never the working directory", async () => {
    const root = tempDir();
    const elsewhere = tempDir();
    const dataPath = join(root, "data", "whatsapp-session");
    const zipPath = join(dataPath, `${SESSION}.zip`);
    const bucket = new FakeGridFsBucket();
    const { sessions, text } = storeWith(bucket);
    const cwd = process.cwd();
    process.chdir(elsewhere);
    try {
      const first = remoteAuth(sessions, dataPath);
      await first.auth.beforeBrowserInitialized();
      expect(first.client.options.puppeteer.userDataDir).toBe(join(dataPath, SESSION));
      expect(first.calls).toEqual([["sessionExists", { session: SESSION }]]);

      writeProfile(join(dataPath, SESSION), "token-1");
      await first.auth.storeRemoteSession({ emit: true });
      expect(first.calls.at(-1)).toEqual(["save", { session: SESSION }]);
      expect(first.client.emitted).toEqual(["remote_session_saved"]);
      expect(bucket.files.map((f) => f.file.filename)).toEqual([`${SESSION}.zip`]);
      expect(existsSync(zipPath)).toBe(false);
      expect(text()).toContain("session backed up to MongoDB");

      rmSync(join(root, "data"), { recursive: true, force: true });
      const second = remoteAuth(sessions, dataPath);
      await second.auth.beforeBrowserInitialized();
      expect(second.calls).toEqual([
        ["sessionExists", { session: SESSION }],
        ["extract", { session: SESSION, path: zipPath }],
      ]);
      expect(await readUnzipped(join(dataPath, SESSION, "Default", "Local Storage", "leveldb", "000003.log"))).toBe("token-1");
      expect(await readUnzipped(join(dataPath, SESSION, "Default", "IndexedDB", "wa.db"))).toBe("indexed");
      expect(existsSync(join(dataPath, SESSION, "Default", "Cache"))).toBe(false);
      expect(existsSync(zipPath)).toBe(false);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it("R2: extract writes the newest backup to exactly the path RemoteAuth then reads, with no partial file", async () => {
    const dataPath = join(tempDir(), "whatsapp-session");
    const bucket = new FakeGridFsBucket();
    const store = storeWith(bucket).sessions.at(dataPath);
    const auth = new wwebjs.RemoteAuth({ store, dataPath, clientId: "familiar", backupSyncIntervalMs: 60_000 }) as unknown as RemoteAuthInternals;
    const readPath = join(auth.dataPath, `${SESSION}.zip`);
    expect(store.zipPath(SESSION)).toBe(readPath);

    mkdirSync(dataPath, { recursive: true });
    writeFileSync(store.zipPath(SESSION), "zip-bytes-1");
    await store.save({ session: SESSION });
    rmSync(dataPath, { recursive: true, force: true });
    expect(await store.sessionExists({ session: SESSION })).toBe(true);
    expect(await store.sessionExists({ session: "RemoteAuth-other" })).toBe(false);

    await store.extract({ session: SESSION, path: readPath });
    expect(readFileSync(readPath, "latin1")).toBe("zip-bytes-1");
    expect(readdirSync(dataPath)).toEqual([`${SESSION}.zip`]);

    await store.delete({ session: SESSION });
    expect(bucket.files).toEqual([]);
    expect(await store.sessionExists({ session: SESSION })).toBe(false);
  });

  it("R3: keeps only the newest backup per session and leaves other sessions alone", async () => {
    const dataPath = tempDir();
    const bucket = new FakeGridFsBucket();
    const store = storeWith(bucket).sessions.at(dataPath);
    writeFileSync(store.zipPath("RemoteAuth-other"), "other");
    await store.save({ session: "RemoteAuth-other" });
    for (const n of [1, 2, 3]) {
      writeFileSync(store.zipPath(SESSION), `zip-${n}`);
      await store.save({ session: SESSION });
    }
    expect(bucket.contents(`${SESSION}.zip`)).toEqual(["zip-3"]);
    expect(bucket.contents("RemoteAuth-other.zip")).toEqual(["other"]);
    const out = join(dataPath, "restore", `${SESSION}.zip`);
    await store.extract({ session: SESSION, path: out });
    expect(readFileSync(out, "latin1")).toBe("zip-3");
  });
});

describe("store errors never escape", () => {
  it("R4: a broken upload keeps the previous backup and removes its partial chunks; a missing zip is logged", async () => {
    const dataPath = tempDir();
    const bucket = new FakeGridFsBucket();
    const { sessions, text } = storeWith(bucket);
    const store = sessions.at(dataPath);
    writeFileSync(store.zipPath(SESSION), "zip-1");
    await store.save({ session: SESSION });

    writeFileSync(store.zipPath(SESSION), Buffer.alloc(200_000, 7));
    bucket.failUploadAfterBytes = 10;
    await expect(store.save({ session: SESSION })).resolves.toBeUndefined();
    expect(bucket.contents(`${SESSION}.zip`)).toEqual(["zip-1"]);
    expect(bucket.partialUploads.size).toBe(0);
    expect(text()).toContain("could not back up the session to MongoDB");

    bucket.failUploadAfterBytes = null;
    rmSync(store.zipPath(SESSION));
    await expect(store.save({ session: SESSION })).resolves.toBeUndefined();
    expect(text()).toMatch(/ENOENT/);
    expect(bucket.contents(`${SESSION}.zip`)).toEqual(["zip-1"]);
  });

  it("R5: an unreachable database at start: a backup is assumed, extract rejects with no file left, and RemoteAuth's start rejects", async () => {
    const dataPath = join(tempDir(), "whatsapp-session");
    const bucket = new FakeGridFsBucket();
    const { sessions, text } = storeWith(bucket);
    const store = sessions.at(dataPath);
    mkdirSync(dataPath, { recursive: true });
    writeFileSync(store.zipPath(SESSION), "zip-1");
    await store.save({ session: SESSION });

    bucket.fail.download = new Error("connection reset");
    await expect(store.extract({ session: SESSION, path: store.zipPath(SESSION) })).rejects.toThrow(/could not be restored from MongoDB GridFS.*connection reset/);
    expect(readdirSync(dataPath)).toEqual([]);
    expect(text()).toContain("could not restore the session from MongoDB");
    // What Client.initialize awaits: a rejection the channel catches (an unhandled one would fail this file).
    const { auth } = remoteAuth(sessions, dataPath);
    await expect(auth.beforeBrowserInitialized()).rejects.toThrow(/connection reset/);

    // A fresh process whose database never answered assumes the backup exists, so nothing is wiped.
    bucket.fail = { find: new Error("server selection timed out") };
    const freshLog = capture();
    const fresh = new GridFsSessionStore(bucket, freshLog.logger).at(dataPath);
    expect(await fresh.sessionExists({ session: SESSION })).toBe(true);
    await expect(fresh.extract({ session: SESSION, path: fresh.zipPath(SESSION) })).rejects.toThrow(/server selection timed out/);
    expect(existsSync(fresh.zipPath(SESSION))).toBe(false);
    expect(await fresh.sessionExists({ session: "RemoteAuth-never-seen" })).toBe(true);
    // Otherwise the last answer stands.
    bucket.fail = {};
    expect(await fresh.sessionExists({ session: "RemoteAuth-none" })).toBe(false);
    bucket.fail = { find: new Error("server selection timed out") };
    expect(await fresh.sessionExists({ session: "RemoteAuth-none" })).toBe(false);
    expect(freshLog.text()).toContain("assuming the last known answer");
  });

  it("R6: RemoteAuth's interval save and its logout path resolve while MongoDB fails", async () => {
    const dataPath = join(tempDir(), "whatsapp-session");
    const bucket = new FakeGridFsBucket();
    const { sessions, text } = storeWith(bucket);
    const { auth, client } = remoteAuth(sessions, dataPath);
    await auth.beforeBrowserInitialized();
    writeProfile(join(dataPath, SESSION), "token-1");
    await auth.storeRemoteSession();
    expect(bucket.files).toHaveLength(1);

    bucket.fail = { upload: new Error("not primary") };
    await expect(auth.storeRemoteSession()).resolves.toBeUndefined();
    expect(bucket.files).toHaveLength(1);
    expect(client.emitted).toEqual([]);

    bucket.fail = { delete: new Error("not primary") };
    await expect(auth.logout()).resolves.toBeUndefined();
    expect(text()).toContain("could not delete the session backup");
    // The logout path: RemoteAuth asks again at once; the failed delete counts as done in this process.
    await expect(auth.beforeBrowserInitialized()).resolves.toBeUndefined();
    expect(readdirSync(join(dataPath, SESSION))).toEqual([]);

    bucket.fail = {};
    writeProfile(join(dataPath, SESSION), "token-2");
    await auth.storeRemoteSession();
    expect(await sessions.sessionExists(SESSION)).toBe(true);
    expect(bucket.files).toHaveLength(1);
  });
});

describe("the channel with RemoteAuth", () => {
  /** The real library, with `initialize`/`destroy` replaced so Chromium never starts. */
  function spyLibrary() {
    const real = realWhatsAppLibrary();
    const built: { options: { authStrategy: unknown; puppeteer: { executablePath: string } } }[] = [];
    const library: WhatsAppLibrary = {
      createClient: (settings) => {
        const client = real.createClient(settings);
        Object.assign(client, { initialize: async () => undefined, destroy: async () => undefined });
        built.push(client as unknown as (typeof built)[number]);
        return client;
      },
      createPoll: real.createPoll,
      createMedia: real.createMedia,
    };
    return { library, built };
  }

  it("A1: builds RemoteAuth on DATA_DIR/whatsapp-session with the store bound to that same path; LocalAuth by default", async () => {
    const dataDir = tempDir();
    const { logger } = capture();
    const sessions = new GridFsSessionStore(new FakeGridFsBucket(), logger);
    const sink = async () => ({ status: "accepted" as const });

    const remote = spyLibrary();
    const channel = createWhatsAppChannel({ dataDir, chromiumPath: "/usr/bin/chromium", logger, library: remote.library, auth: { kind: "remote", store: sessions, backupSyncIntervalMs: 120_000 } });
    channels.push(channel);
    await channel.start(sink);
    const strategy = remote.built[0]!.options.authStrategy as RemoteAuthInternals;
    expect(strategy).toBeInstanceOf(wwebjs.RemoteAuth);
    expect(strategy).not.toBeInstanceOf(wwebjs.LocalAuth);
    expect(strategy.dataPath).toBe(join(dataDir, "whatsapp-session"));
    expect(strategy.dataPath).toBe(channel.dataPath);
    expect(strategy.store.dataPath).toBe(strategy.dataPath);
    expect(strategy.clientId).toBe("familiar");
    expect(strategy.backupSyncIntervalMs).toBe(120_000);
    expect(remote.built[0]!.options.puppeteer.executablePath).toBe("/usr/bin/chromium");
    expect(channel.authKind).toBe("remote");

    const local = spyLibrary();
    const plain = createWhatsAppChannel({ dataDir, chromiumPath: "/usr/bin/chromium", logger, library: local.library });
    channels.push(plain);
    await plain.start(sink);
    expect(local.built[0]!.options.authStrategy).toBeInstanceOf(wwebjs.LocalAuth);
    expect(plain.authKind).toBe("local");
  });

  it("A2: defaults the backup interval to 5 minutes and rejects one under RemoteAuth's 60 s minimum", () => {
    const { logger } = capture();
    const sessions = new GridFsSessionStore(new FakeGridFsBucket(), logger);
    const remote = spyLibrary();
    const options = { dataDir: tempDir(), chromiumPath: "/usr/bin/chromium", logger, library: remote.library };
    expect(() => createWhatsAppChannel({ ...options, auth: { kind: "remote", store: sessions, backupSyncIntervalMs: 30_000 } })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining("at least 60000 ms") }),
    );
    const channel = createWhatsAppChannel({ ...options, auth: { kind: "remote", store: sessions } });
    channels.push(channel);
    return channel.start(async () => ({ status: "accepted" })).then(() => {
      expect((remote.built[0]!.options.authStrategy as RemoteAuthInternals).backupSyncIntervalMs).toBe(300_000);
    });
  });

  it("A3: a QR although MongoDB holds a backup reports the session invalid; a first QR is plain pairing", async () => {
    const { logger } = capture();
    for (const stored of [true, false]) {
      const dataDir = tempDir();
      const bucket = new FakeGridFsBucket();
      const sessions = new GridFsSessionStore(bucket, logger);
      if (stored) {
        const store = sessions.at(join(dataDir, "whatsapp-session"));
        mkdirSync(store.dataPath, { recursive: true });
        writeFileSync(store.zipPath(SESSION), "zip");
        await store.save({ session: SESSION });
      }
      const library = new FakeWhatsAppLibrary();
      const invalid: string[] = [];
      const channel = createWhatsAppChannel({ dataDir, chromiumPath: "/usr/bin/chromium", logger, library, auth: { kind: "remote", store: sessions }, onSessionInvalid: (r) => invalid.push(r) });
      channels.push(channel);
      await channel.start(async () => ({ status: "accepted" }));
      await tick();
      library.last.emit("qr", "2@qr");
      expect(channel.state()).toBe("pairing");
      expect(invalid).toHaveLength(stored ? 1 : 0);
    }
  });

  it("A4: the composition root picks RemoteAuth when given the Mongo client, LocalAuth otherwise", async () => {
    const { logger } = capture();
    const dataDir = tempDir();
    const http = new HttpServer(logger, []);
    const config = loadConfig({ WHATSAPP_ENABLED: "true", DATA_DIR: dataDir, MONGODB_URI: "mongodb://127.0.0.1:9/familiar_wa" });
    const client = new MongoClient("mongodb://127.0.0.1:9/familiar_wa");
    const inbound = { holdUpdates: async () => {}, releaseUpdate: async () => {}, listHeldUpdates: async () => [] };
    expect((await createMessengers(config, { http, logger, dataDir, mongoClient: client, inbound })).whatsapp?.authKind).toBe("remote");
    expect((await createMessengers(loadConfig({ WHATSAPP_ENABLED: "true", DATA_DIR: dataDir }), { http, logger, dataDir, inbound })).whatsapp?.authKind).toBe("local");
  });
});

const MONGODB_URI = process.env.MONGODB_URI;
if (!MONGODB_URI) console.log("whatsapp-remote: MONGODB_URI is not set, so the real GridFSBucket test is skipped");

describe.skipIf(!MONGODB_URI)("the real GridFSBucket (MONGODB_URI)", () => {
  it("R7: RemoteAuth saves, restores and deletes through GridFS on a real server", async () => {
    const client = await new MongoClient(MONGODB_URI!, { serverSelectionTimeoutMS: 5000 }).connect();
    const dbName = `familiar_wa_test_${process.pid}_${Date.now()}`;
    try {
      const { logger, text } = capture();
      const sessions = createGridFsSessionStore({ client, dbName, logger });
      const dataPath = join(tempDir(), "whatsapp-session");
      const first = remoteAuth(sessions, dataPath);
      await first.auth.beforeBrowserInitialized();
      for (const token of ["token-1", "token-2"]) {
        writeProfile(join(dataPath, SESSION), token);
        await first.auth.storeRemoteSession();
      }
      expect(text()).not.toContain("could not");
      expect(await client.db(dbName).collection("whatsapp_sessions.files").countDocuments({ filename: `${SESSION}.zip` })).toBe(1);
      rmSync(dataPath, { recursive: true, force: true });
      const second = remoteAuth(sessions, dataPath);
      await second.auth.beforeBrowserInitialized();
      expect(await readUnzipped(join(dataPath, SESSION, "Default", "Local Storage", "leveldb", "000003.log"))).toBe("token-2");
      await second.auth.logout();
      expect(await sessions.sessionExists(SESSION)).toBe(false);
      expect(await client.db(dbName).collection("whatsapp_sessions.chunks").countDocuments()).toBe(0);
    } finally {
      await client.db(dbName).dropDatabase().catch(() => undefined);
      await client.close();
    }
  });
});
