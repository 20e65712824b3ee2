import { asId, newId, type GrantId, type PersonId } from "../../ids.js";
import type { GrantRepository } from "../index.js";
import type { ChannelName } from "../../channels/records.js";
import type { Grant, GrantConstraints, GrantScope, NewGrant } from "../../policy/records.js";
import type { Json } from "../../json.js";
import { type Row, type SqliteContext, jsonText, ms, parseJson, toDate, toDateOrNull } from "./context.js";

function toScope(row: Row): GrantScope {
  switch (row.scope_kind) {
    case "task":
      return { kind: "task", taskId: asId("task", row.scope_ref as string) };
    case "session":
      return { kind: "session", sessionId: row.scope_ref as string };
    case "until":
      return { kind: "until", until: toDate(row.scope_until) };
    case "once":
      return { kind: "once" };
    default:
      return { kind: "always" };
  }
}

function toGrant(row: Row): Grant {
  return {
    id: asId("grant", row.id as string),
    personId: asId("person", row.person_id as string),
    capability: row.capability as string,
    constraints: parseJson<GrantConstraints>(row.constraints),
    pattern: row.pattern === null || row.pattern === undefined ? null : parseJson<Json>(row.pattern),
    scope: toScope(row),
    grantedBy: { channel: row.granted_channel as ChannelName, accountId: row.granted_account as string },
    grantedAt: toDate(row.granted_at),
    consumedAt: toDateOrNull(row.consumed_at),
    revokedAt: toDateOrNull(row.revoked_at),
  };
}

/** Grants recorded by Sentinel after an approval. */
export class SqliteGrantRepository implements GrantRepository {
  constructor(private readonly ctx: SqliteContext) {}

  recordGrant(input: NewGrant): Promise<Grant> {
    const scope = input.scope;
    const ref = scope.kind === "task" ? scope.taskId : scope.kind === "session" ? scope.sessionId : null;
    return this.ctx.run(
      () =>
        toGrant(
          this.ctx
            .stmt(
              `INSERT INTO grants (id, person_id, capability, constraints, pattern, scope_kind, scope_ref, scope_until, granted_channel, granted_account, granted_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(
              newId("grant"),
              input.personId,
              input.capability,
              jsonText(input.constraints),
              input.pattern === undefined || input.pattern === null ? null : jsonText(input.pattern),
              scope.kind,
              ref,
              scope.kind === "until" ? ms(scope.until) : null,
              input.grantedBy.channel,
              input.grantedBy.accountId,
              ms(input.grantedAt ?? this.ctx.clock.now()),
            ) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  getGrant(id: GrantId): Promise<Grant | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM grants WHERE id = ?").get(id) as Row | undefined;
      return row ? toGrant(row) : null;
    });
  }

  listActiveGrants(personId: PersonId, now: Date): Promise<Grant[]> {
    return this.ctx.run(() =>
      (this.ctx
        .stmt(
          `SELECT * FROM grants
           WHERE person_id = ? AND revoked_at IS NULL AND consumed_at IS NULL AND NOT (scope_kind = 'until' AND scope_until <= ?)
           ORDER BY granted_at, id`,
        )
        .all(personId, ms(now)) as Row[]).map(toGrant),
    );
  }

  /** Only `once` grants are consumed; for any other scope this returns false and changes nothing. */
  consumeGrant(id: GrantId, now: Date): Promise<boolean> {
    return this.ctx.run(
      () =>
        this.ctx
          .stmt("UPDATE grants SET consumed_at = ? WHERE id = ? AND scope_kind = 'once' AND consumed_at IS NULL AND revoked_at IS NULL")
          .run(ms(now), id).changes === 1,
    );
  }

  revokeGrant(personId: PersonId, id: GrantId, now: Date): Promise<boolean> {
    return this.ctx.run(
      () => this.ctx.stmt("UPDATE grants SET revoked_at = ? WHERE id = ? AND person_id = ? AND revoked_at IS NULL").run(ms(now), id, personId).changes === 1,
    );
  }
}
