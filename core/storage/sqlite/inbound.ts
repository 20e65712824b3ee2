import type { HeldUpdate, InboundRepository } from "../index.js";
import type { ChannelName } from "../../channels/records.js";
import { type SqliteContext, ms, toDate } from "./context.js";

/** Durable dedupe of platform update ids (`inbound_updates`) and the updates held until handled (`inbound_held`). */
export class SqliteInboundRepository implements InboundRepository {
  constructor(private readonly ctx: SqliteContext) {}

  markUpdateProcessed(channel: ChannelName, updateId: string, now: Date): Promise<boolean> {
    return this.ctx.run(
      () =>
        this.ctx
          .stmt("INSERT INTO inbound_updates (channel, update_id, processed_at) VALUES (?, ?, ?) ON CONFLICT (channel, update_id) DO NOTHING")
          .run(channel, updateId, ms(now)).changes === 1,
    );
  }

  pruneProcessedUpdates(before: Date): Promise<number> {
    return this.ctx.atomic(
      () =>
        this.ctx.stmt("DELETE FROM inbound_updates WHERE processed_at < ?").run(ms(before)).changes +
        this.ctx.stmt("DELETE FROM inbound_held WHERE held_at < ?").run(ms(before)).changes,
    );
  }

  holdUpdates(channel: ChannelName, updates: readonly { updateId: string; payload: string }[], now: Date): Promise<void> {
    const at = ms(now);
    return this.ctx.atomic(() => {
      const insert = this.ctx.stmt("INSERT INTO inbound_held (channel, update_id, payload, held_at) VALUES (?, ?, ?, ?) ON CONFLICT (channel, update_id) DO NOTHING");
      for (const update of updates) insert.run(channel, update.updateId, update.payload, at);
    });
  }

  releaseUpdate(channel: ChannelName, updateId: string): Promise<void> {
    return this.ctx.run(() => {
      this.ctx.stmt("DELETE FROM inbound_held WHERE channel = ? AND update_id = ?").run(channel, updateId);
    });
  }

  listHeldUpdates(channel: ChannelName): Promise<HeldUpdate[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT update_id, payload, held_at FROM inbound_held WHERE channel = ? ORDER BY held_at, rowid").all(channel) as { update_id: string; payload: string; held_at: number }[]).map((r) => ({
        updateId: r.update_id,
        payload: r.payload,
        heldAt: toDate(r.held_at),
      })),
    );
  }
}
