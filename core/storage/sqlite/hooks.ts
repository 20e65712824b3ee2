import { asId, newId, type HookId, type PersonId } from "../../ids.js";
import type { HookRepository } from "../index.js";
import type { Hook, NewHook } from "../../runtime/records.js";
import { type Row, type SqliteContext, ms, toDate, toDateOrNull } from "./context.js";

function toHook(row: Row): Hook {
  return {
    id: asId("hook", row.id as string),
    personId: asId("person", row.person_id as string),
    description: row.description as string,
    secretHash: row.secret_hash as string,
    createdAt: toDate(row.created_at),
    lastEventAt: toDateOrNull(row.last_event_at),
  };
}

/** Inbound webhooks that resume tasks waiting for an event (table added by migration 2). */
export class SqliteHookRepository implements HookRepository {
  constructor(private readonly ctx: SqliteContext) {}

  createHook(input: NewHook): Promise<Hook> {
    return this.ctx.run(
      () =>
        toHook(
          this.ctx
            .stmt("INSERT INTO hooks (id, person_id, description, secret_hash, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *")
            .get(newId("hook"), input.personId, input.description, input.secretHash, this.ctx.nowMs()) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  getHook(id: HookId): Promise<Hook | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM hooks WHERE id = ?").get(id) as Row | undefined;
      return row ? toHook(row) : null;
    });
  }

  listHooks(personId: PersonId): Promise<Hook[]> {
    return this.ctx.run(() => (this.ctx.stmt("SELECT * FROM hooks WHERE person_id = ? ORDER BY created_at, id").all(personId) as Row[]).map(toHook));
  }

  /** Does nothing when the hook does not exist. */
  touchHook(id: HookId, now: Date): Promise<void> {
    return this.ctx.run(() => {
      this.ctx.stmt("UPDATE hooks SET last_event_at = ? WHERE id = ?").run(ms(now), id);
    });
  }

  deleteHook(personId: PersonId, id: HookId): Promise<boolean> {
    return this.ctx.run(() => this.ctx.stmt("DELETE FROM hooks WHERE id = ? AND person_id = ?").run(id, personId).changes === 1);
  }
}
