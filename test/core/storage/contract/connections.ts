import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import type { NewConnectionChange } from "../../../../core/connections/index.js";
import { type ContractContext, at, expectCode, makePerson } from "./support.js";

const change = (key: string, over: Partial<NewConnectionChange> = {}): NewConnectionChange => ({
  key,
  kind: "email.arrived",
  topic: null,
  occurredAt: at(1000),
  data: { subject: `mail ${key}`, nested: { "a.b": 1, $x: [true, null] } },
  ...over,
});

/** Connections, sync cursors and connection changes (issue 21). */
export function connectionsContract(ctx: ContractContext): void {
  describe("connections", () => {
    it("creates, lists, updates, records status and deletes a person's connections", async () => {
      const store = ctx.store();
      const ana = await makePerson(store);
      const ben = await makePerson(store);
      const settings = { address: "ana@example.test", imap: { host: "127.0.0.1", port: 143 }, "odd.key": "$v" };
      const mail = await store.connections.createConnection({ personId: ana.id, kind: "email", label: "ana@example.test", settings, capabilities: ["read"], source: "person" });
      expect(mail.id).toMatch(/^conn_/);
      expect(mail).toMatchObject({ personId: ana.id, kind: "email", label: "ana@example.test", settings, capabilities: ["read"], source: "person", status: { state: "unknown", lastSyncAt: null, lastError: null } });
      const cal = await store.connections.createConnection({ personId: ana.id, kind: "caldav", label: "Family", settings: {}, capabilities: ["read", "write"], source: "config" });
      await store.connections.createConnection({ personId: ben.id, kind: "email", label: "ben@example.test", settings: {}, capabilities: [], source: "person" });
      expect((await store.connections.listConnections({ personId: ana.id })).map((c) => c.id)).toEqual([mail.id, cal.id]);
      expect((await store.connections.listConnections({ kind: "email" })).map((c) => c.label)).toEqual(["ana@example.test", "ben@example.test"]);
      expect(await store.connections.listConnections()).toHaveLength(3);

      const updated = await store.connections.updateConnection(mail.id, { capabilities: ["read", "send"], label: "Ana" }, at(500));
      expect(updated).toMatchObject({ capabilities: ["read", "send"], label: "Ana", settings, updatedAt: at(500) });
      await expectCode(store.connections.updateConnection(asId("connection", "conn_missing"), { label: "x" }, at(1)), "NOT_FOUND");

      const status = { state: "error" as const, mode: "waiting", lastSyncAt: at(100), lastError: "The IMAP server refused the password.", checkedAt: at(200) };
      await store.connections.setConnectionStatus(mail.id, status);
      expect((await store.connections.getConnection(mail.id))?.status).toEqual(status);
      await store.connections.setConnectionStatus(asId("connection", "conn_missing"), status);

      expect(await store.connections.deleteConnection(mail.id)).toBe(true);
      expect(await store.connections.deleteConnection(mail.id)).toBe(false);
      expect(await store.connections.getConnection(mail.id)).toBeNull();
    });

    it("commits changes with their cursor, drops repeated keys, dispatches in seq order", async () => {
      const store = ctx.store();
      const ana = await makePerson(store);
      const ben = await makePerson(store);
      const conn = await store.connections.createConnection({ personId: ana.id, kind: "email", label: "a", settings: {}, capabilities: ["read"], source: "person" });
      const other = await store.connections.createConnection({ personId: ben.id, kind: "email", label: "b", settings: {}, capabilities: ["read"], source: "person" });
      expect(await store.changes.readCursor(conn.id, "INBOX")).toBeNull();
      expect(await store.changes.latestSeq(ana.id)).toBe(0);

      const first = await store.changes.commitChanges({ connectionId: conn.id, personId: ana.id, source: "INBOX", cursor: { uidValidity: "7", lastUid: 2 }, changes: [change("m1"), change("m2")], now: at(2000) });
      expect(first.map((c) => c.key)).toEqual(["m1", "m2"]);
      expect(first[1]!.seq).toBeGreaterThan(first[0]!.seq);
      expect(first[0]).toMatchObject({ connectionId: conn.id, personId: ana.id, source: "INBOX", kind: "email.arrived", topic: null, occurredAt: at(1000), data: change("m1").data, dispatchedAt: null });
      expect(await store.changes.readCursor(conn.id, "INBOX")).toEqual({ uidValidity: "7", lastUid: 2 });

      // A repeated pass (a crash before the cursor moved) records nothing twice, but moves the cursor.
      const again = await store.changes.commitChanges({ connectionId: conn.id, personId: ana.id, source: "INBOX", cursor: { uidValidity: "7", lastUid: 3 }, changes: [change("m2"), change("m3")], now: at(3000) });
      expect(again.map((c) => c.key)).toEqual(["m3"]);
      expect(await store.changes.readCursor(conn.id, "INBOX")).toEqual({ uidValidity: "7", lastUid: 3 });
      // The same key in another source or connection is another change.
      const elsewhere = await store.changes.commitChanges({ connectionId: other.id, personId: ben.id, source: "INBOX", cursor: {}, changes: [change("m1")], now: at(3000) });
      expect(elsewhere).toHaveLength(1);
      expect(await store.changes.latestSeq(ana.id)).toBe(again[0]!.seq);
      expect(await store.changes.latestSeq(ben.id)).toBe(elsewhere[0]!.seq);

      expect((await store.changes.listChangesAfter({ personId: ana.id, kind: "email.arrived", afterSeq: first[0]!.seq, limit: 10 })).map((c) => c.key)).toEqual(["m2", "m3"]);
      expect((await store.changes.listChangesAfter({ personId: ana.id, kind: "email.arrived", afterSeq: 0, limit: 1 })).map((c) => c.key)).toEqual(["m1"]);
      expect(await store.changes.listChangesAfter({ personId: ana.id, kind: "email.sent", afterSeq: 0, limit: 10 })).toEqual([]);
      const pending = await store.changes.listUndispatched(10);
      expect(pending.map((c) => c.key)).toEqual(["m1", "m2", "m3", "m1"]);
      expect((await store.changes.listUndispatched(2)).map((c) => c.seq)).toEqual(pending.slice(0, 2).map((c) => c.seq));
      await store.changes.markDispatched(pending[0]!.seq, at(4000));
      await store.changes.markDispatched(pending[0]!.seq, at(9000));
      expect((await store.changes.listUndispatched(10)).map((c) => c.seq)).toEqual(pending.slice(1).map((c) => c.seq));

      await expectCode(store.changes.commitChanges({ connectionId: asId("connection", "conn_missing"), personId: ana.id, source: "INBOX", cursor: {}, changes: [change("x")], now: at(1) }), "NOT_FOUND");
    });

    it("counts records per topic, records dispatched ones, prunes and deletes with the connection", async () => {
      const store = ctx.store();
      const ana = await makePerson(store);
      const conn = await store.connections.createConnection({ personId: ana.id, kind: "email", label: "a", settings: {}, capabilities: ["send"], source: "person" });
      const sent = (key: string, ms: number, topic = "thread-1") => change(key, { kind: "email.sent", topic, occurredAt: at(ms), dispatched: true });
      const recorded = await store.changes.commitChanges({ connectionId: conn.id, personId: ana.id, source: "sent", cursor: {}, changes: [sent("s1", 0), sent("s2", 50_000), sent("s3", 60_000, "thread-2")], now: at(60_000) });
      expect(recorded.every((c) => c.dispatchedAt !== null)).toBe(true);
      expect(await store.changes.listUndispatched(10)).toEqual([]);
      expect(await store.changes.countChanges({ connectionId: conn.id, kind: "email.sent", topic: "thread-1", since: at(0) })).toBe(2);
      expect(await store.changes.countChanges({ connectionId: conn.id, kind: "email.sent", topic: "thread-1", since: at(1) })).toBe(1);
      expect(await store.changes.countChanges({ connectionId: conn.id, kind: "email.arrived", topic: "thread-1", since: at(0) })).toBe(0);
      // A record is found by its key within (connection, source) only.
      expect(await store.changes.findChange({ connectionId: conn.id, source: "sent", key: "s2" })).toMatchObject({ key: "s2", kind: "email.sent", topic: "thread-1", occurredAt: at(50_000), seq: recorded[1]!.seq });
      expect(await store.changes.findChange({ connectionId: conn.id, source: "INBOX", key: "s2" })).toBeNull();
      expect(await store.changes.findChange({ connectionId: conn.id, source: "sent", key: "s9" })).toBeNull();
      await store.changes.commitChanges({ connectionId: conn.id, personId: ana.id, source: "INBOX", cursor: {}, changes: [change("new", { occurredAt: at(0) })], now: at(1) });
      expect(await store.changes.pruneChanges(at(55_000))).toBe(2);
      expect(await store.changes.countChanges({ connectionId: conn.id, kind: "email.sent", topic: "thread-1", since: at(0) })).toBe(0);
      expect(await store.changes.listUndispatched(10)).toHaveLength(1);
      expect(await store.connections.deleteConnection(conn.id)).toBe(true);
      expect(await store.changes.listUndispatched(10)).toEqual([]);
      expect(await store.changes.readCursor(conn.id, "sent")).toBeNull();
    });

    it("a task waits for changes after a seq and is resumed only by that wait", async () => {
      const store = ctx.store();
      const ana = await makePerson(store);
      const task = await store.tasks.createTask({ personId: ana.id, kind: "wakeup", title: "watch the inbox" });
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 60_000 });
      const waiting = await store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "waiting", wait: { kind: "change", afterSeq: 7 } }, now: at(1) });
      expect(waiting.state).toEqual({ status: "waiting", wait: { kind: "change", afterSeq: 7 } });
      expect((await store.tasks.findWaitingTasks({ kind: "change", personId: ana.id })).map((t) => t.id)).toEqual([task.id]);
      expect(await store.tasks.findWaitingTasks({ kind: "reply", personId: ana.id })).toEqual([]);
      // A stale dispatch (the task waits after another seq by now) does not resume it.
      expect(await store.tasks.resumeWaitingTask({ taskId: task.id, wait: { kind: "change", afterSeq: 6 }, input: { kind: "x" }, now: at(2) })).toBeNull();
      const resumed = await store.tasks.resumeWaitingTask({ taskId: task.id, wait: { kind: "change", afterSeq: 7 }, input: { kind: "change", seq: 9 }, now: at(3) });
      expect(resumed?.state).toEqual({ status: "pending" });
      expect(await store.tasks.resumeWaitingTask({ taskId: task.id, wait: { kind: "change", afterSeq: 7 }, input: { kind: "x" }, now: at(4) })).toBeNull();
      expect(await store.tasks.findWaitingTasks({ kind: "change", personId: ana.id })).toEqual([]);
    });

    it("creates a task already waiting for a change (a watch): never due by time", async () => {
      const store = ctx.store();
      const ana = await makePerson(store);
      const watch = await store.tasks.createTask({ personId: ana.id, kind: "wakeup", title: "tell me when the school writes", waitsFor: { kind: "change", afterSeq: 3 } });
      expect(watch.state).toEqual({ status: "waiting", wait: { kind: "change", afterSeq: 3 } });
      expect(await store.tasks.claimDueTask({ owner: "A", now: at(10 ** 9), leaseMs: 1000 })).toBeNull();
      expect(await store.tasks.nextDueAt()).toBeNull();
      expect((await store.tasks.findWaitingTasks({ kind: "change", personId: ana.id })).map((t) => t.id)).toEqual([watch.id]);
    });
  });
}
