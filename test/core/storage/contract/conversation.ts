import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import { type ContractContext, at, expectCode, makePerson, readAllPages } from "./support.js";

/** The per-person conversation, its rolling summary, and goals. */
export function conversationContract(ctx: ContractContext): void {
  describe("conversation", () => {
    it("assigns gap-free seq per person and round-trips every field", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      expect(await store.conversation.lastSeq(a.id)).toBe(0);
      const m1 = await store.conversation.appendMessage({ personId: a.id, role: "user", channel: "telegram", text: "hi 👋", taskId: null, at: at(1) });
      const m2 = await store.conversation.appendMessage({ personId: a.id, role: "assistant", channel: "telegram", text: "hello", taskId: null, at: at(2) });
      const b1 = await store.conversation.appendMessage({ personId: b.id, role: "user", channel: "slack", text: "yo", taskId: null });
      expect([m1.seq, m2.seq, b1.seq]).toEqual([1, 2, 1]);
      expect(m1).toMatchObject({ personId: a.id, role: "user", channel: "telegram", text: "hi 👋", taskId: null, at: at(1) });
      expect(m1.id).toMatch(/^msg_/);
      expect(b1.at).toBeInstanceOf(Date);
      expect(await store.conversation.getMessage(m1.id)).toEqual(m1);
      expect(await store.conversation.getMessage(asId("message", "msg_missing"))).toBeNull();
      expect(await store.conversation.lastSeq(a.id)).toBe(2);
      expect(await store.conversation.lastSeq(b.id)).toBe(1);
    });

    it("records a message's attachments and reads them back in order; messages without files have none", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const photo = {
        kind: "image" as const,
        mimeType: "image/jpeg",
        size: 48_213,
        fileName: null,
        caption: null,
        path: "inbox/2026-11-30/photo-1.jpg",
        transcript: null,
        emoji: null,
        durationSeconds: null,
        note: null,
      };
      const voice = { ...photo, kind: "voice" as const, mimeType: "audio/ogg", size: 9_000, path: "inbox/2026-11-30/voice.ogg", transcript: "call mum at six", durationSeconds: 3.5 };
      const sticker = { ...photo, kind: "sticker" as const, mimeType: null, size: null, path: null, emoji: "🐱" };
      const doc = { ...photo, kind: "document" as const, mimeType: "application/pdf", fileName: "report – final.pdf", caption: "Q3", path: null, note: "not kept: 48 MB is over the 20 MB limit" };
      const m = await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "telegram", text: "", taskId: null, at: at(1), attachments: [photo, voice, sticker, doc] });
      expect(m.attachments).toEqual([photo, voice, sticker, doc]);
      expect((await store.conversation.getMessage(m.id))?.attachments).toEqual([photo, voice, sticker, doc]);
      const plain = await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: "telegram", text: "nice", taskId: null });
      expect(plain.attachments).toEqual([]);
      const listed = await store.conversation.listRecentMessages(person.id, 5);
      expect(listed.map((x) => x.attachments.length)).toEqual([4, 0]);
      expect((await store.conversation.listMessagesAfter(person.id, 0, 5))[0]!.attachments[1]).toEqual(voice);
    });

    it("keeps seq gap-free under concurrent appends", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const appended = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          store.conversation.appendMessage({ personId: person.id, role: "user", channel: "local", text: `m${i}`, taskId: null }),
        ),
      );
      expect(appended.map((m) => m.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(await store.conversation.lastSeq(person.id)).toBe(25);
    });

    it("lists recent, after and between by seq, oldest first", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      for (let i = 1; i <= 10; i++) {
        await store.conversation.appendMessage({
          personId: person.id,
          role: i % 2 ? "user" : "assistant",
          channel: "local",
          text: `m${i}`,
          taskId: i === 10 ? task.id : null,
          at: at(i * 1000),
        });
      }
      await store.conversation.appendMessage({ personId: other.id, role: "user", channel: "local", text: "x", taskId: null });

      const recent = await store.conversation.listRecentMessages(person.id, 3);
      expect(recent.map((m) => m.text)).toEqual(["m8", "m9", "m10"]);
      expect(recent[2]?.taskId).toBe(task.id);
      expect((await store.conversation.listMessagesAfter(person.id, 6, 2)).map((m) => m.seq)).toEqual([7, 8]);
      expect(await store.conversation.listMessagesAfter(person.id, 10, 5)).toEqual([]);
      expect((await store.conversation.listMessagesBetween(person.id, 3, 5)).map((m) => m.text)).toEqual(["m3", "m4", "m5"]);
      expect((await store.conversation.listRecentMessages(person.id, 50)).length).toBe(10);
    });

    it("saves the rolling summary only over the version the caller saw (lost race returns false)", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      expect(await store.conversation.getSummary(person.id)).toBeNull();

      expect(await store.conversation.saveSummary({ personId: person.id, upToSeq: 4, text: "first" }, null)).toBe(true);
      // A second summarizer that also saw "no summary" loses.
      expect(await store.conversation.saveSummary({ personId: person.id, upToSeq: 5, text: "racer" }, null)).toBe(false);
      const first = await store.conversation.getSummary(person.id);
      expect(first).toMatchObject({ personId: person.id, upToSeq: 4, text: "first" });
      expect(first?.updatedAt).toBeInstanceOf(Date);

      const [x, y] = await Promise.all([
        store.conversation.saveSummary({ personId: person.id, upToSeq: 9, text: "x" }, 4),
        store.conversation.saveSummary({ personId: person.id, upToSeq: 10, text: "y" }, 4),
      ]);
      expect([x, y].filter(Boolean)).toHaveLength(1);
      const winner = await store.conversation.getSummary(person.id);
      expect(winner?.text).toBe(x ? "x" : "y");
      expect(winner?.upToSeq).toBe(x ? 9 : 10);
      expect(await store.conversation.saveSummary({ personId: person.id, upToSeq: 12, text: "stale" }, 4)).toBe(false);
    });
  });

  describe("goals", () => {
    it("creates goals with defaults and round-trips the check-in schedule", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const msg = await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "local", text: "run a marathon", taskId: null });
      const goal = await store.goals.createGoal({
        personId: person.id,
        title: "Marathon",
        originMessageId: msg.id,
        checkIn: { cron: "0 9 * * 1", timeZone: "Europe/Paris" },
      });
      expect(goal).toMatchObject({ title: "Marathon", description: "", notes: "", status: "active", originMessageId: msg.id });
      expect(goal.id).toMatch(/^goal_/);
      expect(await store.goals.getGoal(goal.id)).toEqual(goal);
      const plain = await store.goals.createGoal({ personId: person.id, title: "Read" });
      expect(plain.checkIn).toBeNull();
      expect(plain.originMessageId).toBeNull();
      expect(await store.goals.getGoal(asId("goal", "goal_missing"))).toBeNull();
    });

    it("updates goals and refuses unknown ones", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const goal = await store.goals.createGoal({ personId: person.id, title: "Learn Go" });
      const updated = await store.goals.updateGoal(goal.id, { status: "paused", notes: "after the move", checkIn: null });
      expect(updated).toMatchObject({ status: "paused", notes: "after the move", title: "Learn Go", checkIn: null });
      expect(await store.goals.getGoal(goal.id)).toEqual(updated);
      await expectCode(store.goals.updateGoal(asId("goal", "goal_missing"), { title: "x" }), "NOT_FOUND");
    });

    it("lists a person's goals in creation order, by status, across pages", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const goals = [];
      for (let i = 0; i < 5; i++) goals.push(await store.goals.createGoal({ personId: person.id, title: `g${i}` }));
      await store.goals.createGoal({ personId: other.id, title: "not mine" });
      await store.goals.updateGoal(goals[1]!.id, { status: "done" });
      await store.goals.updateGoal(goals[3]!.id, { status: "abandoned" });

      const all = await readAllPages((page) => store.goals.listGoals(person.id, {}, page), 2);
      expect(all.items.map((g) => g.title)).toEqual(["g0", "g1", "g2", "g3", "g4"]);
      const active = await store.goals.listGoals(person.id, { status: ["active"] });
      expect(active.items.map((g) => g.title)).toEqual(["g0", "g2", "g4"]);
      const finished = await store.goals.listGoals(person.id, { status: ["done", "abandoned"] });
      expect(finished.items.map((g) => g.title)).toEqual(["g1", "g3"]);
      expect((await store.goals.listGoals(person.id)).items).toHaveLength(5);
    });
  });
}
