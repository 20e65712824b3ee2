import { randomUUID } from "node:crypto";
import type { Clock } from "../clock.js";
import type { UntrustedContent } from "../context/untrusted.js";
import { asId, type PersonId, type TaskId } from "../ids.js";
import type { Logger } from "../log.js";
import type { ModelClient } from "../model/port.js";
import type { Notifier } from "../notify/notifier.js";
import type { Scheduler } from "../scheduling/scheduler.js";
import type { Store } from "../storage/ports.js";
import type { Json, Person, Task, TaskState } from "../storage/types.js";
import { nextCronTime } from "../time/zones.js";
import { wakeupSpecOf } from "../tools/core-tools.js";
import { newSessionId, runActivation, runtimeStateOf, withRuntime, type ActivationDeps, type ActivationOutcome } from "./activation.js";
import type { PersonQueue } from "./person-queue.js";

/** Job that resumes a task whose lease may have been left by a crashed worker. */
export const resumeJobName = "task.resume";

/** What kind of work a task is, from its checkpoint. */
export type TaskKind = "turn" | "wakeup" | "checkin" | "other";

export function taskKind(task: Task): TaskKind {
  const type = (task.checkpoint as { type?: unknown } | null)?.type;
  return type === "turn" || type === "wakeup" || type === "checkin" ? type : "other";
}

export interface TaskRuntimeDeps extends Omit<ActivationDeps, "model" | "tools"> {
  model: ModelClient | null;
  tools: () => ActivationDeps["tools"];
  logger: Logger;
  queue: PersonQueue;
  scheduler: Scheduler;
  notifier: Notifier;
  /** Delivers a turn's answer to the person (conversation + outbox); returns when queued. */
  deliverReply: (task: Task, person: Person, text: string, deliveryKey: string) => Promise<void>;
  /** Lease on a running task, ms; renewed with every checkpoint. */
  leaseMs: number;
  /** How late a missed wake-up may still run, ms (WAKEUP_GRACE_MS). */
  graceMs: number;
}

/**
 * Runs tasks: claims them with a lease, runs one activation, and moves them to their next state —
 * done, failed, or waiting (for a time, an event, an approval, or the person's reply). Every trigger
 * (a wake-up job, a goal check-in, a webhook event, an approval, the person's reply) ends up in
 * `activate`, serialized per person by the PersonQueue; two workers never run one task because the
 * claim is an atomic conditional update in the store.
 */
export class TaskRuntime {
  readonly owner = `worker:${randomUUID()}`;

  constructor(private readonly deps: TaskRuntimeDeps) {}

  /**
   * Claims and runs a task now (in the person's queue). `from: "waiting"` resumes a waiting task
   * whatever it waits for (the caller resolved the condition). Returns false when the task was not
   * claimable (already running elsewhere, finished, or not due).
   */
  run(taskId: TaskId, options: RunOptions): Promise<ActivationOutcome | null> {
    return this.deps.store.tasks.getTask(taskId).then((task) => {
      if (!task) return null;
      return this.deps.queue.run(task.personId, () => this.runNow(task, options));
    });
  }

  /** Like `run` for a caller already inside the person's queue slot. */
  async runNow(task: Task, options: RunOptions): Promise<ActivationOutcome | null> {
    const { store, clock, logger } = this.deps;
    if (options.onlyIfWaitingFor) {
      // Checked inside the person's queue slot: an activation that asked for this approval has released the task by now.
      const current = await store.tasks.getTask(task.id);
      const wait = current?.state.status === "waiting" ? current.state.wait : null;
      if (!wait || wait.kind !== "approval" || wait.approvalId !== options.onlyIfWaitingFor) return null;
    }
    const now = options.asOf && options.asOf > clock.now() ? options.asOf : clock.now();
    const claimed = await store.tasks.claimTask({ taskId: task.id, owner: this.owner, now, leaseMs: this.deps.leaseMs, ...(options.from && { from: options.from }) });
    if (!claimed) return null;
    try {
      return await this.activate(claimed, options);
    } catch (err) {
      logger.error({ err, taskId: task.id }, "activation failed");
      await this.release(claimed, { status: "failed", error: (err as Error).message.slice(0, 500) }).catch(() => undefined);
      return null;
    }
  }

  private async activate(task: Task, options: RunOptions): Promise<ActivationOutcome | null> {
    const { store, clock } = this.deps;
    const person = await store.persons.getPerson(task.personId);
    if (!person) {
      await this.release(task, { status: "cancelled", reason: "person no longer exists" });
      return null;
    }
    if (!this.deps.model || this.deps.model.configured === false) {
      await this.withoutModel(task, person, options.direct === true);
      return null;
    }

    const previous = runtimeStateOf(task);
    // An open activation resumes (after a crash, or after the approval it asked for was decided).
    const runtime = previous.open
      ? { ...previous, resumes: previous.resumes + 1, round: (previous.round ?? 0) + (previous.approvalId ? 1 : 0), approvalId: null }
      : { activation: previous.activation + 1, resumes: 0, open: true, round: 0 };
    const observations = options.observations ?? [];
    const saved = await store.tasks.saveCheckpoint({
      taskId: task.id,
      owner: this.owner,
      cursor: task.cursor,
      checkpoint: withRuntime(task, runtime, observations.length ? { observations: observations as unknown as Json } : {}),
      now: clock.now(),
      leaseMs: this.deps.leaseMs,
    });
    const stored = (saved.checkpoint as { observations?: UntrustedContent[] }).observations ?? [];
    const goal = task.goalId ? await store.goals.getGoal(task.goalId) : null;
    const outcome = await runActivation(
      { ...this.deps, model: this.deps.model, tools: this.deps.tools() },
      {
        task: saved,
        person,
        goal,
        runtime,
        trigger: options.trigger,
        observations: observations.length ? observations : stored,
        sessionId: newSessionId(),
        originMessageId: options.originMessageId ?? null,
      },
    );
    await this.finish(saved, person, runtime, outcome, options.direct === true);
    return outcome;
  }

  /**
   * A `task.wake` job fired for the task (a wake-up's time, or a check-in's). Runs it unless the
   * person paused background work, the goal is not active, or the wake-up is later than the grace
   * window (then it is skipped once — a missed wake-up runs at most once, never once per missed
   * interval, and never early).
   */
  async onWake(taskId: TaskId, dueAt: Date): Promise<void> {
    const { store, clock, logger } = this.deps;
    const task = await store.tasks.getTask(taskId);
    if (!task || !["pending", "waiting"].includes(task.state.status)) return;
    if (task.state.status === "waiting" && task.state.wait.kind !== "time") return;
    const person = await store.persons.getPerson(task.personId);
    if (!person) return;
    const goal = task.goalId ? await store.goals.getGoal(task.goalId) : null;
    const late = clock.now().getTime() - dueAt.getTime();
    const skip = person.paused ? "background work is paused (it runs after /resume)" : goal && goal.status !== "active" ? `goal is ${goal.status}` : late > this.deps.graceMs ? `missed by ${Math.round(late / 60_000)} min, beyond the grace window` : null;
    if (skip) {
      const what = person.paused || (goal && goal.status === "paused") ? "held" : "skipped";
      await store.audit.appendAudit({ personId: person.id, kind: "task.skipped", summary: `wake-up of ${task.title} ${what}: ${skip}`, data: { taskId: task.id, dueAt: dueAt.toISOString() } });
      logger.info({ taskId, skip }, "wake-up skipped");
      if (late > this.deps.graceMs && task.state.status === "pending" && !this.nextRecurrence(task)) {
        await store.tasks.transitionTask({ taskId: task.id, owner: null, to: { status: "cancelled", reason: `missed: ${skip}` }, now: clock.now() });
      }
      return;
    }
    const spec = wakeupSpecOf(task);
    const trigger = spec ? `scheduled wake-up "${spec.note}" (due ${dueAt.toISOString()})` : `scheduled check-in for "${task.title}" (due ${dueAt.toISOString()})`;
    await this.run(task.id, { trigger, asOf: dueAt, ...(task.state.status === "waiting" && { from: "waiting" as const }) });
  }

  /** A `task.resume` job fired: resume an interrupted (running, lease expired) task. */
  async onResume(taskId: TaskId): Promise<void> {
    const task = await this.deps.store.tasks.getTask(taskId);
    if (!task || task.state.status !== "running") return;
    const turn = taskKind(task) === "turn";
    await this.run(task.id, { trigger: turn ? null : "resuming work interrupted by a restart", direct: turn });
  }

  /** Runs a pending task taken over after a restart (its open activation resumes from the journal). */
  private async onResumePending(taskId: TaskId): Promise<void> {
    const task = await this.deps.store.tasks.getTask(taskId);
    if (!task || task.state.status !== "pending") return;
    const turn = taskKind(task) === "turn";
    await this.run(task.id, { trigger: turn ? null : "resuming work interrupted by a restart", direct: turn });
  }

  /** Schedules a `task.resume` job for a running task at its lease expiry (now if expired). */
  async scheduleResume(task: Task): Promise<void> {
    const now = this.deps.clock.now();
    const at = task.lease && task.lease.until > now ? task.lease.until : now;
    await this.deps.scheduler.schedule({ name: resumeJobName, key: task.id, data: { taskId: task.id }, timing: { kind: "at", at } });
  }

  /**
   * Takes over a running task whose lease belongs to a worker of an earlier process. Only for the
   * embedded mode, where one process owns DATA_DIR, so any other owner is a dead predecessor: the
   * claim is made as of the lease's expiry, then the first checkpoint sets a real lease.
   */
  private async takeOver(task: Task): Promise<boolean> {
    if (task.state.status !== "running" || !task.lease || task.lease.owner === this.owner) return false;
    const asOf = new Date(Math.max(task.lease.until.getTime(), this.deps.clock.now().getTime()) + 1);
    const claimed = await this.deps.store.tasks.claimTask({ taskId: task.id, owner: this.owner, now: asOf, leaseMs: this.deps.leaseMs });
    if (!claimed) return false;
    await this.deps.store.tasks.saveCheckpoint({ taskId: task.id, owner: this.owner, cursor: claimed.cursor, checkpoint: claimed.checkpoint, now: this.deps.clock.now(), leaseMs: this.deps.leaseMs });
    await this.deps.store.tasks.transitionTask({ taskId: task.id, owner: this.owner, to: { status: "pending" }, now: this.deps.clock.now() });
    return true;
  }

  /**
   * Finds work interrupted by a crash or left due during downtime: running tasks are resumed (at once
   * when `takeOverStaleLeases`, the embedded single-process mode; else when their lease expires),
   * pending tasks that are due run now. Returns counts.
   */
  async recover(options: { takeOverStaleLeases: boolean }): Promise<{ resumed: number; due: number }> {
    const { store, clock } = this.deps;
    let resumed = 0;
    let due = 0;
    for (const status of ["running", "pending"] as const) {
      let after: string | undefined;
      do {
        const page = await store.tasks.listTasks({ status: [status] }, { limit: 200, ...(after && { after }) });
        for (const task of page.items) {
          if (status === "running") {
            if (options.takeOverStaleLeases && (await this.takeOver(task))) void this.onResumePending(task.id);
            else await this.scheduleResume(task);
            resumed++;
          } else if (taskKind(task) === "turn") {
            void this.onResumePending(task.id);
          } else if (!task.notBefore || task.notBefore <= clock.now()) {
            void this.onWake(task.id, task.notBefore ?? clock.now());
            due++;
          }
        }
        after = page.next;
      } while (after);
    }
    return { resumed, due };
  }

  /** Delivers what the activation said and moves the task to its next state. */
  private async finish(task: Task, person: Person, runtime: { activation: number; resumes: number; round?: number }, outcome: ActivationOutcome, direct: boolean): Promise<void> {
    const activation = runtime.activation;
    const { result, requests } = outcome;
    if (result.kind === "aborted") return; // shutting down: the lease expires and the activation resumes
    const kind = taskKind(task);
    const spec = wakeupSpecOf(task);
    const text = result.kind === "reply" ? result.text : null;
    // Stable across crash re-runs of the same activation; new after each approval round.
    const key = `${task.id}:a${activation}${runtime.round ? `p${runtime.round}` : ""}`;

    if (kind === "turn" || direct) {
      const answer = text ?? failureText(result.kind);
      await this.deps.deliverReply(task, person, answer, `reply:${key}`);
    } else {
      let candidate = text;
      // An asked-for reminder still arrives when the model fails: its own note is the honest content.
      if (candidate === null && spec?.notify === "always") candidate = `Reminder: ${spec.note}`;
      if (candidate !== null) {
        await this.deps.notifier.propose({
          personId: person.id,
          taskId: task.id,
          deliveryKey: `notify:${key}`,
          candidate: { text: candidate, askedFor: spec?.notify === "always", mustAct: requests.waitForReply !== null || requests.approvalId !== null },
        });
      }
    }
    // Waiting for an approval keeps the activation open: once decided, it resumes with its history
    // (and its taint) rebuilt from the journal, and the model repeats the call under the new grant.
    const waitsForApproval = requests.approvalId !== null;
    await this.release(task, this.nextState(task, outcome), {
      activation,
      resumes: waitsForApproval ? runtime.resumes : 0,
      open: waitsForApproval,
      approvalId: requests.approvalId,
      round: runtime.round ?? 0,
    });
  }

  private nextState(task: Task, outcome: ActivationOutcome): TaskState {
    const { requests, result } = outcome;
    if (requests.approvalId) return { status: "waiting", wait: { kind: "approval", approvalId: asId("approval", requests.approvalId) } };
    if (requests.waitForEvent) return { status: "waiting", wait: { kind: "event", hookId: requests.waitForEvent.hookId } };
    if (requests.waitForReply) return { status: "waiting", wait: { kind: "reply" } };
    const recurring = this.nextRecurrence(task);
    if (recurring) return { status: "waiting", wait: { kind: "time", until: recurring } };
    if (result.kind === "error") return { status: "failed", error: result.error.message };
    return { status: "done", result: result.kind === "reply" ? result.text.slice(0, 2_000) : null };
  }

  /** Next fire time of a recurring wake-up or check-in, null for one-shot work. */
  private nextRecurrence(task: Task): Date | null {
    const c = task.checkpoint as { type?: string; timing?: { cron?: string; timezone?: string }; cron?: string; timeZone?: string } | null;
    const now = this.deps.clock.now();
    if (c?.type === "wakeup" && c.timing?.cron && c.timing.timezone) return nextCronTime(c.timing.cron, c.timing.timezone, now);
    if (c?.type === "checkin" && c.cron && c.timeZone) return nextCronTime(c.cron, c.timeZone, now);
    return null;
  }

  /** Leaves `running` with the runtime state saved. */
  private async release(task: Task, to: TaskState, runtime?: { activation: number; resumes: number; open: boolean; approvalId?: string | null; round?: number }): Promise<void> {
    const { store, clock } = this.deps;
    if (runtime) {
      const fresh = (await store.tasks.getTask(task.id)) ?? task;
      await store.tasks.saveCheckpoint({ taskId: task.id, owner: this.owner, cursor: fresh.cursor, checkpoint: withRuntime(fresh, runtime, { observations: [] }), now: clock.now(), leaseMs: this.deps.leaseMs });
    }
    await store.tasks.transitionTask({ taskId: task.id, owner: this.owner, to, now: clock.now() });
  }

  private async withoutModel(task: Task, person: Person, direct: boolean): Promise<void> {
    const spec = wakeupSpecOf(task);
    if (taskKind(task) === "turn" || direct) {
      await this.deps.deliverReply(task, person, failureText("no_model"), `reply:${task.id}:nomodel`);
    } else if (spec?.notify === "always") {
      await this.deps.notifier.propose({ personId: person.id, taskId: task.id, deliveryKey: `notify:${task.id}:nomodel:${Date.now()}`, candidate: { text: `Reminder: ${spec.note}`, askedFor: true, mustAct: false } });
    }
    const next = this.nextRecurrence(task);
    await this.release(task, next ? { status: "waiting", wait: { kind: "time", until: next } } : { status: "done", result: null });
  }
}

/** How a task is run. */
export interface RunOptions {
  /** One line saying what woke the task (null for a conversation turn). */
  trigger: string | null;
  /** Outside content that came with the trigger (a webhook body): untrusted, taints the activation. */
  observations?: UntrustedContent[];
  /** Resume a waiting task whatever it waits for (the caller resolved the condition). */
  from?: "waiting";
  /** The conversation message that started this activation (provenance). */
  originMessageId?: string | null;
  /** Answer the person directly (a turn, or a task resumed by their reply) instead of via the notification filter. */
  direct?: boolean;
  /**
   * The time the trigger was due (a wake-up job's scheduled time): the task is claimed as of then, so
   * a job firing at its due time finds the task due even if clocks differ by a few milliseconds.
   */
  asOf?: Date;
  /** Resume only if the task still waits for this approval request. */
  onlyIfWaitingFor?: string;
}

/** Short honest texts for turns that produced no answer (field case M1: never a placeholder). */
export function failureText(kind: "empty" | "step_limit" | "error" | "no_model" | "reply" | "aborted"): string {
  switch (kind) {
    case "step_limit":
      return "I ran out of steps while working on that. Say “continue” if you want me to keep going.";
    case "error":
      return "I couldn't reach my language model just now, so I can't answer yet. Please try again in a moment.";
    case "no_model":
      return "No model is configured yet, so I can't answer. Open Familiar's setup page in a browser (http://127.0.0.1:3000 on the Familiar machine) to choose one, or set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server).";
    default:
      return "Sorry — I couldn't come up with an answer to that just now. Could you try again?";
  }
}

export type { PersonId };
