import { describe, expect, it } from "vitest";
import { type ContractContext, at, expectCode, makePerson } from "./support.js";

/** Inbound dedupe, notification decisions, the local mailbox, transactions and health. */
export function miscContract(ctx: ContractContext): void {
  describe("inbound", () => {
    it("reports an update id new exactly once per channel, and forgets pruned ones", async () => {
      const store = ctx.store();
      const racing = await Promise.all([store.inbound.markUpdateProcessed("telegram", "900", at(0)), store.inbound.markUpdateProcessed("telegram", "900", at(0))]);
      expect(racing.filter(Boolean)).toHaveLength(1);
      expect(await store.inbound.markUpdateProcessed("telegram", "900", at(1))).toBe(false);
      expect(await store.inbound.markUpdateProcessed("slack", "900", at(1))).toBe(true);
      expect(await store.inbound.markUpdateProcessed("telegram", "901", at(100))).toBe(true);

      expect(await store.inbound.pruneProcessedUpdates(at(50))).toBe(2);
      expect(await store.inbound.markUpdateProcessed("telegram", "901", at(101))).toBe(false);
      expect(await store.inbound.markUpdateProcessed("telegram", "900", at(101))).toBe(true);
      expect(await store.inbound.pruneProcessedUpdates(at(0))).toBe(0);
    });

    it("holds fetched updates until released, per channel, in the order held; a repeat keeps the first payload; prune drops old ones", async () => {
      const store = ctx.store();
      await store.inbound.holdUpdates("telegram", [{ updateId: "10", payload: '{"update_id":10}' }, { updateId: "11", payload: '{"update_id":11}' }], at(0));
      await store.inbound.holdUpdates("telegram", [{ updateId: "11", payload: '{"update_id":11,"again":true}' }, { updateId: "9", payload: '{"update_id":9}' }], at(5));
      await store.inbound.holdUpdates("slack", [{ updateId: "10", payload: "{}" }], at(1));
      expect(await store.inbound.listHeldUpdates("telegram")).toEqual([
        { updateId: "10", payload: '{"update_id":10}', heldAt: at(0) },
        { updateId: "11", payload: '{"update_id":11}', heldAt: at(0) },
        { updateId: "9", payload: '{"update_id":9}', heldAt: at(5) },
      ]);
      await store.inbound.releaseUpdate("telegram", "10");
      await store.inbound.releaseUpdate("telegram", "10");
      await store.inbound.releaseUpdate("telegram", "404");
      expect((await store.inbound.listHeldUpdates("telegram")).map((h) => h.updateId)).toEqual(["11", "9"]);
      expect((await store.inbound.listHeldUpdates("slack")).map((h) => h.updateId)).toEqual(["10"]);
      await store.inbound.holdUpdates("telegram", [], at(6));
      // Held before the dedupe window: its dedupe record may be gone too, so it goes with them.
      expect(await store.inbound.pruneProcessedUpdates(at(3))).toBe(2);
      expect((await store.inbound.listHeldUpdates("telegram")).map((h) => h.updateId)).toEqual(["9"]);
      expect(await store.inbound.listHeldUpdates("slack")).toEqual([]);
    });
  });

  describe("notifications", () => {
    it("lists recent decisions newest first and held ones until digested", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const rec = (decision: "send" | "hold" | "drop", ms: number, personId = person.id) =>
        store.notifications.recordNotification({ personId, taskId: ms === 0 ? task.id : null, text: `n${ms}`, decision, reasons: [`r${ms}`, "quiet hours"], at: at(ms) });
      const n0 = await rec("hold", 0);
      const n1 = await rec("send", 1000);
      const n2 = await rec("hold", 2000);
      await rec("drop", 3000);
      await rec("hold", 1500, other.id);
      expect(n0).toMatchObject({ personId: person.id, taskId: task.id, text: "n0", decision: "hold", reasons: ["r0", "quiet hours"], digestedAt: null, at: at(0) });
      expect(n0.id).toMatch(/^ntf_/);

      expect((await store.notifications.listNotificationsSince(person.id, at(1000))).map((n) => n.text)).toEqual(["n3000", "n2000", "n1000"]);
      expect((await store.notifications.listHeldNotifications(person.id)).map((n) => n.id)).toEqual([n0.id, n2.id]);
      await store.notifications.markDigested([n0.id, n1.id], at(5000));
      expect((await store.notifications.listHeldNotifications(person.id)).map((n) => n.id)).toEqual([n2.id]);
      const since = await store.notifications.listNotificationsSince(person.id, at(0));
      expect(since.find((n) => n.id === n0.id)?.digestedAt).toEqual(at(5000));
      await store.notifications.markDigested([], at(6000));
    });

    it("keeps what a candidate said it was, and finds occurrences and the last monitor report", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const monitor = { subject: "fare LIS", checked: "TAP fares for 12 Dec", values: { price: 140, currency: "EUR", direct: true, seats: null }, thresholds: { price: 5 }, targets: { price: 100 } };
      const full = await store.notifications.recordNotification({
        personId: person.id,
        taskId: null,
        text: "Fare €140",
        decision: "send",
        reasons: ["new"],
        at: at(1000),
        origin: "monitor",
        urgency: "high",
        needsAction: true,
        askedFor: true,
        demoted: "cap",
        deadline: at(9000),
        occurrenceKey: "task_1@2026-01-01T09:00:00.000Z",
        monitor,
        rule: "high-urgency",
      });
      expect(full).toMatchObject({ origin: "monitor", urgency: "high", needsAction: true, askedFor: true, demoted: "cap", deadline: at(9000), occurrenceKey: "task_1@2026-01-01T09:00:00.000Z", monitor, rule: "high-urgency" });
      const plain = await store.notifications.recordNotification({ personId: person.id, taskId: null, text: "old style", decision: "hold", reasons: [], at: at(500) });
      expect(plain).toMatchObject({ origin: null, urgency: null, needsAction: false, askedFor: false, demoted: null, deadline: null, occurrenceKey: null, monitor: null, rule: null });
      expect((await store.notifications.listNotificationsSince(person.id, at(0)))[0]).toEqual(full);

      // A dropped record is not an occurrence taken care of, nor what the person was told.
      await store.notifications.recordNotification({ personId: person.id, taskId: null, text: "dup", decision: "drop", reasons: [], at: at(2000), occurrenceKey: "k2", monitor: { ...monitor, values: { price: 1 } } });
      expect(await store.notifications.findOccurrence(person.id, "k2")).toBeNull();
      expect((await store.notifications.findOccurrence(person.id, "task_1@2026-01-01T09:00:00.000Z"))?.id).toBe(full.id);
      expect(await store.notifications.findOccurrence(other.id, "task_1@2026-01-01T09:00:00.000Z")).toBeNull();

      const later = await store.notifications.recordNotification({ personId: person.id, taskId: null, text: "held", decision: "hold", reasons: [], at: at(3000), monitor: { ...monitor, values: { price: 120 } } });
      expect((await store.notifications.lastMonitorReport(person.id, "fare LIS"))?.id).toBe(later.id);
      expect((await store.notifications.lastMonitorReport(person.id, "fare LIS"))?.monitor?.values).toEqual({ price: 120 });
      expect(await store.notifications.lastMonitorReport(person.id, "fare OPO")).toBeNull();
      expect(await store.notifications.lastMonitorReport(other.id, "fare LIS")).toBeNull();
    });
  });

  describe("local mailbox", () => {
    it("orders messages by an increasing seq; an edit moves the message to the end", async () => {
      const store = ctx.store();
      const buttons = [{ id: "b1", label: "Yes" }];
      const m1 = await store.localMailbox.putLocalMessage({ id: "l1", user: "alice", text: "one", buttons, at: at(1) });
      const m2 = await store.localMailbox.putLocalMessage({ id: "l2", user: "alice", text: "two", buttons: [], at: at(2) });
      const bob = await store.localMailbox.putLocalMessage({ id: "l3", user: "bob", text: "hey", buttons: [], at: at(3) });
      expect(m1).toEqual({ seq: m1.seq, id: "l1", user: "alice", text: "one", buttons, card: null, attachments: [], at: at(1), role: "assistant", channel: "local" });
      expect(m2.seq).toBeGreaterThan(m1.seq);
      expect(bob.seq).toBeGreaterThan(m2.seq);
      await expectCode(store.localMailbox.putLocalMessage({ id: "l1", user: "alice", text: "dup", buttons: [], at: at(4) }), "DUPLICATE");

      expect((await store.localMailbox.listLocalMessages("alice", 0, 10)).map((m) => m.id)).toEqual(["l1", "l2"]);
      expect((await store.localMailbox.listLocalMessages("alice", m1.seq, 10)).map((m) => m.id)).toEqual(["l2"]);
      expect((await store.localMailbox.listLocalMessages("alice", 0, 1)).map((m) => m.id)).toEqual(["l1"]);

      const edited = await store.localMailbox.editLocalMessage("l1", { text: "one (approved)", buttons: [] }, at(10));
      expect(edited).toMatchObject({ id: "l1", user: "alice", text: "one (approved)", buttons: [] });
      expect(edited!.seq).toBeGreaterThan(bob.seq);
      expect(await store.localMailbox.getLocalMessage("l1")).toEqual(edited);
      expect((await store.localMailbox.listLocalMessages("alice", m2.seq, 10)).map((m) => m.text)).toEqual(["one (approved)"]);
      expect(await store.localMailbox.editLocalMessage("missing", { text: "x", buttons: [] }, at(11))).toBeNull();
      // A structured card round-trips as JSON, and an edit can replace or clear it.
      const card = { v: 1, kind: "approval", fields: [{ label: "Body", value: "{\"a\":1}" }], "$key": "x" };
      const withCard = await store.localMailbox.putLocalMessage({ id: "l4", user: "alice", text: "card", buttons, card, at: at(12) });
      expect(withCard.card).toEqual(card);
      expect((await store.localMailbox.editLocalMessage("l4", { text: "done", buttons: [], card: { ...card, status: "approved" } }, at(13)))?.card).toEqual({ ...card, status: "approved" });
      expect((await store.localMailbox.editLocalMessage("l4", { text: "plain", buttons: [] }, at(14)))?.card).toBeNull();
      expect(await store.localMailbox.getLocalMessage("missing")).toBeNull();
    });

    it("keeps a person's chat log: sides and channels, read back newest-first pages by seq", async () => {
      const store = ctx.store();
      const log = "log:per_x";
      const said = await store.localMailbox.putLocalMessage({ id: "c1", user: log, text: "hi from telegram", buttons: [], at: at(1), role: "user", channel: "telegram" });
      expect(said).toMatchObject({ role: "user", channel: "telegram" });
      const ids: string[] = ["c1"];
      for (let i = 2; i <= 5; i++) ids.push((await store.localMailbox.putLocalMessage({ id: `c${i}`, user: log, text: `m${i}`, buttons: [], at: at(i) })).id);
      await store.localMailbox.putLocalMessage({ id: "other", user: "log:per_y", text: "not yours", buttons: [], at: at(6) });
      const last = await store.localMailbox.listLocalMessages(log, 0, 10);
      expect(last.map((m) => m.id)).toEqual(ids);
      const newest = await store.localMailbox.listLocalMessagesBefore(log, Number.MAX_SAFE_INTEGER, 2);
      expect(newest.map((m) => m.id)).toEqual(["c4", "c5"]);
      const older = await store.localMailbox.listLocalMessagesBefore(log, newest[0]!.seq, 10);
      expect(older.map((m) => m.id)).toEqual(["c1", "c2", "c3"]);
      expect(older[0]).toMatchObject({ role: "user", channel: "telegram", text: "hi from telegram" });
      expect(await store.localMailbox.listLocalMessagesBefore(log, older[0]!.seq, 10)).toEqual([]);
    });
  });

  describe("transactions and health", () => {
    it("commits the writes of a successful transaction and returns its value", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const value = await store.transaction(async () => {
        await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "local", text: "a", taskId: null });
        await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "tx", text: "b" }, at(0));
        return 42;
      });
      expect(value).toBe(42);
      expect(await store.conversation.lastSeq(person.id)).toBe(1);
      expect((await store.outbox.listOutbound(person.id)).items).toHaveLength(1);
    });

    it("rolls back every write of a failing transaction (where supported) and rethrows", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const boom = new Error("boom");
      await expect(
        store.transaction(async () => {
          await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "local", text: "a", taskId: null });
          await store.persons.updatePerson(person.id, { displayName: "Changed" });
          throw boom;
        }),
      ).rejects.toBe(boom);
      if (store.supportsTransactions) {
        expect(await store.conversation.lastSeq(person.id)).toBe(0);
        expect((await store.persons.getPerson(person.id))?.displayName).toBe(person.displayName);
      }
    });

    it("reports health", async () => {
      const store = ctx.store();
      const health = await store.health();
      expect(health.ok).toBe(true);
      expect(health.kind).toBe(store.kind);
    });
  });
}
