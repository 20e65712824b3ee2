import {
  ConflictError,
  DuplicateKeyError,
  IllegalTransitionError,
  NotFoundError,
  ValidationError,
} from "../../errors.js";
import { asId, newId, type GoalId, type PersonId, type TaskId } from "../../ids.js";
import type { TaskRepository } from "../index.js";
import type { ClaimedTask, NewTask, Task, TaskKind, TaskState, TaskStatus, WaitCondition, WaitMatch } from "../../tasks/records.js";
import type { Json } from "../../json.js";
import type { Page, PageRequest } from "../index.js";
import {
  type Row,
  type SqliteContext,
  inJson,
  jsonText,
  ms,
  msOrNull,
  parseJson,
  toDate,
  toDateOrNull,
} from "./context.js";
import { keyset, toPage } from "./pagination.js";

function toWait(row: Row): WaitCondition {
  switch (row.wait_kind) {
    case "time":
      return { kind: "time", until: toDate(row.wait_until) };
    case "event":
      return { kind: "event", hookId: asId("hook", row.wait_key as string) };
    case "approval":
      return { kind: "approval", approvalId: asId("approval", row.wait_key as string) };
    case "held":
      return { kind: "held", until: toDateOrNull(row.wait_until) };
    case "change":
      return { kind: "change", afterSeq: Number(row.wait_key) };
    default:
      return { kind: "reply" };
  }
}

function toState(row: Row): TaskState {
  const status = row.status as TaskStatus;
  switch (status) {
    case "pending":
    case "running":
      return { status };
    case "waiting":
      return { status, wait: toWait(row) };
    case "done":
      return { status, result: row.outcome as string | null };
    case "failed":
      return { status, error: row.outcome as string };
    case "cancelled":
      return { status, reason: row.outcome as string | null };
  }
}

function toTask(row: Row): Task {
  const leaseUntil = toDateOrNull(row.lease_until);
  return {
    id: asId("task", row.id as string),
    personId: asId("person", row.person_id as string),
    goalId: row.goal_id === null ? null : asId("goal", row.goal_id as string),
    kind: row.kind as TaskKind,
    title: row.title as string,
    state: toState(row),
    plan: parseJson<string[]>(row.plan),
    cursor: row.cursor as number,
    checkpoint: parseJson<Json>(row.checkpoint),
    lease: leaseUntil && row.lease_owner !== null ? { owner: row.lease_owner as string, until: leaseUntil } : null,
    notBefore: toDateOrNull(row.not_before),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** Column values that encode a TaskState. */
function stateColumns(state: TaskState): { status: TaskStatus; waitKind: string | null; waitUntil: number | null; waitKey: string | null; outcome: string | null } {
  const none = { waitKind: null, waitUntil: null, waitKey: null, outcome: null };
  switch (state.status) {
    case "pending":
    case "running":
      return { status: state.status, ...none };
    case "waiting": {
      const wait = state.wait;
      return {
        status: "waiting",
        waitKind: wait.kind,
        waitUntil: wait.kind === "time" ? ms(wait.until) : wait.kind === "held" ? msOrNull(wait.until) : null,
        waitKey: wait.kind === "event" ? wait.hookId : wait.kind === "approval" ? wait.approvalId : wait.kind === "change" ? String(wait.afterSeq) : null,
        outcome: null,
      };
    }
    case "done":
      return { status: "done", ...none, outcome: state.result };
    case "failed":
      return { status: "failed", ...none, outcome: state.error };
    case "cancelled":
      return { status: "cancelled", ...none, outcome: state.reason };
  }
}

/**
 * A person's turns run in the order their messages came: a turn is not claimable while an earlier turn
 * of the same person is still open (pending, or running — possibly under a lease a dead process left).
 */
const turnsInOrder = `NOT (t.kind = 'turn' AND EXISTS (
  SELECT 1 FROM tasks e WHERE e.person_id = t.person_id AND e.kind = 'turn' AND e.status IN ('pending', 'running')
    AND (e.created_at < t.created_at OR (e.created_at = t.created_at AND e.id < t.id))))`;

const claimSet = `status = 'running', lease_owner = @owner, lease_until = @until, wait_kind = NULL, wait_until = NULL, wait_key = NULL, updated_at = @now`;

/**
 * Goals' tasks with their state machine and leases. Claims are single `UPDATE … RETURNING` statements,
 * atomic across processes sharing the file; the `tasks_state_machine` trigger rejects illegal status
 * changes whoever makes them.
 */
export class SqliteTaskRepository implements TaskRepository {
  constructor(private readonly ctx: SqliteContext) {}

  createTask(input: NewTask): Promise<Task> {
    const now = this.ctx.nowMs();
    const id = newId("task");
    return this.ctx.run(
      () =>
        toTask(
          this.ctx
            .stmt(
              `INSERT INTO tasks (id, person_id, goal_id, kind, title, status, wait_kind, wait_key, plan, cursor, checkpoint, not_before, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?) RETURNING *`,
            )
            .get(
              id,
              input.personId,
              input.goalId ?? null,
              input.kind,
              input.title,
              input.waitsFor ? "waiting" : "pending",
              input.waitsFor ? "change" : null,
              input.waitsFor ? String(input.waitsFor.afterSeq) : null,
              jsonText(input.plan ?? []),
              jsonText(input.checkpoint ?? {}),
              msOrNull(input.notBefore),
              now,
              now,
            ) as Row,
        ),
      { duplicate: (cause) => new DuplicateKeyError("task", id, { cause }), references: { entity: "person or goal", id: `${input.personId} / ${input.goalId ?? "(no goal)"}` } },
    );
  }

  getTask(id: TaskId): Promise<Task | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM tasks WHERE id = ?").get(id) as Row | undefined;
      return row ? toTask(row) : null;
    });
  }

  claimTask(input: { taskId: TaskId; owner: string; now: Date; leaseMs: number }): Promise<Task | null> {
    const now = ms(input.now);
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(`UPDATE tasks SET ${claimSet} WHERE id = @id AND due_at IS NOT NULL AND due_at <= @now RETURNING *`)
        .get({ id: input.taskId, owner: input.owner, until: now + input.leaseMs, now }) as Row | undefined;
      return row ? toTask(row) : null;
    });
  }

  /** A read and a conditional update in one synchronous step (no other statement runs between them). */
  claimDueTask(input: { owner: string; now: Date; leaseMs: number; personId?: PersonId; excludePersons?: readonly PersonId[] }): Promise<ClaimedTask | null> {
    const now = ms(input.now);
    return this.ctx.atomic(() => {
      const due = this.ctx
        .stmt(
          `SELECT id, due_at, created_at FROM tasks t
           WHERE due_at IS NOT NULL AND due_at <= @now AND (@person IS NULL OR person_id = @person)
             AND person_id NOT IN (SELECT value FROM json_each(@exclude)) AND ${turnsInOrder}
           ORDER BY due_at, created_at, id LIMIT 1`,
        )
        .get({ now, person: input.personId ?? null, exclude: JSON.stringify(input.excludePersons ?? []) }) as Row | undefined;
      if (!due) return null;
      const row = this.ctx
        .stmt(`UPDATE tasks SET ${claimSet} WHERE id = @id AND due_at = @dueAt RETURNING *`)
        .get({ id: due.id, dueAt: due.due_at, owner: input.owner, until: now + input.leaseMs, now }) as Row | undefined;
      // A pending task without notBefore sorts as due since ever (0); it fell due when it was created.
      return row ? { task: toTask(row), dueAt: toDate(due.due_at === 0 ? due.created_at : due.due_at) } : null;
    });
  }

  nextDueAt(input: { excludePersons?: readonly PersonId[] } = {}): Promise<Date | null> {
    return this.ctx.run(() => {
      const exclude = input.excludePersons ?? [];
      const at = (
        exclude.length === 0
          ? this.ctx.stmt(`SELECT due_at FROM tasks t WHERE due_at IS NOT NULL AND ${turnsInOrder} ORDER BY due_at LIMIT 1`).pluck().get()
          : this.ctx
              .stmt(`SELECT due_at FROM tasks t WHERE due_at IS NOT NULL AND person_id NOT IN (SELECT value FROM json_each(?)) AND ${turnsInOrder} ORDER BY due_at LIMIT 1`)
              .pluck()
              .get(JSON.stringify(exclude))
      ) as number | undefined;
      return at === undefined ? null : toDate(at);
    });
  }

  resumeWaitingTask(input: { taskId: TaskId; wait: WaitMatch; input: Json; now: Date }): Promise<Task | null> {
    const key = input.wait.kind === "event" ? input.wait.hookId : input.wait.kind === "approval" ? input.wait.approvalId : input.wait.kind === "change" ? String(input.wait.afterSeq) : null;
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE tasks SET status = 'pending', wait_kind = NULL, wait_until = NULL, wait_key = NULL, not_before = NULL,
             checkpoint = json_set(checkpoint, '$.input', json(@input)), updated_at = @now
           WHERE id = @id AND status = 'waiting' AND wait_kind = @kind AND wait_key IS @key RETURNING *`,
        )
        .get({ id: input.taskId, kind: input.wait.kind, key, input: jsonText(input.input), now: ms(input.now) }) as Row | undefined;
      return row ? toTask(row) : null;
    });
  }

  bindTurnMessage(input: { personId: PersonId; seq: number; now: Date; notBefore?: Date | null }): Promise<Task> {
    const now = ms(input.now);
    return this.ctx.atomic(() => {
      const extended = this.ctx
        .stmt(
          `UPDATE tasks SET checkpoint = json_set(checkpoint, '$.toSeq', max(coalesce(json_extract(checkpoint, '$.toSeq'), 0), @seq)), updated_at = @now
           WHERE id = (SELECT id FROM tasks WHERE person_id = @person AND status = 'pending' AND kind = 'turn' ORDER BY created_at DESC, id DESC LIMIT 1)
           RETURNING *`,
        )
        .get({ person: input.personId, seq: input.seq, now }) as Row | undefined;
      if (extended) return toTask(extended);
      const row = this.ctx
        .stmt(
          `INSERT INTO tasks (id, person_id, goal_id, kind, title, status, plan, cursor, checkpoint, not_before, created_at, updated_at)
           VALUES (?, ?, NULL, 'turn', 'conversation turn', 'pending', '[]', 0, ?, ?, ?, ?) RETURNING *`,
        )
        .get(newId("task"), input.personId, jsonText({ fromSeq: input.seq, toSeq: input.seq }), input.notBefore ? ms(input.notBefore) : null, now, now) as Row;
      return toTask(row);
    });
  }

  renewLeases(input: { owner: string; now: Date; leaseMs: number }): Promise<number> {
    return this.ctx.run(
      () =>
        this.ctx
          .stmt("UPDATE tasks SET lease_until = ? WHERE status = 'running' AND lease_owner = ?")
          .run(ms(input.now) + input.leaseMs, input.owner).changes,
    );
  }

  expireForeignLeases(input: { owner: string; now: Date }): Promise<number> {
    return this.ctx.run(
      () =>
        this.ctx
          .stmt("UPDATE tasks SET lease_until = min(lease_until, ?) WHERE status = 'running' AND lease_owner IS NOT ?")
          .run(ms(input.now), input.owner).changes,
    );
  }

  /**
   * Also throws ValidationError for `to: running` from another status: starting a task is a claim
   * (`claimTask`), which sets the lease.
   */
  transitionTask(input: { taskId: TaskId; owner: string | null; to: TaskState; now: Date }): Promise<Task> {
    const cols = stateColumns(input.to);
    return this.ctx.atomic(() => {
      const current = this.ctx.stmt("SELECT status, lease_owner FROM tasks WHERE id = ?").get(input.taskId) as Row | undefined;
      if (!current) throw new NotFoundError("task", input.taskId);
      const from = current.status as TaskStatus;
      if (from === "running" && (input.owner === null || current.lease_owner !== input.owner)) {
        throw new ConflictError(`task ${input.taskId} is running under another lease (${String(current.lease_owner)}), not ${String(input.owner)}: claim it first`);
      }
      if (cols.status === "running" && from !== "running") {
        throw new ValidationError(`task ${input.taskId}: use claimTask to start running a ${from} task (a claim sets the lease)`);
      }
      // Status changes are checked by the tasks_state_machine trigger; it ignores same-status updates.
      if (from === cols.status && from !== "running" && from !== "waiting") throw new IllegalTransitionError(input.taskId, from, cols.status);
      const keepLease = cols.status === "running";
      const row = this.ctx
        .stmt(
          `UPDATE tasks SET status = @status, wait_kind = @waitKind, wait_until = @waitUntil, wait_key = @waitKey, outcome = @outcome,
             lease_owner = CASE WHEN @keepLease = 1 THEN lease_owner END, lease_until = CASE WHEN @keepLease = 1 THEN lease_until END,
             updated_at = @now
           WHERE id = @id RETURNING *`,
        )
        .get({ ...cols, keepLease: keepLease ? 1 : 0, now: ms(input.now), id: input.taskId }) as Row;
      return toTask(row);
    });
  }

  saveCheckpoint(input: { taskId: TaskId; owner: string; cursor: number; checkpoint: Json; plan?: string[]; now: Date; leaseMs: number }): Promise<Task> {
    const now = ms(input.now);
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE tasks SET cursor = @cursor, checkpoint = @checkpoint, plan = coalesce(@plan, plan), lease_until = @until, updated_at = @now
           WHERE id = @id AND status = 'running' AND lease_owner = @owner RETURNING *`,
        )
        .get({
          cursor: input.cursor,
          checkpoint: jsonText(input.checkpoint),
          plan: input.plan ? jsonText(input.plan) : null,
          until: now + input.leaseMs,
          now,
          id: input.taskId,
          owner: input.owner,
        }) as Row | undefined;
      if (row) return toTask(row);
      const exists = this.ctx.stmt("SELECT status, lease_owner FROM tasks WHERE id = ?").get(input.taskId) as Row | undefined;
      if (!exists) throw new NotFoundError("task", input.taskId);
      throw new ConflictError(`task ${input.taskId} is ${String(exists.status)} with lease owner ${String(exists.lease_owner)}: ${input.owner} no longer holds it`);
    });
  }

  listTasks(filter: { personId?: PersonId; goalId?: GoalId; status?: TaskStatus[]; kind?: TaskKind[] }, page?: PageRequest): Promise<Page<Task>> {
    return this.ctx.run(() => {
      const k = keyset(page, "created_at", "asc");
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.personId !== undefined) {
        where.push("person_id = ?");
        params.push(filter.personId);
      }
      if (filter.goalId !== undefined) {
        where.push("goal_id = ?");
        params.push(filter.goalId);
      }
      if (filter.status !== undefined) {
        where.push(`status IN ${inJson}`);
        params.push(JSON.stringify(filter.status));
      }
      if (filter.kind !== undefined) {
        where.push(`kind IN ${inJson}`);
        params.push(JSON.stringify(filter.kind));
      }
      if (k.where) where.push(k.where);
      const sql = `SELECT * FROM tasks ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ${k.orderBy} LIMIT ?`;
      return toPage(this.ctx.stmt(sql).all(...params, ...k.params, k.fetch) as Row[], k.limit, "created_at", toTask);
    });
  }

  findWaitingTasks(
    wait:
      | { kind: "event"; hookId: string }
      | { kind: "approval"; approvalId: string }
      | { kind: "reply"; personId: PersonId }
      | { kind: "held"; personId: PersonId }
      | { kind: "change"; personId: PersonId },
  ): Promise<Task[]> {
    return this.ctx.run(() => {
      const rows =
        wait.kind === "reply" || wait.kind === "held" || wait.kind === "change"
          ? this.ctx.stmt("SELECT * FROM tasks WHERE status = 'waiting' AND wait_kind = ? AND person_id = ? ORDER BY created_at, id").all(wait.kind, wait.personId)
          : this.ctx
              .stmt("SELECT * FROM tasks WHERE status = 'waiting' AND wait_kind = ? AND wait_key = ? ORDER BY created_at, id")
              .all(wait.kind, wait.kind === "event" ? wait.hookId : wait.approvalId);
      return (rows as Row[]).map(toTask);
    });
  }
}
