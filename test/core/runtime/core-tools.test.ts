/**
 * coreTools on their own (core/runtime/core-tools.ts), on a SQLite store: goals with a check-in
 * (one task per schedule, replaced when it changes, cancelled when the goal ends, released when a
 * paused goal resumes), wake-ups (one of `at` or `cron`, never in the past, in the person's goal
 * only, with the provenance and chain depth of the activation that made them), cancelling only the
 * person's own wake-ups, and memory with its provenance and taint. Everything is the person's own:
 * another person's goal, wake-up or memory item is "not found".
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GoalId, PersonId } from "../../../core/ids.js";
import { coreTools } from "../../../core/runtime/index.js";
import type { Task } from "../../../core/tasks/index.js";
import { parseCheckpoint } from "../../../core/tasks/checkpoint.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../../../core/tools/index.js";
import { flowFixture, type FlowFixture } from "./flows.js";

let f: FlowFixture;
let tools: ToolDefinition[];
let pokes: number;
let released: [PersonId, GoalId][];

beforeEach(async () => {
  f = await flowFixture();
  pokes = 0;
  released = [];
  tools = coreTools({ store: f.store, clock: f.clock, poke: () => void pokes++, releaseHeld: async (p, g) => (released.push([p, g]), 0) });
});
afterEach(async () => {
  await f.close();
});

const ctx = (over: Partial<ToolContext> = {}): ToolContext => ({ personId: f.person.id, taskId: null, originMessageId: null, idempotencyKey: "k", now: f.clock.now(), signal: new AbortController().signal, ...over });

/** Runs tool `name` as the tool loop does: arguments validated (defaults applied) first. */
async function run(name: string, args: Record<string, unknown>, over: Partial<ToolContext> = {}): Promise<ToolResult> {
  const tool = tools.find((t) => t.name === name)!;
  const parsed = tool.parameters.safeParse(args);
  if (!parsed.success) return { ok: false, code: "invalid_arguments", error: parsed.error.message };
  return tool.execute(parsed.data, ctx(over));
}

const data = <T>(r: ToolResult): T => {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return (r as unknown as { data: T }).data;
};
const checkins = async (goalId: string): Promise<Task[]> => (await f.store.tasks.listTasks({ goalId: goalId as GoalId, kind: ["checkin"] })).items;

describe("coreTools", () => {
  it("are the seven named tools", () => {
    expect(tools.map((t) => t.name)).toEqual(["create_goal", "update_goal", "list_goals", "schedule_wakeup", "cancel_wakeup", "remember", "forget"]);
  });

  it("create_goal with a check-in makes one check-in task due at the cron's next time in its zone, and wakes the loop", async () => {
    const message = await f.store.conversation.appendMessage({ personId: f.person.id, role: "user", channel: "local", text: "plan bakes every Friday", taskId: null });
    const goal = data<{ id: string; checkIn: unknown }>(await run("create_goal", { title: "Bake", checkIn: { cron: "0 9 * * 5", timezone: "Europe/Berlin" } }, { originMessageId: message.id }));
    expect(goal.checkIn).toEqual({ cron: "0 9 * * 5", timezone: "Europe/Berlin" });
    const [task, ...more] = await checkins(goal.id);
    expect(more).toEqual([]);
    // Tuesday 2026-12-01 09:00 UTC → Friday 2026-12-04 09:00 in Berlin (08:00 UTC).
    expect(task!.notBefore).toEqual(new Date("2026-12-04T08:00:00Z"));
    expect(parseCheckpoint(task!)).toMatchObject({ kind: "checkin", provenance: { tainted: false, fromPersonWords: true, depth: 1 } });
    expect(pokes).toBe(1);
    expect((await f.store.goals.getGoal(goal.id as GoalId))!.taint).toBeNull();
  });

  it("create_goal with a bad cron keeps the goal without a check-in and says why", async () => {
    const r = await run("create_goal", { title: "Bake", checkIn: { cron: "99 99 * * *", timezone: "UTC" } });
    expect(r).toMatchObject({ ok: false, code: "invalid_schedule" });
    const [goal] = (await f.store.goals.listGoals(f.person.id)).items;
    expect(goal).toMatchObject({ title: "Bake", checkIn: null });
    expect(await checkins(goal!.id)).toEqual([]);
  });

  it("update_goal replaces the check-in when its schedule changes, cancels it when the goal ends, and releases held work when a paused goal resumes", async () => {
    const goal = data<{ id: string }>(await run("create_goal", { title: "Run", checkIn: { cron: "0 7 * * 1", timezone: "UTC" } }));
    await run("update_goal", { goalId: goal.id, notes: "5 km" });
    expect((await checkins(goal.id)).map((t) => t.state.status)).toEqual(["pending"]);
    await run("update_goal", { goalId: goal.id, checkIn: { cron: "0 7 * * 3", timezone: "UTC" } });
    const [old, replaced] = await checkins(goal.id);
    expect(old!.state).toEqual({ status: "cancelled", reason: "check-in rescheduled" });
    expect(replaced!.notBefore).toEqual(new Date("2026-12-02T07:00:00Z"));

    await run("update_goal", { goalId: goal.id, status: "paused" });
    expect(released).toEqual([]);
    await run("update_goal", { goalId: goal.id, status: "active" });
    expect(released).toEqual([[f.person.id, goal.id]]);

    await run("update_goal", { goalId: goal.id, status: "done" });
    expect((await checkins(goal.id)).map((t) => t.state)).toEqual([
      { status: "cancelled", reason: "check-in rescheduled" },
      { status: "cancelled", reason: "goal done" },
    ]);
  });

  it("schedule_wakeup takes exactly one of at or cron, refuses the past, and records the activation's provenance and chain depth", async () => {
    expect(await run("schedule_wakeup", { note: "x" })).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(await run("schedule_wakeup", { note: "x", at: "2026-12-02T09:00:00Z", cron: "0 9 * * *", timezone: "UTC" })).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(await run("schedule_wakeup", { note: "x", cron: "0 9 * * *" })).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(await run("schedule_wakeup", { note: "x", at: "2026-12-01T08:58:00Z" })).toMatchObject({ ok: false, code: "in_the_past" });
    expect(pokes).toBe(0);

    const once = data<{ wakeupId: string; nextAt: string }>(await run("schedule_wakeup", { note: "call mum", at: "2026-12-01T18:00:00+01:00" }));
    expect(once.nextAt).toBe("2026-12-01T17:00:00.000Z");
    const daily = data<{ wakeupId: string; nextAt: string }>(
      await run("schedule_wakeup", { note: "read the feed", cron: "30 8 * * *", timezone: "Asia/Tokyo", notify: "always" }, { tainted: true, taintSource: "a feed", chainDepth: 2 }),
    );
    expect(daily.nextAt).toBe("2026-12-01T23:30:00.000Z");
    expect(pokes).toBe(2);
    const task = (await f.store.tasks.getTask(daily.wakeupId as never))!;
    expect(task.notBefore).toEqual(new Date("2026-12-01T23:30:00Z"));
    expect(parseCheckpoint(task)).toMatchObject({ kind: "wakeup", note: "read the feed", notify: "always", provenance: { tainted: true, fromPersonWords: false, source: "a feed", depth: 3 } });
    const listed = data<{ wakeups: { id: string; fromOutside: string | null; depth: number }[] }>(await run("list_goals", {}));
    expect(listed.wakeups.map((w) => [w.id, w.fromOutside, w.depth])).toEqual([
      [once.wakeupId, null, 1],
      [daily.wakeupId, "a feed", 3],
    ]);
  });

  it("keeps every person to their own goals, wake-ups and memory", async () => {
    const bob = await f.store.persons.createPerson({ displayName: "Bob" });
    const asBob = { personId: bob.id };
    const goal = data<{ id: string }>(await run("create_goal", { title: "Ada's goal" }));
    const wake = data<{ wakeupId: string }>(await run("schedule_wakeup", { note: "Ada's", at: "2026-12-02T09:00:00Z" }));
    const memory = data<{ memoryId: string }>(await run("remember", { kind: "fact", text: "Ada likes rye bread" }));
    expect(await run("update_goal", { goalId: goal.id, title: "taken" }, asBob)).toMatchObject({ ok: false, code: "not_found" });
    expect(await run("schedule_wakeup", { note: "x", at: "2026-12-02T09:00:00Z", goalId: goal.id }, asBob)).toMatchObject({ ok: false, code: "not_found" });
    expect(await run("cancel_wakeup", { wakeupId: wake.wakeupId }, asBob)).toMatchObject({ ok: false, code: "not_found" });
    expect(await run("forget", { memoryId: memory.memoryId }, asBob)).toMatchObject({ ok: false, code: "not_found" });
    expect(data<{ goals: unknown[] }>(await run("list_goals", {}, asBob)).goals).toEqual([]);
    // Ada's own calls work.
    expect(await run("cancel_wakeup", { wakeupId: wake.wakeupId })).toMatchObject({ ok: true });
    expect((await f.store.tasks.getTask(wake.wakeupId as never))!.state).toEqual({ status: "cancelled", reason: "cancelled by request" });
    expect(await run("forget", { memoryId: memory.memoryId })).toMatchObject({ ok: true });
    expect(await run("forget", { memoryId: memory.memoryId })).toMatchObject({ ok: false, code: "not_found" });
  });

  it("cancel_wakeup cancels only wake-ups, and remember keeps where it was said and whether outside content was read", async () => {
    const goal = data<{ id: string }>(await run("create_goal", { title: "Run", checkIn: { cron: "0 7 * * 1", timezone: "UTC" } }));
    const [checkin] = await checkins(goal.id);
    expect(await run("cancel_wakeup", { wakeupId: checkin!.id })).toMatchObject({ ok: false, code: "not_found" });
    const message = await f.store.conversation.appendMessage({ personId: f.person.id, role: "user", channel: "telegram", text: "I moved to Graz", taskId: null });
    const own = data<{ memoryId: string }>(await run("remember", { kind: "fact", text: "lives in Graz" }, { originMessageId: message.id }));
    const read = data<{ memoryId: string }>(await run("remember", { kind: "preference", text: "likes the shop on page X" }, { tainted: true, taintSource: "https://shop.example" }));
    const items = (await f.store.memory.listMemory(f.person.id)).items;
    expect(items.find((m) => m.id === own.memoryId)).toMatchObject({ confidence: 0.9, provenance: { messageId: message.id, channel: "telegram" }, taint: null });
    expect(items.find((m) => m.id === read.memoryId)).toMatchObject({ provenance: { messageId: null, channel: null }, taint: { source: "https://shop.example" } });
  });
});
