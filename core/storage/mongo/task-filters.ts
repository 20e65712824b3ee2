/**
 * Filter and update documents of the task repository, as pure functions so they can be evaluated
 * offline (test/core/storage/mongo-shapes.test.ts runs them through mingo).
 *
 * The state machine lives in the filters: every status-changing update matches only tasks whose
 * current `status` is a legal from-state of the target (`legalTransitions`, types.ts), so the store
 * rejects an illegal change even when a caller skipped its own checks.
 */
import type { Document } from "mongodb";
import { legalTransitions, type TaskState, type TaskStatus, type WaitCondition } from "../../tasks/records.js";

const allStatuses = Object.keys(legalTransitions) as TaskStatus[];

/** The statuses from which a task may move to `to`, per `legalTransitions`. */
export function legalFromStates(to: TaskStatus): TaskStatus[] {
  return allStatuses.filter((from) => legalTransitions[from].includes(to));
}

/** `{ status: { $in: <legal from-states of to> } }`. */
export function legalFromFilter(to: TaskStatus): Document {
  return { status: { $in: legalFromStates(to) } };
}

/**
 * Tasks claimable at `now`: pending and past `notBefore` (or without one), waiting for a time that
 * has come, or running with a lease that ended at or before `now` (or no lease).
 */
export function claimableTaskFilter(now: Date): Document {
  return {
    $or: [
      { status: "pending", $or: [{ notBefore: null }, { notBefore: { $lte: now } }] },
      { status: "waiting", "wait.kind": "time", "wait.until": { $lte: now } },
      { status: "running", $or: [{ lease: null }, { "lease.until": { $lte: now } }] },
    ],
  };
}

/** Filter of `claimTask` / `claimDueTask`: claimable tasks (optionally one task or one person's). */
export function claimTaskFilter(input: { taskId?: string; personId?: string; now: Date; dueAt?: Date | null }): Document {
  const target: Document = {};
  if (input.taskId !== undefined) target._id = input.taskId;
  if (input.personId !== undefined) target.personId = input.personId;
  if (input.dueAt !== undefined) target.dueAt = input.dueAt;
  return { ...target, $and: [legalFromFilter("running"), claimableTaskFilter(input.now)] };
}

/** Filter of `nextDueAt`: tasks that become claimable by time (pending, waiting for a time, running). */
export const dueTaskFilter: Document = {
  $or: [{ status: "pending" }, { status: "waiting", "wait.kind": "time" }, { status: "running" }],
};

/** Filter of `resumeWaitingTask`: the task, waiting for exactly `wait`, with the checkpoint read before. */
export function resumeWaitingFilter(taskId: string, wait: { kind: string; hookId?: string; approvalId?: string; afterSeq?: number }, checkpoint: string): Document {
  const f: Document = { _id: taskId, status: "waiting", "wait.kind": wait.kind, checkpoint };
  if (wait.hookId !== undefined) f["wait.hookId"] = wait.hookId;
  if (wait.approvalId !== undefined) f["wait.approvalId"] = wait.approvalId;
  if (wait.afterSeq !== undefined) f["wait.afterSeq"] = wait.afterSeq;
  return f;
}

/** Update of `resumeWaitingTask`: pending, due at once, with the new checkpoint. */
export function resumeWaitingUpdate(checkpoint: string, now: Date): Document {
  return { $set: { status: "pending", wait: null, notBefore: null, dueAt: null, checkpoint, updatedAt: now } };
}

/** Sort of `claimDueTask`: earliest due time (null: due since ever), then creation. */
export const claimDueTaskSort = { dueAt: 1, _id: 1 } as const;

/** Update of a claim: running under `owner`'s lease until `now + leaseMs`. */
export function claimTaskUpdate(owner: string, now: Date, leaseMs: number): Document {
  const until = new Date(now.getTime() + leaseMs);
  return {
    $set: { status: "running", wait: null, lease: { owner, until }, dueAt: until, updatedAt: now },
  };
}

/**
 * When a task in `state` next becomes claimable, used to order `claimDueTask` and for `nextDueAt`:
 * pending → its `notBefore` (null sorts first: due at once); waiting for a time → `until`; running →
 * the lease's end; anything else (held included) → null (never claimed by time).
 */
export function taskDueAt(state: TaskState, notBefore: Date | null, lease: { until: Date } | null): Date | null {
  switch (state.status) {
    case "pending":
      return notBefore;
    case "waiting":
      return state.wait.kind === "time" ? state.wait.until : null;
    case "running":
      return lease?.until ?? null;
    default:
      return null;
  }
}

/** The flattened state fields of a task document for `state`. */
export function stateFields(state: TaskState): {
  status: TaskStatus;
  wait: WaitCondition | null;
  result: string | null;
  error: string | null;
  reason: string | null;
} {
  return {
    status: state.status,
    wait: state.status === "waiting" ? state.wait : null,
    result: state.status === "done" ? state.result : null,
    error: state.status === "failed" ? state.error : null,
    reason: state.status === "cancelled" ? state.reason : null,
  };
}

/**
 * Filter of `transitionTask`: the task, in a legal from-state of `to`, and — if it is running —
 * leased by `owner` (a null owner can never move a running task).
 */
export function transitionFilter(taskId: string, to: TaskStatus, owner: string | null): Document {
  const leaseHeld: Document[] = [{ status: { $ne: "running" } }];
  if (owner !== null) leaseHeld.push({ "lease.owner": owner });
  return { _id: taskId, ...legalFromFilter(to), $or: leaseHeld };
}

/**
 * Update of `transitionTask`. Leaving `running` releases the lease; staying `running` keeps it.
 * `notBefore` is the task's own (immutable) `notBefore`, needed for the due time of `pending`.
 */
export function transitionUpdate(to: TaskState, now: Date, notBefore: Date | null): Document {
  const set: Document = { ...stateFields(to), updatedAt: now };
  if (to.status === "running") {
    // The lease (and so the due time) is whatever the running task already has.
    return { $set: set };
  }
  set.lease = null;
  set.dueAt = taskDueAt(to, notBefore, null);
  return { $set: set };
}

/** Filter of `saveCheckpoint`: the task, running, leased by `owner`. */
export function checkpointFilter(taskId: string, owner: string): Document {
  return { _id: taskId, status: "running", "lease.owner": owner };
}

/** Update of `saveCheckpoint`: progress, and the lease extended to `now + leaseMs`. */
export function checkpointUpdate(input: { cursor: number; checkpoint: string; plan?: string[]; now: Date; leaseMs: number }): Document {
  const until = new Date(input.now.getTime() + input.leaseMs);
  const set: Document = {
    cursor: input.cursor,
    checkpoint: input.checkpoint,
    "lease.until": until,
    dueAt: until,
    updatedAt: input.now,
  };
  if (input.plan !== undefined) set.plan = input.plan;
  return { $set: set };
}

/** Filter of `listTasks`. */
export function listTasksFilter(filter: { personId?: string; goalId?: string; status?: TaskStatus[]; kind?: string[] }): Document {
  const f: Document = {};
  if (filter.kind !== undefined) f.kind = { $in: filter.kind };
  if (filter.personId !== undefined) f.personId = filter.personId;
  if (filter.goalId !== undefined) f.goalId = filter.goalId;
  if (filter.status !== undefined) f.status = { $in: filter.status };
  return f;
}

/** Filter of `findWaitingTasks`. */
export function waitingTasksFilter(
  wait:
    | { kind: "event"; hookId: string }
    | { kind: "approval"; approvalId: string }
    | { kind: "reply"; personId: string }
    | { kind: "held"; personId: string }
    | { kind: "change"; personId: string },
): Document {
  switch (wait.kind) {
    case "event":
      return { status: "waiting", "wait.kind": "event", "wait.hookId": wait.hookId };
    case "approval":
      return { status: "waiting", "wait.kind": "approval", "wait.approvalId": wait.approvalId };
    case "reply":
    case "held":
    case "change":
      return { status: "waiting", "wait.kind": wait.kind, personId: wait.personId };
  }
}
