/** MongoDB implementation of `AuditRepository` (`audit_events`), newest first by (at, id). */
import type { Clock } from "../../clock.js";
import { newId, type PersonId } from "../../ids.js";
import type { AuditRepository } from "../index.js";
import type { AuditEvent, NewAuditEvent } from "../../audit/records.js";
import type { Page, PageRequest } from "../index.js";
import type { AuditDoc } from "./documents.js";
import { encodeJson, toAudit } from "./codec.js";
import type { DbLike } from "./driver.js";
import { auditFilter } from "./filters.js";
import { pageLimit, timeAfter, toPage } from "./paging.js";
import { openColl } from "./session.js";

/** The audit log, newest first (`audit_events`). */
export class MongoAuditRepository implements AuditRepository {
  private readonly events;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.events = openColl<AuditDoc>(db, "audit", "audit event");
  }

  async appendAudit(input: NewAuditEvent): Promise<AuditEvent> {
    const doc: AuditDoc = {
      _id: newId("audit"),
      personId: input.personId,
      kind: input.kind,
      summary: input.summary,
      data: encodeJson(input.data),
      at: input.at ?? this.clock.now(),
    };
    await this.events.insertOne(doc);
    return toAudit(doc);
  }

  async listAudit(personId: PersonId, page?: PageRequest & { kinds?: string[] }): Promise<Page<AuditEvent>> {
    const limit = pageLimit(page);
    const filter = { ...auditFilter(personId, page?.kinds), ...timeAfter("at", page?.after, -1) };
    const docs = await this.events.find(filter, { sort: { at: -1, _id: -1 }, limit: limit + 1 });
    return toPage(docs, limit, toAudit, (d) => d.at);
  }
}
