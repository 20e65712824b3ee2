/**
 * Offline checks of the MongoDB adapter's filter, update and pipeline documents: each is evaluated
 * with mingo (directly, or through the fake driver in test/fakes/mingo-db.ts) against documents in
 * the adapter's stored shape, so a wrong operator, path or condition fails here without a server.
 */
import { Aggregator, Query } from "mingo";
import { describe, expect, it } from "vitest";
import { DuplicateKeyError } from "../../../core/errors.js";
import { collectionNames, indexSpecs } from "../../../core/storage/mongo/collections.js";
import { mapMongoError } from "../../../core/storage/mongo/errors.js";
import {
  activeGrantsFilter,
  consumableGrantFilter,
  decidableApprovalFilter,
  expiredApprovalFilter,
  memorySearchFilter,
  notExpiredFilter,
} from "../../../core/storage/mongo/filters.js";
import { claimableOutboxFilter, outboxHeadsPipeline } from "../../../core/storage/mongo/outbox-filters.js";
import { MongoStore } from "../../../core/storage/mongo/store.js";
import {
  claimTaskFilter,
  claimableTaskFilter,
  legalFromStates,
  transitionFilter,
  transitionUpdate,
} from "../../../core/storage/mongo/task-filters.js";
import { legalTransitions, type TaskState, type TaskStatus } from "../../../core/tasks/index.js";
import { FakeDuplicateKeyError, MingoDb } from "../../fakes/mingo-db.js";
import { FakeShapeError, applyUpdate } from "../../fakes/mingo-shapes.js";

const T = Date.UTC(2030, 0, 1);
const at = (ms: number) => new Date(T + ms);
const matches = (filter: object, doc: object) => new Query(filter).test(doc as Record<string, unknown>);

const statuses = Object.keys(legalTransitions) as TaskStatus[];
const sampleState: Record<TaskStatus, TaskState> = {
  pending: { status: "pending" },
  running: { status: "running" },
  waiting: { status: "waiting", wait: { kind: "reply" } },
  done: { status: "done", result: "ok" },
  failed: { status: "failed", error: "x" },
  cancelled: { status: "cancelled", reason: null },
};

function taskDoc(status: TaskStatus, extra: Record<string, unknown> = {}) {
  return {
    _id: "task_1",
    personId: "per_1",
    status,
    wait: status === "waiting" ? { kind: "reply" } : null,
    lease: status === "running" ? { owner: "A", until: at(1000) } : null,
    notBefore: null,
    dueAt: null,
    ...extra,
  };
}

describe("task filters carry the state machine", () => {
  it("legal from-states are exactly the inverse of legalTransitions", () => {
    for (const to of statuses) {
      expect(new Set(legalFromStates(to))).toEqual(new Set(statuses.filter((from) => legalTransitions[from].includes(to))));
    }
  });

  it("a transition filter matches a task iff the move is legal (lease holder asking)", () => {
    for (const from of statuses) {
      for (const to of statuses) {
        expect(matches(transitionFilter("task_1", to, "A"), taskDoc(from)), `${from} → ${to}`).toBe(legalTransitions[from].includes(to));
      }
    }
  });

  it("a running task moves only for its lease holder; other tasks for anyone", () => {
    expect(matches(transitionFilter("task_1", "done", "B"), taskDoc("running"))).toBe(false);
    expect(matches(transitionFilter("task_1", "cancelled", null), taskDoc("running"))).toBe(false);
    expect(matches(transitionFilter("task_1", "cancelled", null), taskDoc("pending"))).toBe(true);
    expect(matches(transitionFilter("task_1", "running", "B"), taskDoc("waiting"))).toBe(true);
    expect(matches(transitionFilter("task_2", "done", "A"), taskDoc("running"))).toBe(false);
  });

  it("claimable: pending past notBefore, waiting for a time that came, running with an ended lease", () => {
    const now = at(1000);
    const cases: [string, object, boolean][] = [
      ["pending, no notBefore", taskDoc("pending"), true],
      ["pending, notBefore = now", taskDoc("pending", { notBefore: at(1000) }), true],
      ["pending, notBefore later", taskDoc("pending", { notBefore: at(1001) }), false],
      ["waiting time, until = now", taskDoc("waiting", { wait: { kind: "time", until: at(1000) } }), true],
      ["waiting time, until later", taskDoc("waiting", { wait: { kind: "time", until: at(1001) } }), false],
      ["waiting event", taskDoc("waiting", { wait: { kind: "event", hookId: "hook_1" } }), false],
      ["running, lease ends now", taskDoc("running", { lease: { owner: "A", until: at(1000) } }), true],
      ["running, lease ends later", taskDoc("running", { lease: { owner: "A", until: at(1001) } }), false],
      ["done", taskDoc("done"), false],
      ["cancelled", taskDoc("cancelled"), false],
    ];
    for (const [name, doc, expected] of cases) {
      expect(matches(claimableTaskFilter(now), doc), name).toBe(expected);
      expect(matches(claimTaskFilter({ taskId: "task_1", now }), doc), name).toBe(expected);
    }
    // A held task is never due, whatever time it keeps.
    expect(matches(claimTaskFilter({ taskId: "task_1", now }), taskDoc("waiting", { wait: { kind: "held", until: at(10) } }))).toBe(false);
    // The due-time guard of claimDueTask: a changed due time makes the claim miss.
    expect(matches(claimTaskFilter({ taskId: "task_1", now, dueAt: at(999) }), taskDoc("pending", { dueAt: at(1000) }))).toBe(false);
    expect(matches(claimTaskFilter({ now, personId: "per_2" }), taskDoc("pending"))).toBe(false);
  });

  it("a transition update writes the flattened state and releases the lease when leaving running", () => {
    const doc: Record<string, unknown> = { ...taskDoc("running"), result: null, error: null, reason: null };
    applyUpdate(doc, transitionUpdate({ status: "waiting", wait: { kind: "time", until: at(5000) } }, at(10), null), false);
    expect(doc).toMatchObject({ status: "waiting", wait: { kind: "time", until: at(5000) }, lease: null, dueAt: at(5000), updatedAt: at(10) });
    applyUpdate(doc, transitionUpdate({ status: "cancelled", reason: "user" }, at(11), null), false);
    expect(doc).toMatchObject({ status: "cancelled", wait: null, reason: "user", dueAt: null });
    for (const state of Object.values(sampleState)) expect(() => applyUpdate({ ...taskDoc("pending") }, transitionUpdate(state, at(1), at(2)), false)).not.toThrow();
  });
});

describe("outbox documents", () => {
  it("the heads pipeline offers only each person's oldest undelivered message, when claimable", () => {
    const now = at(100);
    const msg = (id: string, personId: string, status: string, extra: Record<string, unknown> = {}) => ({
      _id: id,
      personId,
      status,
      nextAttemptAt: at(0),
      lease: null,
      ...extra,
    });
    const docs = [
      msg("out_1", "per_a", "delivered"),
      msg("out_2", "per_a", "queued"),
      msg("out_3", "per_a", "queued"),
      msg("out_4", "per_b", "sending", { lease: { owner: "W", until: at(500) } }),
      msg("out_5", "per_b", "queued"),
      msg("out_6", "per_c", "queued", { nextAttemptAt: at(101) }),
      msg("out_7", "per_d", "failed"),
      msg("out_8", "per_d", "queued"),
      msg("out_9", "per_e", "sending", { lease: { owner: "W", until: at(100) } }),
    ];
    const run = (personId?: string) => new Aggregator(outboxHeadsPipeline(now, personId, 10)).run(docs).map((d) => d._id);
    expect(run()).toEqual(["out_2", "out_8", "out_9"]);
    expect(run("per_b")).toEqual([]);
    expect(run("per_d")).toEqual(["out_8"]);
    expect(matches(claimableOutboxFilter(now), docs[3]!)).toBe(false);
  });
});

describe("authorization and memory filters", () => {
  it("approvals are decidable strictly before expiry and expired from it on", () => {
    const req = { _id: "apr_1", status: "pending", expiresAt: at(1000) };
    expect(matches(decidableApprovalFilter("apr_1", at(999)), req)).toBe(true);
    expect(matches(decidableApprovalFilter("apr_1", at(1000)), req)).toBe(false);
    expect(matches(expiredApprovalFilter(at(1000), "apr_1"), req)).toBe(true);
    expect(matches(expiredApprovalFilter(at(999)), req)).toBe(false);
    expect(matches(decidableApprovalFilter("apr_1", at(0)), { ...req, status: "approved" })).toBe(false);
  });

  it("active and consumable grants", () => {
    const grant = (scope: object, extra: Record<string, unknown> = {}) => ({ _id: "grt_1", personId: "per_1", scope, consumedAt: null, revokedAt: null, ...extra });
    const now = at(1000);
    expect(matches(activeGrantsFilter("per_1", now), grant({ kind: "always" }))).toBe(true);
    expect(matches(activeGrantsFilter("per_1", now), grant({ kind: "until", until: at(1001) }))).toBe(true);
    expect(matches(activeGrantsFilter("per_1", now), grant({ kind: "until", until: at(1000) }))).toBe(false);
    expect(matches(activeGrantsFilter("per_1", now), grant({ kind: "once" }, { consumedAt: at(1) }))).toBe(false);
    expect(matches(activeGrantsFilter("per_1", now), grant({ kind: "always" }, { revokedAt: at(1) }))).toBe(false);
    expect(matches(activeGrantsFilter("per_2", now), grant({ kind: "always" }))).toBe(false);
    expect(matches(consumableGrantFilter("grt_1"), grant({ kind: "once" }))).toBe(true);
    expect(matches(consumableGrantFilter("grt_1"), grant({ kind: "always" }))).toBe(false);
  });

  it("memory expiry excludes items expiring at or before now", () => {
    expect(matches(notExpiredFilter(at(5)), { expiresAt: null })).toBe(true);
    expect(matches(notExpiredFilter(at(5)), { expiresAt: at(6) })).toBe(true);
    expect(matches(notExpiredFilter(at(5)), { expiresAt: at(5) })).toBe(false);
    const f = memorySearchFilter("per_1", ["green", "tea"], at(5));
    expect(f).toMatchObject({ personId: "per_1", $text: { $search: "green tea" } });
  });
});

describe("the fake driver fails loudly on shapes a server would reject", () => {
  const coll = () => new MingoDb().collection("c");

  it("rejects unknown operators, replacement updates, path conflicts, undefined and embedded-document equality", async () => {
    const c = coll();
    await c.insertOne({ _id: "a", n: 1, sub: { x: 1, y: 2 } });
    await expect(c.findOne({ n: { $foo: 1 } })).rejects.toThrow(/unknown/i);
    await expect(c.findOne({ n: undefined })).rejects.toThrow(FakeShapeError);
    await expect(c.findOne({ sub: { y: 2, x: 1 } })).rejects.toThrow(/field-order-sensitive/);
    await expect(c.updateOne({ _id: "a" }, { n: 2 })).rejects.toThrow(/replacement/);
    await expect(c.updateOne({ _id: "a" }, { $set: { sub: {} }, $inc: { "sub.x": 1 } })).rejects.toThrow(/conflict/);
    await expect(c.updateOne({ _id: "a" }, { $rename: { n: "m" } })).rejects.toThrow(/not modelled/);
    await expect(c.updateOne({ _id: "a" }, { $set: { n: undefined } })).rejects.toThrow(/undefined/);
    await expect(c.updateOne({ _id: "a" }, { $set: { _id: "b" } })).rejects.toThrow(/immutable/);
    await expect(c.insertOne({ _id: "b", "a.b": 1 })).rejects.toThrow(/cannot be stored/);
    await expect(c.findOne({ _id: "a" }, { session: {} as never })).rejects.toThrow(/sessions/);
    await expect(
      c.findOneAndUpdate({ _id: "a" }, { $inc: { n: 1 } }, { returnDocument: "after", includeResultMetadata: true as never }),
    ).rejects.toThrow(/includeResultMetadata/);
    expect((await c.findOne({ _id: "a" }))?.n).toBe(1);
  });

  it("findOneAndUpdate returns the document before the update unless asked for after; $setOnInsert only inserts", async () => {
    const c = coll();
    await c.insertOne({ _id: "a", n: 1 });
    const options = { includeResultMetadata: false } as const;
    expect(await c.findOneAndUpdate({ _id: "a" }, { $inc: { n: 1 } }, { ...options, returnDocument: "before" })).toEqual({ _id: "a", n: 1 });
    expect(await c.findOneAndUpdate({ _id: "a" }, { $inc: { n: 1 } }, { ...options, returnDocument: "after" })).toEqual({ _id: "a", n: 3 });
    expect(await c.findOneAndUpdate({ _id: "z" }, { $inc: { n: 1 } }, { ...options, returnDocument: "after" })).toBeNull();
    expect(await c.findOneAndUpdate({ _id: "z" }, { $inc: { n: 1 } }, { ...options, returnDocument: "after", upsert: true })).toEqual({ _id: "z", n: 1 });
    const first = await c.findOneAndUpdate({ k: "key" }, { $setOnInsert: { _id: "k1", v: 1 } }, { ...options, returnDocument: "after", upsert: true });
    const second = await c.findOneAndUpdate({ k: "key" }, { $setOnInsert: { _id: "k2", v: 2 } }, { ...options, returnDocument: "after", upsert: true });
    expect(first).toEqual({ _id: "k1", k: "key", v: 1 });
    expect(second).toEqual(first);
    expect(await c.find({}, { limit: 0 }).toArray()).toHaveLength(3);
  });

  it("enforces declared unique indexes with server-shaped E11000 errors that the adapter maps to DuplicateKeyError", async () => {
    const c = coll();
    await c.createIndexes([{ key: { a: 1, b: 1 }, name: "ab", unique: true }]);
    await c.insertOne({ _id: "1", a: "x", b: "y" });
    const err = await c.insertOne({ _id: "2", a: "x", b: "y" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FakeDuplicateKeyError);
    const mapped = mapMongoError(err, "thing");
    expect(mapped).toBeInstanceOf(DuplicateKeyError);
    expect((mapped as DuplicateKeyError).key).toBe("x/y");
    await c.insertOne({ _id: "3", a: "x", b: "z" });
    await expect(c.updateOne({ _id: "3" }, { $set: { b: "y" } })).rejects.toBeInstanceOf(FakeDuplicateKeyError);
    await expect(c.insertOne({ _id: "1", a: "q", b: "q" })).rejects.toBeInstanceOf(FakeDuplicateKeyError);
  });

  it("$text needs a text index and equality on the index's prefix fields, like the server", async () => {
    const db = new MingoDb();
    const store = new MongoStore(db);
    await store.ensureIndexes();
    const memory = db.collection("memory_items");
    await expect(memory.find({ $text: { $search: "tea" } }).toArray()).rejects.toThrow(/prefix of text index/);
    await expect(db.collection("goals").find({ $text: { $search: "tea" } }).toArray()).rejects.toThrow(/text index required/);
    await expect(memory.find({ personId: "p" }, { sort: { score: { $meta: "textScore" } } }).toArray()).rejects.toThrow(/needs a \$text query/);
  });
});

describe("declared indexes", () => {
  it("declares the store's unique keys and the memory text index", async () => {
    const db = new MingoDb();
    await new MongoStore(db).ensureIndexes();
    const unique = (name: string) => db.collection(name).indexes.filter((i) => i.unique && i.name !== "_id_").map((i) => i.key);
    expect(unique("identities")).toEqual([{ channel: 1, accountId: 1 }]);
    expect(unique("tool_journal")).toEqual([{ idempotencyKey: 1 }]);
    expect(unique("outbox")).toEqual([{ deliveryKey: 1 }]);
    expect(unique("inbound_updates")).toEqual([{ channel: 1, updateId: 1 }]);
    expect(unique("conversation_messages")).toEqual([{ personId: 1, seq: 1 }]);
    expect(unique("local_mailbox")).toEqual([{ seq: 1 }]);
    expect(db.collection("memory_items").indexes.some((i) => Object.values(i.key).includes("text"))).toBe(true);
    // Creating them again is a no-op (the adapter calls ensureIndexes on every start).
    await expect(new MongoStore(db).ensureIndexes()).resolves.toBeUndefined();
    // Every collection declares its indexes (possibly none).
    expect(Object.keys(indexSpecs).sort()).toEqual(Object.keys(collectionNames).sort());
  });
});

describe("adapter rules beyond the shared contract (on the fake)", () => {
  const open = async () => {
    const store = new MongoStore(new MingoDb());
    await store.ensureIndexes();
    return store;
  };

  it("starting a task is a claim: transition to running from pending is a ValidationError", async () => {
    const store = await open();
    const person = await store.persons.createPerson({ displayName: "A" });
    const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
    await expect(store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "running" }, now: at(0) })).rejects.toMatchObject({ code: "VALIDATION" });
    expect((await store.tasks.getTask(task.id))?.state).toEqual({ status: "pending" });
  });

  it("a cursor of a timestamp-ordered listing is refused by an id-ordered one", async () => {
    const store = await open();
    const person = await store.persons.createPerson({ displayName: "A" });
    for (let i = 0; i < 3; i++) await store.audit.appendAudit({ personId: person.id, kind: "k", summary: String(i), data: null, at: at(i) });
    const page = await store.audit.listAudit(person.id, { limit: 1 });
    expect(page.next).toBeTypeOf("string");
    await expect(store.persons.listPersons({ after: page.next! })).rejects.toMatchObject({ code: "VALIDATION" });
  });

  it("stores app ids as _id, dates as Date and opaque JSON as text", async () => {
    const db = new MingoDb();
    const store = new MongoStore(db);
    await store.ensureIndexes();
    const person = await store.persons.createPerson({ displayName: "A" });
    const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t", checkpoint: { $where: "x", "a.b": 1 }, notBefore: at(5) });
    const [doc] = db.collection("tasks").snapshot();
    expect(doc).toMatchObject({ _id: task.id, personId: person.id, status: "pending", notBefore: at(5), dueAt: at(5), checkpoint: '{"$where":"x","a.b":1}' });
    expect((await store.tasks.getTask(task.id))?.checkpoint).toEqual({ $where: "x", "a.b": 1 });
    expect((await store.memory.addMemory({ personId: person.id, kind: "fact", text: "x" })).confidence).toBe(0.7);
  });

  it("model usage is one document per person and local day, raised with $inc in an upsert", async () => {
    const db = new MingoDb();
    const store = new MongoStore(db);
    await store.ensureIndexes();
    const person = await store.persons.createPerson({ displayName: "A" });
    await store.usage.addModelUsage({ personId: person.id, day: "2030-01-01", promptTokens: 10, completionTokens: 2, now: at(1) });
    await store.usage.addModelUsage({ personId: person.id, day: "2030-01-01", promptTokens: 5, completionTokens: 1, now: at(2) });
    const docs = db.collection(collectionNames.modelUsage).snapshot();
    expect(docs).toEqual([{ _id: `${person.id}|2030-01-01`, personId: person.id, day: "2030-01-01", promptTokens: 15, completionTokens: 3, calls: 2, updatedAt: at(2) }]);
  });
});
