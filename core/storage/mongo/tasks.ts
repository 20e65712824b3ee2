/**
 * MongoDB implementation of `TaskRepository` (`tasks`). Claims, transitions and checkpoints are
 * single `findOneAndUpdate` calls whose filters carry the state machine and the lease (see
 * task-filters.ts); when one matches nothing, the task is read once to say why.
 */
import type { Clock } from "../../clock.js";
import { ConflictError, IllegalTransitionError, NotFoundError, ValidationError } from "../../errors.js";
import { newId, type PersonId, type TaskId } from "../../ids.js";
import type { TaskRepository } from "../ports.js";
import { legalTransitions, type Json, type NewTask, type Page, type PageRequest, type Task, type TaskState, type TaskStatus } from "../types.js";
import type { TaskDoc } from "./collections.js";
import { encodeJson, toTask } from "./codec.js";
import type { DbLike } from "./driver.js";
import { idAfter, pageLimit, toPage } from "./paging.js";
import { openColl } from "./session.js";
import {
  checkpointFilter,
  checkpointUpdate,
  claimDueTaskSort,
  claimTaskFilter,
  claimTaskUpdate,
  listTasksFilter,
  stateFields,
  taskDueAt,
  transitionFilter,
  transitionUpdate,
  waitingTasksFilter,
} from "./task-filters.js";

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
    const state: TaskState = { status: "pending" };
    const notBefore = input.notBefore ?? null;
    const doc: TaskDoc = {
      _id: newId("task"),
      personId: input.personId,
      goalId: input.goalId ?? null,
      title: input.title,
      ...stateFields(state),
      plan: input.plan ?? [],
      cursor: 0,
      checkpoint: encodeJson(input.checkpoint ?? null),
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

  async claimTask(input: { taskId: TaskId; owner: string; now: Date; leaseMs: number; from?: "waiting" }): Promise<Task | null> {
    const filter = claimTaskFilter({ taskId: input.taskId, now: input.now, ...(input.from === undefined ? {} : { from: input.from }) });
    const doc = await this.tasks.findOneAndUpdate(filter, claimTaskUpdate(input.owner, input.now, input.leaseMs));
    return doc === null ? null : toTask(doc);
  }

  async claimDueTask(input: { owner: string; now: Date; leaseMs: number; personId?: PersonId }): Promise<Task | null> {
    const filter = claimTaskFilter({ now: input.now, ...(input.personId === undefined ? {} : { personId: input.personId }) });
    const doc = await this.tasks.findOneAndUpdate(filter, claimTaskUpdate(input.owner, input.now, input.leaseMs), {
      sort: claimDueTaskSort,
    });
    return doc === null ? null : toTask(doc);
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

  async listTasks(filter: { personId?: PersonId; goalId?: string; status?: TaskStatus[] }, page?: PageRequest): Promise<Page<Task>> {
    const limit = pageLimit(page);
    const docs = await this.tasks.find({ ...listTasksFilter(filter), ...idAfter(page?.after, 1) }, { sort: { _id: 1 }, limit: limit + 1 });
    return toPage(docs, limit, toTask);
  }

  async findWaitingTasks(
    wait: { kind: "event"; hookId: string } | { kind: "approval"; approvalId: string } | { kind: "reply"; personId: PersonId },
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
