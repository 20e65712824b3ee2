/**
 * MongoDB implementation of `TaskRepository` (`tasks`). Claims, transitions and checkpoints are
 * single `findOneAndUpdate` calls whose filters carry the state machine and the lease (see
 * task-filters.ts); when one matches nothing, the task is read once to say why.
 */
import type { Clock } from "../../clock.js";
import { ConflictError, IllegalTransitionError, NotFoundError, ValidationError } from "../../errors.js";
import { newId, type PersonId, type TaskId } from "../../ids.js";
import { type TaskRepository } from "../index.js";
import { legalTransitions, type ClaimedTask, type NewTask, type Task, type TaskState, type TaskKind, type TaskStatus, type WaitMatch } from "../../tasks/records.js";
import { type Json } from "../../json.js";
import { type Page, type PageRequest } from "../index.js";
import type { Document } from "mongodb";
import type { TaskDoc } from "./documents.js";

/** What a claim needs of a due task. */
type DueHead = Pick<TaskDoc, "_id" | "dueAt" | "createdAt" | "kind" | "personId">;
import { decodeJson, encodeJson, toTask } from "./codec.js";
import type { DbLike } from "./driver.js";
import { idAfter, pageLimit, toPage } from "./paging.js";
import { openColl } from "./session.js";
import {
  checkpointFilter,
  checkpointUpdate,
  claimDueTaskSort,
  claimTaskFilter,
  claimTaskUpdate,
  dueTaskFilter,
  listTasksFilter,
  resumeWaitingFilter,
  resumeWaitingUpdate,
  stateFields,
  taskDueAt,
  transitionFilter,
  transitionUpdate,
  waitingTasksFilter,
} from "./task-filters.js";

/** How often a claim or compare-and-set retries after losing a race to another worker. */
const claimAttempts = 8;

/** `value` (an object, else `{}`) with `key` set. */
function withKey(value: Json, key: string, v: Json): Json {
  const base = value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
  return { ...base, [key]: v };
}

/** Tasks with the state machine and leases enforced in each update filter (`tasks`). */
export class MongoTaskRepository implements TaskRepository {
  private readonly tasks;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.tasks = openColl<TaskDoc>(db, "tasks", "task");
  }

  async createTask(input: NewTask): Promise<Task> {
    const now = this.clock.now();
    const state: TaskState = input.waitsFor ? { status: "waiting", wait: { kind: "change", afterSeq: input.waitsFor.afterSeq } } : { status: "pending" };
    const notBefore = input.notBefore ?? null;
    const doc: TaskDoc = {
      _id: newId("task"),
      personId: input.personId,
      goalId: input.goalId ?? null,
      kind: input.kind,
      title: input.title,
      ...stateFields(state),
      plan: input.plan ?? [],
      cursor: 0,
      checkpoint: encodeJson(input.checkpoint ?? {}),
      lease: null,
      notBefore,
      dueAt: taskDueAt(state, notBefore, null),
      createdAt: now,
      updatedAt: now,
    };
    await this.tasks.insertOne(doc);
    return toTask(doc);
  }

  async getTask(id: TaskId): Promise<Task | null> {
    const doc = await this.tasks.findOne({ _id: id });
    return doc === null ? null : toTask(doc);
  }

  async claimTask(input: { taskId: TaskId; owner: string; now: Date; leaseMs: number }): Promise<Task | null> {
    const filter = claimTaskFilter({ taskId: input.taskId, now: input.now });
    const doc = await this.tasks.findOneAndUpdate(filter, claimTaskUpdate(input.owner, input.now, input.leaseMs));
    return doc === null ? null : toTask(doc);
  }

  /**
   * Reads the first due tasks, then claims the first one whose due time is unchanged (a lost race
   * tries the next). A person's turns run in message order: a turn with an earlier open turn of the
   * same person is passed over.
   */
  async claimDueTask(input: { owner: string; now: Date; leaseMs: number; personId?: PersonId; excludePersons?: readonly PersonId[] }): Promise<ClaimedTask | null> {
    for (let attempt = 0; attempt < claimAttempts; attempt++) {
      const heads = await this.dueHeads(input.now, input.personId, input.excludePersons);
      if (heads.length === 0) return null;
      for (const head of heads) {
        const doc = await this.tasks.findOneAndUpdate(
          claimTaskFilter({ taskId: head._id, now: input.now, dueAt: head.dueAt ?? null }),
          claimTaskUpdate(input.owner, input.now, input.leaseMs),
        );
        if (doc !== null) return { task: toTask(doc), dueAt: head.dueAt ?? head.createdAt };
      }
    }
    return null;
  }

  async nextDueAt(input: { excludePersons?: readonly PersonId[] } = {}): Promise<Date | null> {
    const [head] = await this.dueHeads(null, undefined, input.excludePersons);
    return head ? (head.dueAt ?? head.createdAt) : null;
  }

  /** Due tasks (at `now`, or by time at all when null) in claim order, turns kept in message order per person. */
  private async dueHeads(now: Date | null, personId?: PersonId, excludePersons?: readonly PersonId[]): Promise<DueHead[]> {
    const filter: Document = now ? claimTaskFilter({ now, ...(personId === undefined ? {} : { personId }) }) : { ...dueTaskFilter };
    if (excludePersons?.length) filter.personId = { $nin: [...excludePersons] };
    const candidates = await this.tasks.find(filter, { sort: claimDueTaskSort, limit: claimAttempts, projection: { _id: 1, dueAt: 1, createdAt: 1, kind: 1, personId: 1 } });
    const heads: DueHead[] = [];
    for (const c of candidates) {
      if (c.kind === "turn") {
        const earlier = await this.tasks.findOne({ personId: c.personId, kind: "turn", status: { $in: ["pending", "running"] }, _id: { $lt: c._id } }, { projection: { _id: 1 } });
        if (earlier) continue;
      }
      heads.push(c);
    }
    return heads;
  }

  /** A compare-and-set on the checkpoint read first (the checkpoint is stored as JSON text). */
  async resumeWaitingTask(input: { taskId: TaskId; wait: WaitMatch; input: Json; now: Date }): Promise<Task | null> {
    const current = await this.tasks.findOne({ _id: input.taskId });
    if (current === null || current.status !== "waiting" || current.wait?.kind !== input.wait.kind) return null;
    const checkpoint = encodeJson(withKey(decodeJson(current.checkpoint), "input", input.input));
    const wait =
      input.wait.kind === "event"
        ? { kind: "event", hookId: input.wait.hookId }
        : input.wait.kind === "approval"
          ? { kind: "approval", approvalId: input.wait.approvalId }
          : input.wait.kind === "change"
            ? { kind: "change", afterSeq: input.wait.afterSeq }
            : { kind: input.wait.kind };
    const doc = await this.tasks.findOneAndUpdate(resumeWaitingFilter(input.taskId, wait, current.checkpoint), resumeWaitingUpdate(checkpoint, input.now));
    return doc === null ? null : toTask(doc);
  }

  /** Extends the newest pending turn task (compare-and-set on its checkpoint), else inserts a new one. */
  async bindTurnMessage(input: { personId: PersonId; seq: number; now: Date; notBefore?: Date | null }): Promise<Task> {
    for (let attempt = 0; attempt < claimAttempts; attempt++) {
      const [pending] = await this.tasks.find({ personId: input.personId, status: "pending", kind: "turn" }, { sort: { _id: -1 }, limit: 1 });
      if (!pending) break;
      const cp = decodeJson(pending.checkpoint);
      const toSeq = cp !== null && typeof cp === "object" && !Array.isArray(cp) && typeof cp.toSeq === "number" ? cp.toSeq : 0;
      const checkpoint = encodeJson(withKey(cp, "toSeq", Math.max(toSeq, input.seq)));
      const doc = await this.tasks.findOneAndUpdate(
        { _id: pending._id, status: "pending", checkpoint: pending.checkpoint },
        { $set: { checkpoint, updatedAt: input.now } },
      );
      if (doc !== null) return toTask(doc);
    }
    return this.createTask({ personId: input.personId, kind: "turn", title: "conversation turn", checkpoint: { fromSeq: input.seq, toSeq: input.seq }, notBefore: input.notBefore ?? null });
  }

  async renewLeases(input: { owner: string; now: Date; leaseMs: number }): Promise<number> {
    const until = new Date(input.now.getTime() + input.leaseMs);
    const r = await this.tasks.updateMany({ status: "running", "lease.owner": input.owner }, { $set: { "lease.until": until, dueAt: until } });
    return r.modifiedCount;
  }

  async expireForeignLeases(input: { owner: string; now: Date }): Promise<number> {
    const r = await this.tasks.updateMany(
      { status: "running", "lease.owner": { $ne: input.owner }, "lease.until": { $gt: input.now } },
      { $set: { "lease.until": input.now, dueAt: input.now } },
    );
    return r.modifiedCount;
  }

  async transitionTask(input: { taskId: TaskId; owner: string | null; to: TaskState; now: Date }): Promise<Task> {
    // `notBefore` never changes after creation, so reading it first cannot race.
    const before = await this.tasks.findOne({ _id: input.taskId }, { projection: { notBefore: 1, status: 1 } });
    if (before === null) throw new NotFoundError("task", input.taskId);
    if (input.to.status === "running" && before.status !== "running" && legalTransitions[before.status].includes("running")) {
      // Starting a task sets a lease, which only a claim does (same rule as the SQLite adapter).
      throw new ValidationError(`task ${input.taskId}: use claimTask to start running a ${before.status} task (a claim sets the lease)`);
    }
    const doc = await this.tasks.findOneAndUpdate(
      transitionFilter(input.taskId, input.to.status, input.owner),
      transitionUpdate(input.to, input.now, before.notBefore),
    );
    if (doc !== null) return toTask(doc);
    throw await this.whyNoMatch(input.taskId, input.to.status, input.owner);
  }

  async saveCheckpoint(input: {
    taskId: TaskId;
    owner: string;
    cursor: number;
    checkpoint: Json;
    plan?: string[];
    now: Date;
    leaseMs: number;
  }): Promise<Task> {
    const doc = await this.tasks.findOneAndUpdate(
      checkpointFilter(input.taskId, input.owner),
      checkpointUpdate({
        cursor: input.cursor,
        checkpoint: encodeJson(input.checkpoint),
        ...(input.plan === undefined ? {} : { plan: input.plan }),
        now: input.now,
        leaseMs: input.leaseMs,
      }),
    );
    if (doc !== null) return toTask(doc);
    const current = await this.tasks.findOne({ _id: input.taskId }, { projection: { status: 1, lease: 1 } });
    if (current === null) throw new NotFoundError("task", input.taskId);
    throw new ConflictError(
      `task ${input.taskId}: checkpoint refused, ${input.owner} does not hold the lease (status ${current.status}, lease ${current.lease?.owner ?? "none"})`,
    );
  }

  async listTasks(filter: { personId?: PersonId; goalId?: string; status?: TaskStatus[]; kind?: TaskKind[] }, page?: PageRequest): Promise<Page<Task>> {
    const limit = pageLimit(page);
    const docs = await this.tasks.find({ ...listTasksFilter(filter), ...idAfter(page?.after, 1) }, { sort: { _id: 1 }, limit: limit + 1 });
    return toPage(docs, limit, toTask);
  }

  async findWaitingTasks(
    wait:
      | { kind: "event"; hookId: string }
      | { kind: "approval"; approvalId: string }
      | { kind: "reply"; personId: PersonId }
      | { kind: "held"; personId: PersonId }
      | { kind: "change"; personId: PersonId },
  ): Promise<Task[]> {
    const docs = await this.tasks.find(waitingTasksFilter(wait), { sort: { _id: 1 } });
    return docs.map(toTask);
  }

  /** Explains a transition whose conditional update matched nothing. */
  private async whyNoMatch(taskId: TaskId, to: TaskStatus, owner: string | null): Promise<Error> {
    const current = await this.tasks.findOne({ _id: taskId }, { projection: { status: 1, lease: 1 } });
    if (current === null) return new NotFoundError("task", taskId);
    if (!legalTransitions[current.status].includes(to)) return new IllegalTransitionError(taskId, current.status, to);
    return new ConflictError(
      `task ${taskId}: ${current.status} → ${to} refused, ${owner ?? "a caller without a lease"} does not hold the lease (held by ${current.lease?.owner ?? "nobody"})`,
    );
  }
}
