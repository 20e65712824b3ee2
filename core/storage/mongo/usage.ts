/**
 * MongoDB implementation of `ModelUsageRepository` (`model_usage`, `_id` = person|day): one
 * document per person and local day, raised with `$inc` in an upsert so concurrent calls add up.
 */
import { asId, type PersonId } from "../../ids.js";
import type { ModelUsageDay, ModelUsageRepository } from "../index.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

/** One person's model use on one local day, as stored. */
export interface ModelUsageDoc {
  /** `${personId}|${day}` */
  _id: string;
  personId: string;
  day: string;
  promptTokens: number;
  completionTokens: number;
  calls: number;
  updatedAt: Date;
}

function toUsage(d: ModelUsageDoc): ModelUsageDay {
  return { personId: asId("person", d.personId), day: d.day, promptTokens: d.promptTokens, completionTokens: d.completionTokens, calls: d.calls, updatedAt: d.updatedAt };
}

/** Model tokens per person and local day on MongoDB. */
export class MongoModelUsageRepository implements ModelUsageRepository {
  private readonly usage;

  constructor(db: DbLike) {
    this.usage = openColl<ModelUsageDoc>(db, "modelUsage", "model usage");
  }

  async addModelUsage(input: { personId: PersonId; day: string; promptTokens: number; completionTokens: number; now: Date }): Promise<ModelUsageDay> {
    const doc = await this.usage.findOneAndUpdate(
      { _id: `${input.personId}|${input.day}` },
      {
        $inc: { promptTokens: input.promptTokens, completionTokens: input.completionTokens, calls: 1 },
        $set: { updatedAt: input.now },
        $setOnInsert: { personId: input.personId, day: input.day },
      },
      { upsert: true },
    );
    if (doc === null) throw new Error(`model usage of ${input.personId} on ${input.day} was not stored`);
    return toUsage(doc);
  }

  async getModelUsage(personId: PersonId, day: string): Promise<ModelUsageDay | null> {
    const doc = await this.usage.findOne({ _id: `${personId}|${day}` });
    return doc === null ? null : toUsage(doc);
  }
}
