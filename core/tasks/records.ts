/**
 * Tasks: durable units of work claimed by one loop under a lease, their states and legal
 * transitions, what a waiting task waits for, and the exactly-once journal of their tool calls.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { ApprovalId, GoalId, HookId, PersonId, TaskId } from "../ids.js";
import type { Json } from "../json.js";

/**
 * What a waiting task waits for. `held`: background work the person (`/pause`) or its goal paused;
 * `until` keeps the due time it had, restored on resume (null: it was due at once).
 */
export type WaitCondition =
  | { kind: "time"; until: Date }
  | { kind: "event"; hookId: HookId }
  | { kind: "approval"; approvalId: ApprovalId }
  | { kind: "reply" }
  | { kind: "held"; until: Date | null }
  /** A change a connection recorded (a new mail) with a seq above `afterSeq` (see ChangeRepository). */
  | { kind: "change"; afterSeq: number };

/**
 * A task's state. Legal transitions (enforced by the store):
 * pending → running | cancelled; running → waiting | done | failed | cancelled | pending;
 * waiting → running | pending (its condition was met: `resumeWaitingTask`) | waiting (held ↔ time) |
 * cancelled. A running task whose lease expired may be claimed again (running → running).
 */
export type TaskState =
  | { status: "pending" }
  | { status: "running" }
  | { status: "waiting"; wait: WaitCondition }
  | { status: "done"; result: string | null }
  | { status: "failed"; error: string }
  | { status: "cancelled"; reason: string | null };

export type TaskStatus = TaskState["status"];

export const legalTransitions: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ["running", "cancelled"],
  running: ["waiting", "done", "failed", "cancelled", "pending", "running"],
  waiting: ["running", "pending", "waiting", "cancelled"],
  done: [],
  failed: [],
  cancelled: [],
};

/** Exclusive right of one worker to run a task until `until`. */
export interface Lease {
  owner: string;
  until: Date;
}

/**
 * What a task is for; its checkpoint's shape depends on it (parsed by `core/tasks/checkpoint.ts`):
 * - `turn`: answers a range of the person's messages;
 * - `wakeup`: a wake-up the model scheduled (once or on a cron in a time zone);
 * - `checkin`: a goal's recurring check-in.
 */
export type TaskKind = "turn" | "wakeup" | "checkin";

export const taskKinds: readonly TaskKind[] = ["turn", "wakeup", "checkin"];

/**
 * A task: one durable unit of Familiar's work for a person — answering a turn of their messages, a
 * wake-up it scheduled, a goal's check-in. It lives in the store, moves through {@link TaskState}s
 * (the store refuses illegal transitions, see {@link legalTransitions}), is run by exactly one worker
 * at a time under a {@link Lease}, and saves its `checkpoint` after each step so a crash resumes it
 * instead of starting over; its tool calls are journalled ({@link JournalEntry}) so none runs twice.
 */
export interface Task {
  id: TaskId;
  personId: PersonId;
  goalId: GoalId | null;
  kind: TaskKind;
  title: string;
  state: TaskState;
  /** Plan steps in the task's own words. */
  plan: string[];
  /** Index of the next step to execute. */
  cursor: number;
  /** Opaque runtime state saved after each step. */
  checkpoint: Json;
  lease: Lease | null;
  /** When a pending task may first run (null: at once). */
  notBefore: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewTask = Pick<Task, "personId" | "title" | "kind"> &
  Partial<Pick<Task, "goalId" | "plan" | "checkpoint" | "notBefore">> & {
    /** Create the task already waiting for a connection change (a watch), instead of pending. */
    waitsFor?: Extract<WaitCondition, { kind: "change" }>;
  };

/** A claimed task and the instant it was due (its `notBefore`, wait time or lease end before the claim). */
export interface ClaimedTask {
  task: Task;
  dueAt: Date;
}

/**
 * Which waiting task `resumeWaitingTask` may resume: the wait it must still be in. `time`: a recurring
 * job between occurrences, resumed early because its parked call (a decided card) can go on (issue 18 item 9).
 */
export type WaitMatch =
  | { kind: "event"; hookId: HookId }
  | { kind: "approval"; approvalId: ApprovalId }
  | { kind: "reply" }
  | { kind: "time" }
  | { kind: "change"; afterSeq: number };

/** One entry of a task's tool-call journal: the intent is written before the call, the result after. */
export interface JournalEntry {
  taskId: TaskId;
  step: number;
  /** Derived from (task, step); unique. The side effect carries it where the target supports it. */
  idempotencyKey: string;
  tool: string;
  args: Json;
  sideEffect: boolean;
  intentAt: Date;
  outcome: { ok: true; result: Json; at: Date } | { ok: false; error: string; at: Date } | null;
}

export type NewJournalIntent = Omit<JournalEntry, "intentAt" | "outcome"> & { intentAt?: Date };
