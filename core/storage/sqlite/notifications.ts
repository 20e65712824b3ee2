import { asId, newId, type NotificationId, type PersonId } from "../../ids.js";
import type { NotificationRepository } from "../ports.js";
import type { NewNotificationRecord, NotificationDecision, NotificationRecord } from "../types.js";
import { type Row, type SqliteContext, inJson, jsonText, ms, parseJson, toDate, toDateOrNull } from "./context.js";

function toRecord(row: Row): NotificationRecord {
  return {
    id: asId("notification", row.id as string),
    personId: asId("person", row.person_id as string),
    taskId: row.task_id === null ? null : asId("task", row.task_id as string),
    text: row.text as string,
    decision: row.decision as NotificationDecision,
    reasons: parseJson<string[]>(row.reasons),
    digestedAt: toDateOrNull(row.digested_at),
    at: toDate(row.at),
  };
}

/** Decisions of the notification filter, and the digest queue of held messages. */
export class SqliteNotificationRepository implements NotificationRepository {
  constructor(private readonly ctx: SqliteContext) {}

  recordNotification(input: NewNotificationRecord): Promise<NotificationRecord> {
    return this.ctx.run(
      () =>
        toRecord(
          this.ctx
            .stmt("INSERT INTO notifications (id, person_id, task_id, text, decision, reasons, at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *")
            .get(newId("notification"), input.personId, input.taskId, input.text, input.decision, jsonText(input.reasons), ms(input.at ?? this.ctx.clock.now())) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  /** Includes decisions made exactly at `since`. */
  listNotificationsSince(personId: PersonId, since: Date): Promise<NotificationRecord[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM notifications WHERE person_id = ? AND at >= ? ORDER BY at DESC, id DESC").all(personId, ms(since)) as Row[]).map(toRecord),
    );
  }

  listHeldNotifications(personId: PersonId): Promise<NotificationRecord[]> {
    return this.ctx.run(() =>
      (this.ctx
        .stmt("SELECT * FROM notifications WHERE person_id = ? AND decision = 'hold' AND digested_at IS NULL ORDER BY at, id")
        .all(personId) as Row[]).map(toRecord),
    );
  }

  /** Already digested records keep their first `digestedAt`. */
  markDigested(ids: NotificationId[], now: Date): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    return this.ctx.run(() => {
      this.ctx.stmt(`UPDATE notifications SET digested_at = ? WHERE id IN ${inJson} AND digested_at IS NULL`).run(ms(now), JSON.stringify(ids));
    });
  }
}
