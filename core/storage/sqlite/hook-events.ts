import { asId, type HookId } from "../../ids.js";
import type { HookEventRepository, KeptHookEvent } from "../index.js";
import { type Row, type SqliteContext, ms, toDate } from "./context.js";

/** Webhook events kept until their task waits (table `hook_events`, migration 99). */
export class SqliteHookEventRepository implements HookEventRepository {
  constructor(private readonly ctx: SqliteContext) {}

  keepHookEvent(input: { hookId: HookId; body: string; now: Date; maxPerHook: number }): Promise<void> {
    return this.ctx.atomic(
      () => {
        this.ctx.stmt("INSERT INTO hook_events (hook_id, body, received_at) VALUES (?, ?, ?)").run(input.hookId, input.body, ms(input.now));
        this.ctx
          .stmt("DELETE FROM hook_events WHERE hook_id = @hook AND id NOT IN (SELECT id FROM hook_events WHERE hook_id = @hook ORDER BY id DESC LIMIT @max)")
          .run({ hook: input.hookId, max: Math.max(1, input.maxPerHook) });
      },
      { references: { entity: "hook", id: input.hookId } },
    );
  }

  takeHookEvent(input: { hookId: HookId; notBefore: Date }): Promise<KeptHookEvent | null> {
    return this.ctx.atomic(() => {
      this.ctx.stmt("DELETE FROM hook_events WHERE hook_id = ? AND received_at < ?").run(input.hookId, ms(input.notBefore));
      const row = this.ctx
        .stmt("DELETE FROM hook_events WHERE id = (SELECT id FROM hook_events WHERE hook_id = ? ORDER BY id LIMIT 1) RETURNING *")
        .get(input.hookId) as Row | undefined;
      return row ? { hookId: asId("hook", row.hook_id as string), body: row.body as string, receivedAt: toDate(row.received_at) } : null;
    });
  }
}
