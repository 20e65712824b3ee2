/**
 * `connectMongoStore`: opens the production store. Order matters: connect and `ping` first (so a
 * wrong URI fails at start, before Agenda or any bot starts), then detect transaction support with
 * `hello`, then create the declared indexes.
 */
import { MongoClient } from "mongodb";
import { z } from "zod";
import type { Clock } from "../../clock.js";
import { StoreUnavailableError } from "../../errors.js";
import { MongoStore } from "./store.js";

export interface ConnectMongoOptions {
  /** Database name; default: the one in the URI path, else `familiar`. */
  dbName?: string;
  /** How long to look for a server before giving up, ms. Default 5000. */
  serverSelectionTimeoutMS?: number;
  clock?: Clock;
}

/** A store connected by `connectMongoStore`: it always owns its client. */
export type ConnectedMongoStore = MongoStore & { readonly client: MongoClient };

/** Hosts, database and password of a connection string, read without the driver (for messages). */
export interface MongoUriParts {
  /** `host:port` list as written, credentials removed, e.g. `db1:27017,db2:27017`. */
  hosts: string;
  dbName: string | null;
  /** The decoded password, only so it can be scrubbed from error text; never print it. */
  password: string | null;
}

/**
 * Splits a `mongodb://` / `mongodb+srv://` URI into parts safe to show (hosts, database). Returns
 * hosts `"(unparseable URI)"` when the string is not a MongoDB URI.
 */
export function parseMongoUri(uri: string): MongoUriParts {
  const match = /^mongodb(?:\+srv)?:\/\/([^/?#]*)(?:\/([^?#]*))?/.exec(uri);
  if (match === null) return { hosts: "(unparseable URI)", dbName: null, password: null };
  const authority = match[1] ?? "";
  const at = authority.lastIndexOf("@");
  const hosts = at === -1 ? authority : authority.slice(at + 1);
  const userInfo = at === -1 ? "" : authority.slice(0, at);
  const colon = userInfo.indexOf(":");
  let password: string | null = null;
  if (colon !== -1) {
    const raw = userInfo.slice(colon + 1);
    try {
      password = decodeURIComponent(raw);
    } catch {
      password = raw;
    }
  }
  const path = match[2] ?? "";
  let dbName: string | null = null;
  if (path !== "") {
    try {
      dbName = decodeURIComponent(path);
    } catch {
      dbName = path;
    }
  }
  return { hosts: hosts === "" ? "(no host)" : hosts, dbName, password };
}

/** Replaces every occurrence of the password (raw and URL-encoded) in `text` with `***`. */
export function scrubPassword(text: string, password: string | null): string {
  if (password === null || password === "") return text;
  return text.split(password).join("***").split(encodeURIComponent(password)).join("***");
}

/** What `hello` tells about the deployment (MongoDB manual: `hello` command). */
const helloSchema = z.looseObject({
  setName: z.string().optional(),
  msg: z.string().optional(),
  logicalSessionTimeoutMinutes: z.number().nullable().optional(),
});

/**
 * True when the deployment runs multi-document transactions: a replica set member (`setName`) or a
 * mongos router (`msg: "isdbgrid"`), with sessions enabled (`logicalSessionTimeoutMinutes`).
 */
export function supportsTransactions(hello: unknown): boolean {
  const parsed = helloSchema.safeParse(hello);
  if (!parsed.success) return false;
  const h = parsed.data;
  const sessions = h.logicalSessionTimeoutMinutes !== undefined && h.logicalSessionTimeoutMinutes !== null;
  return sessions && (h.setName !== undefined || h.msg === "isdbgrid");
}

/**
 * Connects to MongoDB and returns a ready store.
 *
 * @example
 *   const store = await connectMongoStore(process.env.MONGODB_URI!);
 * @throws StoreUnavailableError when the URI is malformed or no server answers within
 *   `serverSelectionTimeoutMS`; the message names the host(s) but never the credentials.
 */
export async function connectMongoStore(uri: string, options: ConnectMongoOptions = {}): Promise<ConnectedMongoStore> {
  const parts = parseMongoUri(uri);
  const scrub = (text: string) => scrubPassword(text, parts.password);
  let client: MongoClient;
  try {
    client = new MongoClient(uri, { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5000, appName: "familiar" });
  } catch (err) {
    const reason = err instanceof Error ? scrub(err.message) : "unknown error";
    throw new StoreUnavailableError(`MONGODB_URI for ${parts.hosts} is not a valid connection string (${reason}): fix MONGODB_URI`);
  }
  const db = client.db(options.dbName ?? parts.dbName ?? "familiar");
  try {
    await client.connect();
    await db.command({ ping: 1 });
  } catch (err) {
    await client.close().catch(() => undefined);
    const reason = err instanceof Error ? scrub(err.message) : "unknown error";
    throw new StoreUnavailableError(
      `MongoDB at ${parts.hosts} is unreachable (${reason}): check that the server runs and that MONGODB_URI names it and its credentials correctly`,
    );
  }
  try {
    const hello = await client.db("admin").command({ hello: 1 });
    const store = new MongoStore(db, {
      client,
      supportsTransactions: supportsTransactions(hello),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    await store.ensureIndexes();
    return store as ConnectedMongoStore;
  } catch (err) {
    await client.close().catch(() => undefined);
    if (err instanceof StoreUnavailableError) throw err;
    const reason = err instanceof Error ? scrub(err.message) : "unknown error";
    throw new StoreUnavailableError(`MongoDB at ${parts.hosts} answered but could not be prepared (${reason})`);
  }
}
