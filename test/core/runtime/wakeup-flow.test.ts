/**
 * WakeupFlow on its own (core/runtime/wakeup.ts), on a SQLite store: a claimed occurrence runs
 * within the grace window; it is held while the person or its goal is paused, and released at its
 * own time by `releaseHeld` (all of the person's, or one goal's); a late one-off is cancelled and a
 * late recurring one moves to its next occurrence; a finished goal's is cancelled. Each occurrence
 * that does not run is audited.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WakeupFlow } from "../../../core/runtime/wakeup.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { GoalId } from "../../../core/ids.js";
import type { Person } from "../../../core/persons/index.js";
import type { Task } from "../../../core/tasks/index.js";
import { parseCheckpoint, wakeupCheckpoint } from "../../../core/tasks/checkpoint.js";

describe("WakeupFlow", () => {
  let dir: string;
  let store: SqliteStore;
  let now: Date;
  let flow: WakeupFlow;
  let person: Person;
  const graceMs = 10 * 60_000;
  const dueAt = new Date("2026-12-01T09:00:00Z");

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "familiar-wakeup-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    now = new Date(dueAt.getTime() + 60_000);
    flow = new WakeupFlow({ store, clock: { now: () => now }, logger: pino({ level: "silent" }), graceMs, owner: "A" });
    person = await store.persons.createPerson({ displayName: "Ada" });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A claimed wake-up (one-off at `dueAt`, or every day at 09:00 UTC). */
  async function claimed(options: { recurring?: boolean; goalId?: GoalId } = {}): Promise<Task> {
    const timing = options.recurring ? { cron: "0 9 * * *", timezone: "UTC" } : { at: dueAt.toISOString() };
    const task = await store.tasks.createTask({
      kind: "wakeup",
      personId: person.id,
      title: "Water the plants",
      checkpoint: wakeupCheckpoint({ note: "water", notify: "always", timing }),
      ...(options.goalId && { goalId: options.goalId }),
    });
    return (await store.tasks.claimTask({ taskId: task.id, owner: "A", now, leaseMs: 30_000 }))!;
  }
  const gate = (task: Task, p = person) => flow.gate(task, parseCheckpoint(task), p, dueAt);
  const skippedAudits = async () => (await store.audit.listAudit(person.id)).items.filter((a) => a.kind === "task.skipped");

  it("runs an occurrence within the grace window and leaves the task to the runner", async () => {
    const task = await claimed();
    expect(await gate(task)).toEqual({ action: "run" });
    expect((await store.tasks.getTask(task.id))!.state).toEqual({ status: "running" });
    expect(await skippedAudits()).toEqual([]);
  });

  it("holds while the person is paused, and /resume releases it at its own time", async () => {
    const paused = await store.persons.updatePerson(person.id, { paused: true });
    const task = await claimed();
    const held = await gate(task, paused);
    expect(held).toEqual({ action: "held", state: { status: "waiting", wait: { kind: "held", until: dueAt } } });
    expect((await store.tasks.getTask(task.id))!.state).toEqual(held.action === "held" ? held.state : null);
    expect(await skippedAudits()).toHaveLength(1);
    expect(await flow.releaseHeld(person.id)).toBe(1);
    expect((await store.tasks.getTask(task.id))!.state).toEqual({ status: "waiting", wait: { kind: "time", until: dueAt } });
    expect(await flow.releaseHeld(person.id)).toBe(0);
  });

  it("holds a paused goal's occurrence, and releasing another goal leaves it held", async () => {
    const goal = await store.goals.createGoal({ personId: person.id, title: "Garden" });
    const other = await store.goals.createGoal({ personId: person.id, title: "Kitchen" });
    await store.goals.updateGoal(goal.id, { status: "paused" });
    const task = await claimed({ goalId: goal.id });
    expect((await gate(task)).action).toBe("held");
    expect(await flow.releaseHeld(person.id, other.id)).toBe(0);
    expect((await store.tasks.getTask(task.id))!.state.status).toBe("waiting");
    expect(await flow.releaseHeld(person.id, goal.id)).toBe(1);
    expect((await store.tasks.getTask(task.id))!.state).toEqual({ status: "waiting", wait: { kind: "time", until: dueAt } });
  });

  it("cancels a one-off missed beyond the grace window and moves a recurring one to its next occurrence, audited", async () => {
    now = new Date(dueAt.getTime() + graceMs + 60_000);
    const once = await claimed();
    expect(await gate(once)).toEqual({ action: "skipped", state: { status: "cancelled", reason: "missed beyond the grace window" } });
    const daily = await claimed({ recurring: true });
    expect(await gate(daily)).toEqual({ action: "skipped", state: { status: "waiting", wait: { kind: "time", until: new Date("2026-12-02T09:00:00Z") } } });
    expect((await store.tasks.getTask(daily.id))!.state).toEqual({ status: "waiting", wait: { kind: "time", until: new Date("2026-12-02T09:00:00Z") } });
    const audits = await skippedAudits();
    expect(audits).toHaveLength(2);
    expect(audits.every((a) => a.summary.includes("beyond the grace window"))).toBe(true);
  });

  it("cancels the occurrence of a goal that is done", async () => {
    const goal = await store.goals.createGoal({ personId: person.id, title: "Garden" });
    await store.goals.updateGoal(goal.id, { status: "done" });
    const task = await claimed({ goalId: goal.id });
    expect(await gate(task)).toEqual({ action: "skipped", state: { status: "cancelled", reason: "goal done" } });
  });
});
