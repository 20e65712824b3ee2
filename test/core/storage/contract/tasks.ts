import { describe, expect, it } from "vitest";
import { asId, newId } from "../../../../core/ids.js";
import type { Task } from "../../../../core/tasks/index.js";
import { type ContractContext, at, expectCode, makePerson, readAllPages } from "./support.js";

/** Tasks: the state machine, leases and atomic claims. */
export function tasksContract(ctx: ContractContext): void {
  describe("tasks", () => {
    it("creates a pending task with defaults and round-trips plan, checkpoint and dates", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "Book flights" });
      expect(task).toMatchObject({
        personId: person.id,
        goalId: null,
        kind: "wakeup",
        title: "Book flights",
        state: { status: "pending" },
        plan: [],
        cursor: 0,
        checkpoint: {},
        lease: null,
        notBefore: null,
      });
      expect(task.id).toMatch(/^task_/);
      expect(await store.tasks.getTask(task.id)).toEqual(task);

      const goal = await store.goals.createGoal({ personId: person.id, title: "Trip" });
      const checkpoint = { nested: { list: [1, "two", true, null, { deep: -0.5 }] }, unicode: "é✓" };
      const later = await store.tasks.createTask({
        kind: "checkin",
        personId: person.id,
        goalId: goal.id,
        title: "Later",
        plan: ["search", "compare"],
        checkpoint,
        notBefore: at(60_000),
      });
      const read = await store.tasks.getTask(later.id);
      expect(read).toEqual(later);
      expect(read?.checkpoint).toEqual(checkpoint);
      expect(read?.notBefore).toEqual(at(60_000));
      expect(read?.kind).toBe("checkin");
      expect(await store.tasks.getTask(asId("task", "task_missing"))).toBeNull();
    });

    it("claims a pending task with a lease; of two concurrent claims exactly one wins", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const [a, b] = await Promise.all([
        store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 30_000 }),
        store.tasks.claimTask({ taskId: task.id, owner: "B", now: at(0), leaseMs: 30_000 }),
      ]);
      const winners = [a, b].filter((t): t is Task => t !== null);
      expect(winners).toHaveLength(1);
      const won = winners[0]!;
      expect(won.state).toEqual({ status: "running" });
      expect(won.lease).toEqual({ owner: a ? "A" : "B", until: at(30_000) });
      expect(await store.tasks.getTask(task.id)).toEqual(won);
      // Still leased: nobody else gets it, not even the same owner a second time.
      expect(await store.tasks.claimTask({ taskId: task.id, owner: "C", now: at(29_999), leaseMs: 1000 })).toBeNull();
    });

    it("does not claim a pending task before notBefore", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t", notBefore: at(10_000) });
      expect(await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(9_999), leaseMs: 1000 })).toBeNull();
      expect(await store.tasks.claimDueTask({ owner: "A", now: at(9_999), leaseMs: 1000 })).toBeNull();
      const claimed = await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(10_000), leaseMs: 1000 });
      expect(claimed?.lease).toEqual({ owner: "A", until: at(11_000) });
    });

    it("lets another worker take over a task whose lease expired, and locks the old owner out", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 1000 });
      expect(await store.tasks.claimDueTask({ owner: "B", now: at(500), leaseMs: 1000 })).toBeNull();
      const taken = (await store.tasks.claimDueTask({ owner: "B", now: at(1000), leaseMs: 5000 }))?.task;
      expect(taken?.id).toBe(task.id);
      expect(taken?.lease).toEqual({ owner: "B", until: at(6000) });

      await expectCode(
        store.tasks.saveCheckpoint({ taskId: task.id, owner: "A", cursor: 1, checkpoint: { by: "A" }, now: at(1001), leaseMs: 1000 }),
        "CONFLICT",
      );
      await expectCode(store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "done", result: "A" }, now: at(1001) }), "CONFLICT");
      const current = await store.tasks.getTask(task.id);
      expect(current?.lease?.owner).toBe("B");
      expect(current?.cursor).toBe(0);

      const again = await store.tasks.claimTask({ taskId: task.id, owner: "C", now: at(6000), leaseMs: 1000 });
      expect(again?.lease).toEqual({ owner: "C", until: at(7000) });
    });

    it("lets the owner of a lapsed lease finish while nobody took the task over", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 1000 });
      const saved = await store.tasks.saveCheckpoint({ taskId: task.id, owner: "A", cursor: 1, checkpoint: "late", now: at(5000), leaseMs: 1000 });
      expect(saved.lease).toEqual({ owner: "A", until: at(6000) });
      const done = await store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "done", result: "late but fine" }, now: at(5500) });
      expect(done.state).toEqual({ status: "done", result: "late but fine" });
    });

    it("claims waiting tasks when their time comes; a met condition resumes exactly the task waiting for it, once", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const timed = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "timed" });
      const evented = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "evented", checkpoint: { note: "keep me" } });
      const hookId = newId("hook");
      // Only a waiting task can be resumed.
      expect(await store.tasks.resumeWaitingTask({ taskId: timed.id, wait: { kind: "reply" }, input: { kind: "x" }, now: at(0) })).toBeNull();
      await store.tasks.claimTask({ taskId: timed.id, owner: "A", now: at(0), leaseMs: 1000 });
      await store.tasks.claimTask({ taskId: evented.id, owner: "A", now: at(0), leaseMs: 1000 });
      const waiting = await store.tasks.transitionTask({ taskId: timed.id, owner: "A", to: { status: "waiting", wait: { kind: "time", until: at(50_000) } }, now: at(10) });
      expect(waiting.state).toEqual({ status: "waiting", wait: { kind: "time", until: at(50_000) } });
      expect(waiting.lease).toBeNull();
      await store.tasks.transitionTask({ taskId: evented.id, owner: "A", to: { status: "waiting", wait: { kind: "event", hookId } }, now: at(10) });

      expect(await store.tasks.claimTask({ taskId: timed.id, owner: "B", now: at(49_999), leaseMs: 1000 })).toBeNull();
      // A time wait is resumed early only as a time wait (a recurring job whose parked call can go on).
      expect(await store.tasks.resumeWaitingTask({ taskId: evented.id, wait: { kind: "time" }, input: { kind: "x" }, now: at(20) })).toBeNull();
      const early = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "early", checkpoint: { note: "n" } });
      await store.tasks.claimTask({ taskId: early.id, owner: "A", now: at(0), leaseMs: 1000 });
      await store.tasks.transitionTask({ taskId: early.id, owner: "A", to: { status: "waiting", wait: { kind: "time", until: at(90_000) } }, now: at(10) });
      const resumedEarly = await store.tasks.resumeWaitingTask({ taskId: early.id, wait: { kind: "time" }, input: { kind: "approval" }, now: at(20) });
      expect(resumedEarly?.state).toEqual({ status: "pending" });
      expect(resumedEarly?.checkpoint).toEqual({ note: "n", input: { kind: "approval" } });
      expect(await store.tasks.resumeWaitingTask({ taskId: early.id, wait: { kind: "time" }, input: { kind: "again" }, now: at(21) })).toBeNull();
      expect((await store.tasks.claimTask({ taskId: early.id, owner: "B", now: at(30), leaseMs: 1000 }))?.id).toBe(early.id);
      await store.tasks.transitionTask({ taskId: early.id, owner: "B", to: { status: "done", result: null }, now: at(31) });
      expect(await store.tasks.claimTask({ taskId: evented.id, owner: "B", now: at(99_999), leaseMs: 1000 })).toBeNull();
      expect(await store.tasks.claimDueTask({ owner: "B", now: at(49_999), leaseMs: 1000 })).toBeNull();
      expect(await store.tasks.nextDueAt()).toEqual(at(50_000));

      const due = await store.tasks.claimDueTask({ owner: "B", now: at(50_000), leaseMs: 1000 });
      expect(due?.task.id).toBe(timed.id);
      expect(due?.dueAt).toEqual(at(50_000));
      expect(due?.task.state).toEqual({ status: "running" });
      await store.tasks.transitionTask({ taskId: timed.id, owner: "B", to: { status: "done", result: null }, now: at(50_001) });
      // An event wait is never "due" by time.
      expect(await store.tasks.claimDueTask({ owner: "B", now: at(10_000_000), leaseMs: 1000 })).toBeNull();

      // The wrong condition (another hook, a reply) does not resume it; the right one does, once.
      expect(await store.tasks.resumeWaitingTask({ taskId: evented.id, wait: { kind: "event", hookId: newId("hook") }, input: { kind: "x" }, now: at(60_000) })).toBeNull();
      expect(await store.tasks.resumeWaitingTask({ taskId: evented.id, wait: { kind: "reply" }, input: { kind: "x" }, now: at(60_000) })).toBeNull();
      const input = { kind: "event", body: "price dropped" };
      const [x, y] = await Promise.all([
        store.tasks.resumeWaitingTask({ taskId: evented.id, wait: { kind: "event", hookId }, input, now: at(60_000) }),
        store.tasks.resumeWaitingTask({ taskId: evented.id, wait: { kind: "event", hookId }, input, now: at(60_000) }),
      ]);
      const resumed = [x, y].filter((t) => t !== null);
      expect(resumed).toHaveLength(1);
      expect(resumed[0]?.state).toEqual({ status: "pending" });
      expect(resumed[0]?.checkpoint).toEqual({ note: "keep me", input });
      // Pending again: due at once.
      const claimed = await store.tasks.claimDueTask({ owner: "C", now: at(60_001), leaseMs: 1000 });
      expect(claimed?.task.id).toBe(evented.id);
    });

    it("binds new messages to the person's pending turn, and starts a new turn once it is claimed", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const first = await store.tasks.bindTurnMessage({ personId: person.id, seq: 3, now: at(0) });
      expect(first).toMatchObject({ kind: "turn", state: { status: "pending" }, checkpoint: { fromSeq: 3, toSeq: 3 } });
      const extended = await store.tasks.bindTurnMessage({ personId: person.id, seq: 5, now: at(1) });
      expect(extended.id).toBe(first.id);
      expect(extended.checkpoint).toEqual({ fromSeq: 3, toSeq: 5 });
      const elsewhere = await store.tasks.bindTurnMessage({ personId: other.id, seq: 1, now: at(1) });
      expect(elsewhere.id).not.toBe(first.id);
      // Claimed: its range is frozen, the next message gets a turn of its own.
      expect((await store.tasks.claimDueTask({ owner: "A", now: at(2), leaseMs: 1000, personId: person.id }))?.task.id).toBe(first.id);
      const next = await store.tasks.bindTurnMessage({ personId: person.id, seq: 6, now: at(3) });
      expect(next.id).not.toBe(first.id);
      expect(next.checkpoint).toEqual({ fromSeq: 6, toSeq: 6 });
      expect((await store.tasks.getTask(first.id))?.checkpoint).toEqual({ fromSeq: 3, toSeq: 5 });
    });

    it("renews the leases one owner holds, and ends foreign leases at once", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const mine = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "mine" });
      const theirs = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "theirs" });
      await store.tasks.claimTask({ taskId: mine.id, owner: "A", now: at(0), leaseMs: 1000 });
      await store.tasks.claimTask({ taskId: theirs.id, owner: "DEAD", now: at(0), leaseMs: 600_000 });
      expect(await store.tasks.renewLeases({ owner: "A", now: at(900), leaseMs: 1000 })).toBe(1);
      expect((await store.tasks.getTask(mine.id))?.lease).toEqual({ owner: "A", until: at(1900) });
      expect(await store.tasks.claimDueTask({ owner: "A", now: at(1000), leaseMs: 1000 })).toBeNull();
      expect(await store.tasks.expireForeignLeases({ owner: "A", now: at(1000) })).toBe(1);
      const taken = await store.tasks.claimDueTask({ owner: "A", now: at(1000), leaseMs: 1000 });
      expect(taken?.task.id).toBe(theirs.id);
      expect((await store.tasks.getTask(mine.id))?.lease?.owner).toBe("A");
    });

    it("runs a person's turns in message order: a later turn waits while an earlier one is open", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const first = await store.tasks.bindTurnMessage({ personId: person.id, seq: 1, now: at(0) });
      expect((await store.tasks.claimDueTask({ owner: "DEAD", now: at(0), leaseMs: 1000 }))?.task.id).toBe(first.id);
      const second = await store.tasks.bindTurnMessage({ personId: person.id, seq: 2, now: at(1) });
      // The first turn's process died; after its lease ended both are due, the first goes first.
      expect(await store.tasks.claimDueTask({ owner: "A", now: at(500), leaseMs: 1000 })).toBeNull();
      expect(await store.tasks.nextDueAt()).toEqual(at(1000));
      expect((await store.tasks.claimDueTask({ owner: "A", now: at(1000), leaseMs: 1000 }))?.task.id).toBe(first.id);
      expect(await store.tasks.claimDueTask({ owner: "B", now: at(1000), leaseMs: 1000 })).toBeNull();
      await store.tasks.transitionTask({ taskId: first.id, owner: "A", to: { status: "done", result: null }, now: at(1001) });
      expect((await store.tasks.claimDueTask({ owner: "B", now: at(1002), leaseMs: 1000 }))?.task.id).toBe(second.id);
      // Another kind of work of the same person is not held back by an open turn.
      const wake = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "w" });
      expect((await store.tasks.claimDueTask({ owner: "C", now: at(1003), leaseMs: 1000 }))?.task.id).toBe(wake.id);
      expect((await store.tasks.listTasks({ personId: person.id, kind: ["turn"] })).items.map((t) => t.id)).toEqual([first.id, second.id]);
    });

    it("reports a pending task without notBefore as due since its creation", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "now" });
      const claimed = await store.tasks.claimDueTask({ owner: "A", now: at(10_000), leaseMs: 1000 });
      expect(claimed?.task.id).toBe(task.id);
      expect(claimed?.dueAt).toEqual(task.createdAt);
    });

    it("leaves busy persons out of claims and of the next due time", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      await store.tasks.createTask({ kind: "wakeup", personId: a.id, title: "a", notBefore: at(1000) });
      const bTask = await store.tasks.createTask({ kind: "wakeup", personId: b.id, title: "b", notBefore: at(2000) });
      expect(await store.tasks.nextDueAt({ excludePersons: [a.id] })).toEqual(at(2000));
      expect(await store.tasks.claimDueTask({ owner: "W", now: at(1500), leaseMs: 1000, excludePersons: [a.id] })).toBeNull();
      expect((await store.tasks.claimDueTask({ owner: "W", now: at(2500), leaseMs: 1000, excludePersons: [a.id] }))?.task.id).toBe(bTask.id);
    });

    it("holds a task (never due) and releases it to its time", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "held", notBefore: at(1000) });
      await store.tasks.claimDueTask({ owner: "A", now: at(1000), leaseMs: 1000 });
      const held = await store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "waiting", wait: { kind: "held", until: at(1000) } }, now: at(1001) });
      expect(held.state).toEqual({ status: "waiting", wait: { kind: "held", until: at(1000) } });
      expect(await store.tasks.nextDueAt()).toBeNull();
      expect((await store.tasks.findWaitingTasks({ kind: "held", personId: person.id })).map((t) => t.id)).toEqual([task.id]);
      await store.tasks.transitionTask({ taskId: task.id, owner: null, to: { status: "waiting", wait: { kind: "time", until: at(1000) } }, now: at(5000) });
      expect((await store.tasks.claimDueTask({ owner: "A", now: at(5000), leaseMs: 1000 }))?.dueAt).toEqual(at(1000));
    });

    it("claims due tasks earliest first, optionally for one person", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      const late = await store.tasks.createTask({ kind: "wakeup", personId: a.id, title: "late", notBefore: at(3000) });
      const early = await store.tasks.createTask({ kind: "wakeup", personId: a.id, title: "early", notBefore: at(1000) });
      const bTask = await store.tasks.createTask({ kind: "wakeup", personId: b.id, title: "b", notBefore: at(2000) });

      expect((await store.tasks.claimDueTask({ owner: "W", now: at(5000), leaseMs: 1000, personId: b.id }))?.task.id).toBe(bTask.id);
      expect((await store.tasks.claimDueTask({ owner: "W", now: at(5000), leaseMs: 100_000 }))?.task.id).toBe(early.id);
      expect((await store.tasks.claimDueTask({ owner: "W", now: at(5000), leaseMs: 100_000 }))?.task.id).toBe(late.id);
      expect(await store.tasks.claimDueTask({ owner: "W", now: at(5000), leaseMs: 100_000, personId: a.id })).toBeNull();
    });

    it("never hands one task to two concurrent workers", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const ids = new Set<string>();
      for (let i = 0; i < 12; i++) ids.add((await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: `t${i}` })).id);
      const claimedBy = new Map<string, string[]>();
      const worker = async (owner: string) => {
        for (;;) {
          const task = (await store.tasks.claimDueTask({ owner, now: at(1000), leaseMs: 60_000 }))?.task;
          if (!task) return;
          claimedBy.set(task.id, [...(claimedBy.get(task.id) ?? []), owner]);
          await store.tasks.transitionTask({ taskId: task.id, owner, to: { status: "done", result: owner }, now: at(1001) });
        }
      };
      await Promise.all([worker("W1"), worker("W2"), worker("W3")]);
      expect(new Set(claimedBy.keys())).toEqual(ids);
      for (const owners of claimedBy.values()) expect(owners).toHaveLength(1);
      const done = await store.tasks.listTasks({ personId: person.id, status: ["done"] }, { limit: 100 });
      expect(done.items).toHaveLength(12);
    });

    it("moves through legal transitions, releasing the lease when leaving running", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 1000 });
      const back = await store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "pending" }, now: at(5) });
      expect(back.state).toEqual({ status: "pending" });
      expect(back.lease).toBeNull();
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(10), leaseMs: 1000 });
      const done = await store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "done", result: "booked" }, now: at(20) });
      expect(done.state).toEqual({ status: "done", result: "booked" });
      expect(done.lease).toBeNull();
      expect(await store.tasks.getTask(task.id)).toEqual(done);

      const failing = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "f" });
      await store.tasks.claimTask({ taskId: failing.id, owner: "A", now: at(0), leaseMs: 1000 });
      const failed = await store.tasks.transitionTask({ taskId: failing.id, owner: "A", to: { status: "failed", error: "site down" }, now: at(1) });
      expect(failed.state).toEqual({ status: "failed", error: "site down" });

      const cancelled = await store.tasks.transitionTask({
        taskId: (await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "c" })).id,
        owner: null,
        to: { status: "cancelled", reason: null },
        now: at(1),
      });
      expect(cancelled.state).toEqual({ status: "cancelled", reason: null });
    });

    it("rejects illegal transitions and leaves the task unchanged", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      await expectCode(
        store.tasks.transitionTask({ taskId: task.id, owner: null, to: { status: "waiting", wait: { kind: "reply" } }, now: at(1) }),
        "ILLEGAL_TRANSITION",
      );
      await expectCode(store.tasks.transitionTask({ taskId: task.id, owner: null, to: { status: "done", result: null }, now: at(1) }), "ILLEGAL_TRANSITION");
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 1000 });
      await store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "done", result: null }, now: at(2) });
      for (const to of [{ status: "cancelled", reason: "late" }, { status: "pending" }, { status: "failed", error: "x" }, { status: "done", result: "again" }] as const) {
        await expectCode(store.tasks.transitionTask({ taskId: task.id, owner: "A", to, now: at(3) }), "ILLEGAL_TRANSITION");
      }
      expect((await store.tasks.getTask(task.id))?.state).toEqual({ status: "done", result: null });
      expect(await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(10_000), leaseMs: 1000 })).toBeNull();
      await expectCode(store.tasks.transitionTask({ taskId: asId("task", "task_missing"), owner: null, to: { status: "cancelled", reason: null }, now: at(1) }), "NOT_FOUND");
    });

    it("requires the lease to change a running task", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 10_000 });
      await expectCode(store.tasks.transitionTask({ taskId: task.id, owner: "B", to: { status: "done", result: null }, now: at(1) }), "CONFLICT");
      await expectCode(store.tasks.transitionTask({ taskId: task.id, owner: null, to: { status: "cancelled", reason: "user" }, now: at(1) }), "CONFLICT");
      expect((await store.tasks.getTask(task.id))?.state).toEqual({ status: "running" });
    });

    it("saves checkpoints under the lease and extends it", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t", plan: ["a", "b"] });
      await expectCode(
        store.tasks.saveCheckpoint({ taskId: task.id, owner: "A", cursor: 1, checkpoint: null, now: at(0), leaseMs: 1000 }),
        "CONFLICT",
      );
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 1000 });
      const checkpoint = { step: 1, seen: ["https://example.com/a"], price: { amount: 12_345, currency: "EUR" }, ok: false };
      const saved = await store.tasks.saveCheckpoint({ taskId: task.id, owner: "A", cursor: 1, checkpoint, now: at(900), leaseMs: 1000 });
      expect(saved).toMatchObject({ cursor: 1, checkpoint, plan: ["a", "b"], lease: { owner: "A", until: at(1900) } });
      const replanned = await store.tasks.saveCheckpoint({ taskId: task.id, owner: "A", cursor: 2, checkpoint: [1, 2], plan: ["a", "b", "c"], now: at(1000), leaseMs: 5000 });
      expect(replanned).toMatchObject({ cursor: 2, checkpoint: [1, 2], plan: ["a", "b", "c"], lease: { owner: "A", until: at(6000) } });
      expect(await store.tasks.getTask(task.id)).toEqual(replanned);
      // The extended lease keeps others out past the original expiry.
      expect(await store.tasks.claimDueTask({ owner: "B", now: at(2000), leaseMs: 1000 })).toBeNull();
      await expectCode(
        store.tasks.saveCheckpoint({ taskId: task.id, owner: "B", cursor: 9, checkpoint: null, now: at(1001), leaseMs: 1000 }),
        "CONFLICT",
      );
    });

    it("lists tasks by person, goal and status in creation order across pages", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const goal = await store.goals.createGoal({ personId: person.id, title: "g" });
      const created: Task[] = [];
      for (let i = 0; i < 5; i++) created.push(await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: `t${i}`, goalId: i % 2 ? goal.id : null }));
      await store.tasks.createTask({ kind: "wakeup", personId: other.id, title: "other" });
      await store.tasks.transitionTask({ taskId: created[4]!.id, owner: null, to: { status: "cancelled", reason: "no" }, now: at(1) });

      const all = await readAllPages((page) => store.tasks.listTasks({ personId: person.id }, page), 2);
      expect(all.items.map((t) => t.title)).toEqual(["t0", "t1", "t2", "t3", "t4"]);
      expect((await store.tasks.listTasks({ goalId: goal.id })).items.map((t) => t.title)).toEqual(["t1", "t3"]);
      expect((await store.tasks.listTasks({ personId: person.id, status: ["pending"] })).items.map((t) => t.title)).toEqual(["t0", "t1", "t2", "t3"]);
      expect((await store.tasks.listTasks({ status: ["cancelled"] })).items.map((t) => t.title)).toEqual(["t4"]);
    });

    it("finds tasks waiting for an event, an approval or a reply", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const hookId = newId("hook");
      const approvalId = newId("approval");
      const make = async (personId: typeof person.id, wait: Parameters<typeof waitFor>[0]) => {
        const task = await store.tasks.createTask({ kind: "wakeup", personId, title: wait.kind });
        await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 1000 });
        return waitFor(wait, task.id);
      };
      const waitFor = (wait: { kind: "event"; hookId: typeof hookId } | { kind: "approval"; approvalId: typeof approvalId } | { kind: "reply" }, taskId: Task["id"]) =>
        store.tasks.transitionTask({ taskId, owner: "A", to: { status: "waiting", wait }, now: at(1) });
      const onEvent = await make(person.id, { kind: "event", hookId });
      const onApproval = await make(person.id, { kind: "approval", approvalId });
      const onReply = await make(person.id, { kind: "reply" });
      await make(other.id, { kind: "reply" });

      expect((await store.tasks.findWaitingTasks({ kind: "event", hookId })).map((t) => t.id)).toEqual([onEvent.id]);
      expect((await store.tasks.findWaitingTasks({ kind: "approval", approvalId })).map((t) => t.id)).toEqual([onApproval.id]);
      expect((await store.tasks.findWaitingTasks({ kind: "reply", personId: person.id })).map((t) => t.id)).toEqual([onReply.id]);
      expect(await store.tasks.findWaitingTasks({ kind: "event", hookId: newId("hook") })).toEqual([]);
      expect((await store.tasks.getTask(onApproval.id))?.state).toEqual({ status: "waiting", wait: { kind: "approval", approvalId } });
    });
  });
}
