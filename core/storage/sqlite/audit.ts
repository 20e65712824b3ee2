import { asId, newId, type PersonId } from "../../ids.js";
import type { AuditRepository } from "../index.js";
import type { AuditEvent, NewAuditEvent } from "../../audit/records.js";
import type { Json } from "../../json.js";
import type { Page, PageRequest } from "../index.js";
import { type Row, type SqliteContext, inJson, jsonText, ms, parseJson, toDate } from "./context.js";
import { keyset, toPage } from "./pagination.js";

function toEvent(row: Row): AuditEvent {
  return {
    id: asId("audit", row.id as string),
    personId: row.person_id === null ? null : asId("person", row.person_id as string),
    kind: row.kind as string,
    summary: row.summary as string,
    data: parseJson<Json>(row.data),
    at: toDate(row.at),
  };
}

/** The audit log a person can read. Append-only. */
export class SqliteAuditRepository implements AuditRepository {
  constructor(private readonly ctx: SqliteContext) {}

  appendAudit(input: NewAuditEvent): Promise<AuditEvent> {
    return this.ctx.run(
      () =>
        toEvent(
          this.ctx
            .stmt("INSERT INTO audit (id, person_id, kind, summary, data, at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *")
            .get(newId("audit"), input.personId, input.kind, input.summary, jsonText(input.data), ms(input.at ?? this.ctx.clock.now())) as Row,
        ),
      { references: { entity: "person", id: String(input.personId) } },
    );
  }

  listAudit(personId: PersonId, page?: PageRequest & { kinds?: string[] }): Promise<Page<AuditEvent>> {
    return this.ctx.run(() => {
      const k = keyset(page, "at", "desc");
      const where = ["person_id = ?"];
      const params: unknown[] = [personId];
      if (page?.kinds) {
        where.push(`kind IN ${inJson}`);
        params.push(JSON.stringify(page.kinds));
      }
      if (k.where) where.push(k.where);
      const rows = this.ctx.stmt(`SELECT * FROM audit WHERE ${where.join(" AND ")} ${k.orderBy} LIMIT ?`).all(...params, ...k.params, k.fetch) as Row[];
      return toPage(rows, k.limit, "at", toEvent);
    });
  }
}
