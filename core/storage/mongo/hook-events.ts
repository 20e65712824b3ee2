/**
 * MongoDB implementation of `HookEventRepository` (`hook_events`): one document per kept event, its
 * `_id` a creation-ordered key; taking one is a delete of the oldest that only one caller wins.
 */
import { asId, type HookId } from "../../ids.js";
import type { HookEventRepository, KeptHookEvent } from "../index.js";
import { creationKey } from "./collections.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

/** A webhook event kept until its task waits, as stored. */
export interface HookEventDoc {
  _id: string;
  hookId: string;
  body: string;
  receivedAt: Date;
}

/** Webhook events kept until their task waits, on MongoDB. */
export class MongoHookEventRepository implements HookEventRepository {
  private readonly events;

  constructor(db: DbLike) {
    this.events = openColl<HookEventDoc>(db, "hookEvents", "webhook event");
  }

  async keepHookEvent(input: { hookId: HookId; body: string; now: Date; maxPerHook: number }): Promise<void> {
    await this.events.insertOne({ _id: creationKey("hev"), hookId: input.hookId, body: input.body, receivedAt: input.now });
    const kept = await this.events.find({ hookId: input.hookId }, { sort: { _id: -1 }, projection: { _id: 1 } });
    const dropped = kept.slice(Math.max(1, input.maxPerHook)).map((d) => d._id);
    if (dropped.length > 0) await this.events.deleteMany({ _id: { $in: dropped } });
  }

  async takeHookEvent(input: { hookId: HookId; notBefore: Date }): Promise<KeptHookEvent | null> {
    await this.events.deleteMany({ hookId: input.hookId, receivedAt: { $lt: input.notBefore } });
    for (;;) {
      const [oldest] = await this.events.find({ hookId: input.hookId }, { sort: { _id: 1 }, limit: 1 });
      if (!oldest) return null;
      // Another process may take it first: only the delete that removed it wins.
      if ((await this.events.deleteOne({ _id: oldest._id })) === 1) return { hookId: asId("hook", oldest.hookId), body: oldest.body, receivedAt: oldest.receivedAt };
    }
  }
}
