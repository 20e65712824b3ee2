import type { InboundRepository, ChannelName } from "../index.js";
import { type SqliteContext, ms } from "./context.js";

/** Durable dedupe of platform update ids. */
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
    return this.ctx.run(() => this.ctx.stmt("DELETE FROM inbound_updates WHERE processed_at < ?").run(ms(before)).changes);
  }
}
