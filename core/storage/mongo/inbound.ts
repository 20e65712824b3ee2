/**
 * MongoDB implementation of `InboundRepository` (`inbound_updates`, unique on (channel, updateId);
 * `inbound_held`, one document per held update). Old records are removed by `pruneProcessedUpdates`
 * (the caller picks the window), not by a TTL index, so the retention rule is the same as SQLite's.
 */
import type { HeldUpdate, InboundRepository } from "../index.js";
import type { ChannelName } from "../../channels/records.js";
import { DuplicateKeyError } from "../../errors.js";
import { creationKey } from "./collections.js";
import type { InboundDoc, InboundHeldDoc } from "./documents.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

/** Durable dedupe of platform update ids (`inbound_updates`) and the updates held until handled (`inbound_held`). */
export class MongoInboundRepository implements InboundRepository {
  private readonly updates;
  private readonly held;

  constructor(db: DbLike) {
    this.updates = openColl<InboundDoc>(db, "inbound", "inbound update");
    this.held = openColl<InboundHeldDoc>(db, "inboundHeld", "held inbound update");
  }

  async markUpdateProcessed(channel: ChannelName, updateId: string, now: Date): Promise<boolean> {
    try {
      await this.updates.insertOne({ _id: creationKey("inb"), channel, updateId, at: now });
      return true;
    } catch (err) {
      if (err instanceof DuplicateKeyError) return false;
      throw err;
    }
  }

  async pruneProcessedUpdates(before: Date): Promise<number> {
    return (await this.updates.deleteMany({ at: { $lt: before } })) + (await this.held.deleteMany({ heldAt: { $lt: before } }));
  }

  async holdUpdates(channel: ChannelName, updates: readonly { updateId: string; payload: string }[], now: Date): Promise<void> {
    for (const update of updates) {
      await this.held.updateOne({ _id: heldId(channel, update.updateId) }, { $setOnInsert: { channel, updateId: update.updateId, payload: update.payload, heldAt: now } }, { upsert: true });
    }
  }

  async releaseUpdate(channel: ChannelName, updateId: string): Promise<void> {
    await this.held.deleteOne({ _id: heldId(channel, updateId) });
  }

  async listHeldUpdates(channel: ChannelName): Promise<HeldUpdate[]> {
    const docs = await this.held.find({ channel }, { sort: { heldAt: 1, _id: 1 } });
    return docs.map((d) => ({ updateId: d.updateId, payload: d.payload, heldAt: d.heldAt }));
  }
}

function heldId(channel: ChannelName, updateId: string): string {
  return `${channel}:${updateId}`;
}
