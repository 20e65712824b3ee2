import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import { type ContractContext, at, expectCode, makePerson, readAllPages } from "./support.js";

/** The tool-call journal and personal memory (including full-text search). */
export function journalMemoryContract(ctx: ContractContext): void {
  describe("journal", () => {
    it("records an intent once per idempotency key and its outcome once", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const args = { to: "bob@example.com", cc: [], body: "Hi\nthere", n: 3.25, flag: true, none: null };
      const intent = await store.journal.recordIntent({ taskId: task.id, step: 1, idempotencyKey: `${task.id}:1`, tool: "email.send", args, sideEffect: true, intentAt: at(1) });
      expect(intent).toEqual({ taskId: task.id, step: 1, idempotencyKey: `${task.id}:1`, tool: "email.send", args, sideEffect: true, intentAt: at(1), outcome: null });
      expect(await store.journal.getEntry(`${task.id}:1`)).toEqual(intent);
      await expectCode(
        store.journal.recordIntent({ taskId: task.id, step: 1, idempotencyKey: `${task.id}:1`, tool: "email.send", args: {}, sideEffect: true }),
        "DUPLICATE",
      );

      const done = await store.journal.recordOutcome(`${task.id}:1`, { ok: true, result: { messageId: "<x@y>", accepted: ["bob"] } }, at(2));
      expect(done.outcome).toEqual({ ok: true, result: { messageId: "<x@y>", accepted: ["bob"] }, at: at(2) });
      await expectCode(store.journal.recordOutcome(`${task.id}:1`, { ok: false, error: "late" }, at(3)), "CONFLICT");
      expect((await store.journal.getEntry(`${task.id}:1`))?.outcome).toEqual(done.outcome);

      const read = await store.journal.recordIntent({ taskId: task.id, step: 2, idempotencyKey: `${task.id}:2`, tool: "web.fetch", args: "https://example.com", sideEffect: false });
      expect(read.intentAt).toBeInstanceOf(Date);
      const failed = await store.journal.recordOutcome(`${task.id}:2`, { ok: false, error: "timeout after 10000 ms" }, at(4));
      expect(failed.outcome).toEqual({ ok: false, error: "timeout after 10000 ms", at: at(4) });
      expect(await store.journal.getEntry("nope")).toBeNull();
      await expectCode(store.journal.recordOutcome("nope", { ok: true, result: null }, at(5)), "NOT_FOUND");
    });

    it("lists a task's journal by step", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const other = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "o" });
      for (const step of [3, 1, 2]) {
        await store.journal.recordIntent({ taskId: task.id, step, idempotencyKey: `k${step}`, tool: "x", args: [step], sideEffect: false });
      }
      await store.journal.recordIntent({ taskId: other.id, step: 1, idempotencyKey: "other1", tool: "x", args: null, sideEffect: false });
      expect((await store.journal.listJournal(task.id)).map((e) => [e.step, e.args])).toEqual([[1, [1]], [2, [2]], [3, [3]]]);
    });
  });

  describe("memory", () => {
    it("memory items and goals keep the taint they were made with (issue 11), untainted by default", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const tainted = await store.memory.addMemory({ personId: person.id, kind: "fact", text: "from a page", taint: { source: "https://evil.example/page" } });
      const own = await store.memory.addMemory({ personId: person.id, kind: "fact", text: "own words" });
      expect(tainted.taint).toEqual({ source: "https://evil.example/page" });
      expect(own.taint).toBeNull();
      expect((await store.memory.getMemory(tainted.id))?.taint).toEqual({ source: "https://evil.example/page" });
      expect((await store.memory.searchMemory(person.id, "page", { limit: 5, now: at(0) })).map((m) => m.taint)).toEqual([{ source: "https://evil.example/page" }]);
      expect((await store.memory.updateMemory(person.id, tainted.id, { text: "from a page, edited" })).taint).toEqual({ source: "https://evil.example/page" });
      const goal = await store.goals.createGoal({ personId: person.id, title: "injected", taint: { source: "webhook hook_1" } });
      const plain = await store.goals.createGoal({ personId: person.id, title: "mine" });
      expect(goal.taint).toEqual({ source: "webhook hook_1" });
      expect((await store.goals.getGoal(goal.id))?.taint).toEqual({ source: "webhook hook_1" });
      expect((await store.goals.updateGoal(goal.id, { notes: "n" })).taint).toEqual({ source: "webhook hook_1" });
      expect(plain.taint).toBeNull();
      expect((await store.goals.updateGoal(plain.id, { notes: "x", taint: null })).taint).toBeNull();
      expect((await store.goals.updateGoal(plain.id, { taint: { source: "https://b.example/" } })).taint).toEqual({ source: "https://b.example/" });
      expect((await store.goals.updateGoal(plain.id, { taint: null })).taint).toEqual({ source: "https://b.example/" });
      expect((await store.goals.listGoals(person.id, {}, { limit: 10 })).items.map((g) => [g.title, g.taint])).toEqual(
        expect.arrayContaining([["injected", { source: "webhook hook_1" }], ["mine", { source: "https://b.example/" }]]),
      );
    });

    it("adds, reads, updates and deletes only the person's own items", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const msg = await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "telegram", text: "I'm vegetarian", taskId: null });
      const item = await store.memory.addMemory({
        personId: person.id,
        kind: "preference",
        text: "Vegetarian",
        provenance: { messageId: msg.id, channel: "telegram", note: "said so" },
        confidence: 0.9,
        expiresAt: at(86_400_000),
      });
      expect(item).toMatchObject({ kind: "preference", text: "Vegetarian", confidence: 0.9, expiresAt: at(86_400_000), provenance: { messageId: msg.id, channel: "telegram", note: "said so" } });
      expect(item.id).toMatch(/^mem_/);
      expect(await store.memory.getMemory(item.id)).toEqual(item);

      const plain = await store.memory.addMemory({ personId: person.id, kind: "fact", text: "Lives in Lyon" });
      expect(plain.provenance).toEqual({ messageId: null, channel: null, note: null });
      expect(plain.expiresAt).toBeNull();
      expect(plain.confidence).toBeGreaterThanOrEqual(0);
      expect(plain.confidence).toBeLessThanOrEqual(1);

      const updated = await store.memory.updateMemory(person.id, item.id, { text: "Vegan", confidence: 1, expiresAt: null });
      expect(updated).toMatchObject({ text: "Vegan", confidence: 1, expiresAt: null, kind: "preference" });
      expect(await store.memory.getMemory(item.id)).toEqual(updated);
      await expectCode(store.memory.updateMemory(other.id, item.id, { text: "hijacked" }), "NOT_FOUND");
      expect((await store.memory.getMemory(item.id))?.text).toBe("Vegan");

      expect(await store.memory.deleteMemory(other.id, item.id)).toBe(false);
      expect(await store.memory.deleteMemory(person.id, item.id)).toBe(true);
      expect(await store.memory.deleteMemory(person.id, item.id)).toBe(false);
      expect(await store.memory.getMemory(item.id)).toBeNull();
      expect(await store.memory.getMemory(asId("memory", "mem_missing"))).toBeNull();
    });

    it("lists memory newest first across pages", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await store.memory.addMemory({ personId: person.id, kind: "fact", text: `fact ${i}` })).id);
      const { items } = await readAllPages((page) => store.memory.listMemory(person.id, page), 2);
      expect(items.map((m) => m.id)).toEqual([...ids].reverse());
    });

    it("searches by relevance, excludes expired and others' items, and accepts any query text", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const both = await store.memory.addMemory({ personId: person.id, kind: "preference", text: "Drinks green tea every morning" });
      const one = await store.memory.addMemory({ personId: person.id, kind: "fact", text: "Owns a green bicycle" });
      await store.memory.addMemory({ personId: person.id, kind: "fact", text: "Allergic to peanuts" });
      const expired = await store.memory.addMemory({ personId: person.id, kind: "fact", text: "Green tea discount until Friday", expiresAt: at(1000) });
      const future = await store.memory.addMemory({ personId: person.id, kind: "fact", text: "Tea tasting booked", expiresAt: at(5000) });
      await store.memory.addMemory({ personId: other.id, kind: "fact", text: "Green tea lover" });

      const found = await store.memory.searchMemory(person.id, "green tea", { limit: 10, now: at(1000) });
      expect(found[0]?.id).toBe(both.id);
      expect(new Set(found.map((m) => m.id))).toEqual(new Set([both.id, one.id, future.id]));
      expect(found.map((m) => m.id)).not.toContain(expired.id);

      const before = await store.memory.searchMemory(person.id, "discount", { limit: 10, now: at(999) });
      expect(before.map((m) => m.id)).toEqual([expired.id]);
      expect(await store.memory.searchMemory(person.id, "green tea", { limit: 1, now: at(0) })).toHaveLength(1);
      expect(await store.memory.searchMemory(person.id, "volcano", { limit: 10, now: at(0) })).toEqual([]);

      for (const hostile of ['"', "tea\" OR \"x", "NEAR(tea green)", "*", "tea*", "-tea", "AND OR NOT", "(", "'; DROP TABLE x; --", "", "   ", "green:tea", "{$where: 1}", "^tea"]) {
        const result = await store.memory.searchMemory(person.id, hostile, { limit: 10, now: at(0) });
        expect(Array.isArray(result)).toBe(true);
      }
      const quoted = await store.memory.searchMemory(person.id, 'peanuts"', { limit: 10, now: at(0) });
      expect(quoted.map((m) => m.text)).toEqual(["Allergic to peanuts"]);
    });
  });
}
