/** MongoDB implementation of `GoalRepository` (`goals`). */
import type { Clock } from "../../clock.js";
import { NotFoundError } from "../../errors.js";
import { newId, type GoalId, type PersonId } from "../../ids.js";
import type { GoalRepository } from "../index.js";
import type { Goal, GoalPatch, GoalStatus, NewGoal } from "../../goals/records.js";
import type { Page, PageRequest } from "../index.js";
import type { GoalDoc } from "./documents.js";
import { toGoal } from "./codec.js";
import type { DbLike } from "./driver.js";
import { setPatch } from "./filters.js";
import { idAfter, pageLimit, toPage } from "./paging.js";
import { openColl } from "./session.js";

/** Goals of a person, in creation order (`goals`). */
export class MongoGoalRepository implements GoalRepository {
  private readonly goals;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.goals = openColl<GoalDoc>(db, "goals", "goal");
  }

  async createGoal(input: NewGoal): Promise<Goal> {
    const now = this.clock.now();
    const doc: GoalDoc = {
      _id: newId("goal"),
      personId: input.personId,
      title: input.title,
      description: input.description ?? "",
      status: "active",
      originMessageId: input.originMessageId ?? null,
      checkIn: input.checkIn ?? null,
      notes: input.notes ?? "",
      taintSource: input.taint?.source ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.goals.insertOne(doc);
    return toGoal(doc);
  }

  async getGoal(id: GoalId): Promise<Goal | null> {
    const doc = await this.goals.findOne({ _id: id });
    return doc === null ? null : toGoal(doc);
  }

  async updateGoal(id: GoalId, patch: GoalPatch): Promise<Goal> {
    const { taint, ...rest } = patch;
    const doc = await this.goals.findOneAndUpdate({ _id: id }, setPatch({ ...rest, ...(taint ? { taintSource: taint.source } : {}) }, this.clock.now()));
    if (doc === null) throw new NotFoundError("goal", id);
    return toGoal(doc);
  }

  async listGoals(personId: PersonId, filter?: { status?: GoalStatus[] }, page?: PageRequest): Promise<Page<Goal>> {
    const limit = pageLimit(page);
    const query = {
      personId,
      ...(filter?.status === undefined ? {} : { status: { $in: filter.status } }),
      ...idAfter(page?.after, 1),
    };
    const docs = await this.goals.find(query, { sort: { _id: 1 }, limit: limit + 1 });
    return toPage(docs, limit, toGoal);
  }
}
