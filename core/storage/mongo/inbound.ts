/**
 * MongoDB implementation of `InboundRepository` (`inbound_updates`, unique on (channel, updateId)).
 * Old records are removed by `pruneProcessedUpdates` (the caller picks the window), not by a TTL
 * index, so the retention rule is the same as SQLite's.
 */
import type { InboundRepository, ChannelName } from "../index.js";
import { DuplicateKeyError } from "../../errors.js";
import { creationKey, type InboundDoc } from "./collections.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

/** Durable dedupe of platform update ids (`inbound_updates`). */
export class MongoInboundRepository implements InboundRepository {
  private readonly updates;

  constructor(db: DbLike) {
    this.updates = openColl<InboundDoc>(db, "inbound", "inbound update");
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

  pruneProcessedUpdates(before: Date): Promise<number> {
    return this.updates.deleteMany({ at: { $lt: before } });
  }
}
