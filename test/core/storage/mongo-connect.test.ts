/**
 * The MongoDB adapter's lifecycle without a server: connection-string handling, the start-up error
 * when nothing answers (on a closed 127.0.0.1 port), transaction detection from `hello`, and the
 * session plumbing of `transaction()` (every repository call inside it carries the session).
 */
import { createServer } from "node:net";
import type { MongoClient } from "mongodb";
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../core/errors.js";
import { connectMongoStore, parseMongoUri, scrubPassword, supportsTransactions } from "../../../core/storage/mongo/connect.js";
import type { CollectionLike, DbLike } from "../../../core/storage/mongo/driver.js";
import { MongoStore } from "../../../core/storage/mongo/store.js";
import { MingoDb } from "../../fakes/mingo-db.js";

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

describe("connection strings", () => {
  it("reads hosts and database without credentials", () => {
    expect(parseMongoUri("mongodb://familiar:p%40ss%2Fw@db1:27017,db2:27018/app?replicaSet=rs0")).toEqual({
      hosts: "db1:27017,db2:27018",
      dbName: "app",
      password: "p@ss/w",
    });
    expect(parseMongoUri("mongodb+srv://cluster0.example.net/?retryWrites=true")).toEqual({ hosts: "cluster0.example.net", dbName: null, password: null });
    expect(parseMongoUri("mongodb://user@localhost")).toEqual({ hosts: "localhost", dbName: null, password: null });
    expect(parseMongoUri("postgres://x").hosts).toBe("(unparseable URI)");
  });

  it("scrubs the password, raw and URL-encoded", () => {
    expect(scrubPassword("auth failed for p@ss/w and p%40ss%2Fw", "p@ss/w")).toBe("auth failed for *** and ***");
    expect(scrubPassword("nothing here", null)).toBe("nothing here");
  });

  it("detects transactions from hello: replica set or mongos with sessions", () => {
    expect(supportsTransactions({ isWritablePrimary: true, setName: "rs0", logicalSessionTimeoutMinutes: 30 })).toBe(true);
    expect(supportsTransactions({ isWritablePrimary: true, msg: "isdbgrid", logicalSessionTimeoutMinutes: 30 })).toBe(true);
    expect(supportsTransactions({ isWritablePrimary: true, logicalSessionTimeoutMinutes: 30 })).toBe(false);
    expect(supportsTransactions({ isWritablePrimary: true, setName: "rs0" })).toBe(false);
    expect(supportsTransactions("garbage")).toBe(false);
  });
});

describe("connectMongoStore", () => {
  it("fails at start with StoreUnavailableError naming the host but never the password", async () => {
    const port = await closedPort();
    const password = "s3cr3t-pa55word";
    const err = await connectMongoStore(`mongodb://familiar:${password}@127.0.0.1:${port}/app`, { serverSelectionTimeoutMS: 300 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    const message = (err as Error).message;
    expect(message).toContain(`127.0.0.1:${port}`);
    expect(message).toContain("MONGODB_URI");
    expect(message).not.toContain(password);
    expect(JSON.stringify(err)).not.toContain(password);
    expect((err as Error).cause).toBeUndefined();
  });

  it("rejects a malformed connection string with StoreUnavailableError", async () => {
    const err = await connectMongoStore("mongodb://user:hunter2@", { serverSelectionTimeoutMS: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).not.toContain("hunter2");
  });
});

/** Wraps the fake so every call's `session` option is recorded (and removed before the fake sees it). */
function recordingDb(inner: MingoDb, seen: { method: string; session: unknown }[]): DbLike {
  return {
    databaseName: inner.databaseName,
    command: (c) => inner.command(c),
    collection(name: string): CollectionLike {
      const coll = inner.collection(name);
      return new Proxy(coll, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            const last = args[args.length - 1];
            if (last !== null && typeof last === "object" && !Array.isArray(last) && "session" in last) {
              const { session, ...rest } = last;
              seen.push({ method: String(prop), session });
              args[args.length - 1] = rest;
            } else {
              seen.push({ method: String(prop), session: undefined });
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    },
  };
}

describe("transaction()", () => {
  it("passes the session to every operation inside, none outside, and joins nested calls", async () => {
    const session = { id: "s1", withTransaction: async <T>(fn: () => Promise<T>) => fn() };
    let sessionsStarted = 0;
    const client = {
      withSession: async <T>(fn: (s: typeof session) => Promise<T>) => {
        sessionsStarted++;
        return fn(session);
      },
      close: async () => undefined,
    } as unknown as MongoClient;
    const seen: { method: string; session: unknown }[] = [];
    const store = new MongoStore(recordingDb(new MingoDb(), seen), { client, supportsTransactions: true });
    expect(store.supportsTransactions).toBe(true);

    const person = await store.persons.createPerson({ displayName: "Ada" });
    const outside = seen.length;
    expect(seen.every((s) => s.session === undefined)).toBe(true);

    const result = await store.transaction(async () => {
      await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "local", text: "hi", taskId: null });
      await store.transaction(() => store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "k", text: "t" }, new Date()));
      return "ok";
    });
    expect(result).toBe("ok");
    const inside = seen.slice(outside);
    expect(inside.map((s) => s.method)).toEqual(["findOneAndUpdate", "insertOne", "findOneAndUpdate"]);
    expect(inside.every((s) => s.session === session)).toBe(true);
    expect(sessionsStarted).toBe(1);
  });

  it("without a client runs fn directly and reports no transaction support", async () => {
    const store = new MongoStore(new MingoDb(), { supportsTransactions: true });
    expect(store.supportsTransactions).toBe(false);
    await expect(store.transaction(async () => 7)).resolves.toBe(7);
  });
});
