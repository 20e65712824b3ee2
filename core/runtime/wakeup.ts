/**
 * Wake-up → activation: what happens when a wake-up's or a goal check-in's time comes. The task row
 * is the one source of truth for when it is due; the due loop claims it once per occurrence, whatever
 * noticed it first (its timer, start-up, another process). Here the occurrence is gated: held while
 * the person or the goal is paused, skipped (once, audited) when it is later than the grace window,
 * else run. `/resume` and resuming a goal release what was held.
 */
import type { Clock } from "../clock.js";
import type { GoalId, PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { Store } from "../storage/index.js";
import type { Person } from "../persons/records.js";
import type { Task, TaskState } from "../tasks/records.js";
import { formatLocal } from "../time/index.js";
import { nextOccurrence } from "./after-activation.js";
import type { TaskCheckpoint, Trigger } from "../tasks/index.js";

export interface WakeupFlowDeps {
  store: Pick<Store, "goals" | "tasks" | "audit">;
  clock: Clock;
  logger: Logger;
  /** How late a missed occurrence may still run, ms (WAKEUP_GRACE_MS). */
  graceMs: number;
  /** This process's lease owner id. */
  owner: string;
}

/** What to do with a claimed occurrence. */
export type WakeupGate = { action: "run" } | { action: "held"; state: TaskState } | { action: "skipped"; state: TaskState };

export class WakeupFlow {
  constructor(private readonly deps: WakeupFlowDeps) {}

  /**
   * Decides a claimed wake-up or check-in occurrence due at `dueAt`, and when it does not run, moves
   * the task on (held until resumed; or its next occurrence / cancelled, with an audit line).
   */
  async gate(task: Task, checkpoint: TaskCheckpoint, person: Person, dueAt: Date): Promise<WakeupGate> {
    const { store, clock, logger, graceMs, owner } = this.deps;
    const now = clock.now();
    const goal = task.goalId ? await store.goals.getGoal(task.goalId) : null;
    const finished = goal && (goal.status === "done" || goal.status === "abandoned");
    let gate: WakeupGate;
    if (finished) {
      gate = { action: "skipped", state: { status: "cancelled", reason: `goal ${goal.status}` } };
    } else if (person.paused || goal?.status === "paused") {
      gate = { action: "held", state: { status: "waiting", wait: { kind: "held", until: dueAt } } };
    } else if (now.getTime() - dueAt.getTime() > graceMs) {
      const next = nextOccurrence(checkpoint, now);
      gate = { action: "skipped", state: next ? { status: "waiting", wait: { kind: "time", until: next } } : { status: "cancelled", reason: "missed beyond the grace window" } };
    } else {
      return { action: "run" };
    }
    const why = finished ? `its goal is ${goal.status}` : gate.action === "held" ? (person.paused ? "background work is paused (it runs after /resume)" : "its goal is paused") : `missed by ${Math.round((now.getTime() - dueAt.getTime()) / 60_000)} min, beyond the grace window`;
    await store.audit.appendAudit({
      personId: task.personId,
      kind: "task.skipped",
      summary: `wake-up of ${task.title} ${gate.action}: ${why}`,
      data: { taskId: task.id, dueAt: dueAt.toISOString() },
    });
    logger.info({ taskId: task.id, action: gate.action, why }, "wake-up not run");
    await store.tasks.transitionTask({ taskId: task.id, owner, to: gate.state, now });
    return gate;
  }

  /**
   * Releases the person's held work (after `/resume`), or only a goal's (after it is resumed): each
   * held task is due again at the time it had (a missed one runs once within the grace window).
   * Returns how many were released.
   */
  async releaseHeld(personId: PersonId, goalId?: GoalId): Promise<number> {
    const { store, clock } = this.deps;
    const held = (await store.tasks.findWaitingTasks({ kind: "held", personId })).filter((t) => goalId === undefined || t.goalId === goalId);
    for (const task of held) {
      const until = task.state.status === "waiting" && task.state.wait.kind === "held" ? task.state.wait.until : null;
      await store.tasks.transitionTask({
        taskId: task.id,
        owner: null,
        to: until ? { status: "waiting", wait: { kind: "time", until } } : { status: "pending" },
        now: clock.now(),
      });
    }
    return held.length;
  }
}

/** The trigger of a new activation of `task`, claimed as due at `dueAt`. */
export function initialTrigger(task: Task, dueAt: Date): Trigger {
  switch (task.kind) {
    case "turn":
      return { kind: "turn" };
    case "wakeup":
      return { kind: "wakeup", dueAt: dueAt.toISOString() };
    case "checkin":
      return { kind: "checkin", dueAt: dueAt.toISOString() };
  }
}

/** One line telling the model what started the activation (null for a turn: the messages say it). */
export function triggerText(trigger: Trigger, task: Task, checkpoint: TaskCheckpoint, person: Person): string | null {
  switch (trigger.kind) {
    case "turn":
      return null;
    case "reply":
      return "the person replied to the question this task asked (their latest messages)";
    case "wakeup":
      return `scheduled wake-up "${checkpoint.kind === "wakeup" ? checkpoint.note : task.title}" (due ${formatLocal(new Date(trigger.dueAt), person.timeZone)})`;
    case "checkin":
      return `scheduled check-in for "${task.title}" (due ${formatLocal(new Date(trigger.dueAt), person.timeZone)})`;
    case "event":
      return `webhook event "${trigger.description}"`;
    case "change":
      return `watch "${checkpoint.kind === "wakeup" ? checkpoint.note : task.title}" — a new change matched it (${trigger.description})`;
    case "approval":
      return trigger.outcome === "approved"
        ? `the person approved (${trigger.scope ?? "once"}) the request "${trigger.summary}"`
        : trigger.outcome === "denied"
          ? `the person denied the request "${trigger.summary}"`
          : `the approval request "${trigger.summary}" expired without an answer`;
    case "recovery":
      return "resuming work interrupted by a restart";
  }
}
