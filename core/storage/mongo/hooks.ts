/** MongoDB implementation of `HookRepository` (`hooks`): inbound webhooks that resume waiting tasks. */
import type { Clock } from "../../clock.js";
import { asId, newId, type HookId, type PersonId } from "../../ids.js";
import type { HookRepository } from "../index.js";
import type { Hook, NewHook } from "../../runtime/records.js";
import type { HookDoc } from "./documents.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

function toHook(d: HookDoc): Hook {
  return {
    id: asId("hook", d._id),
    personId: asId("person", d.personId),
    description: d.description,
    secretHash: d.secretHash,
    createdAt: d.createdAt,
    lastEventAt: d.lastEventAt,
  };
}

/** Webhooks of a person, oldest first; the secret is only ever stored as its hash. */
export class MongoHookRepository implements HookRepository {
  private readonly hooks;

  constructor(
    private readonly db: DbLike,
    private readonly clock: Clock,
  ) {
    this.hooks = openColl<HookDoc>(db, "hooks", "hook");
  }

  async createHook(input: NewHook): Promise<Hook> {
    const doc: HookDoc = {
      _id: newId("hook"),
      personId: input.personId,
      description: input.description,
      secretHash: input.secretHash,
      createdAt: this.clock.now(),
      lastEventAt: null,
    };
    await this.hooks.insertOne(doc);
    return toHook(doc);
  }

  async getHook(id: HookId): Promise<Hook | null> {
    const doc = await this.hooks.findOne({ _id: id });
    return doc === null ? null : toHook(doc);
  }

  async listHooks(personId: PersonId): Promise<Hook[]> {
    return (await this.hooks.find({ personId }, { sort: { _id: 1 } })).map(toHook);
  }

  /** Does nothing when the hook does not exist. */
  async touchHook(id: HookId, now: Date): Promise<void> {
    await this.hooks.updateOne({ _id: id }, { $set: { lastEventAt: now } });
  }

  async deleteHook(personId: PersonId, id: HookId): Promise<boolean> {
    if ((await this.hooks.deleteOne({ _id: id, personId })) !== 1) return false;
    // Events kept for the hook's task go with it (SQLite: ON DELETE CASCADE).
    await openColl(this.db, "hookEvents", "webhook event").deleteMany({ hookId: id });
    return true;
  }
}
