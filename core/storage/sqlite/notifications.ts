import { asId, newId, type NotificationId, type PersonId } from "../../ids.js";
import type { NotificationRepository } from "../index.js";
import type { NewNotificationRecord, NotificationDecision, NotificationRecord } from "../../notify/records.js";
import { parseStoredDemotion, parseStoredMonitor, parseStoredOrigin, parseStoredUrgency } from "../index.js";
import {
  type Row,
  type SqliteContext,
  inJson,
  jsonText,
  ms,
  msOrNull,
  parseJson,
  toDate,
  toDateOrNull,
} from "./context.js";

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
    origin: parseStoredOrigin(row.origin),
    urgency: parseStoredUrgency(row.urgency),
    needsAction: row.needs_action === 1,
    askedFor: row.asked_for === 1,
    demoted: parseStoredDemotion(row.demoted),
    deadline: toDateOrNull(row.deadline),
    occurrenceKey: typeof row.occurrence_key === "string" ? row.occurrence_key : null,
    monitor: parseStoredMonitor(row.monitor),
    rule: typeof row.rule === "string" ? row.rule : null,
  };
}

/** Sent or held: a decision the person got (or will get) the message for. */
const delivered = "decision IN ('send', 'hold')";

/** Decisions of the notification filter, and the digest queue of held messages. */
export class SqliteNotificationRepository implements NotificationRepository {
  constructor(private readonly ctx: SqliteContext) {}

  recordNotification(input: NewNotificationRecord): Promise<NotificationRecord> {
    return this.ctx.run(
      () =>
        toRecord(
          this.ctx
            .stmt(
              `INSERT INTO notifications (id, person_id, task_id, text, decision, reasons, at, origin, urgency, needs_action, asked_for, demoted, deadline, occurrence_key, monitor_subject, monitor, rule)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(
              newId("notification"),
              input.personId,
              input.taskId,
              input.text,
              input.decision,
              jsonText(input.reasons),
              ms(input.at ?? this.ctx.clock.now()),
              input.origin ?? null,
              input.urgency ?? null,
              input.needsAction ? 1 : 0,
              input.askedFor ? 1 : 0,
              input.demoted ?? null,
              msOrNull(input.deadline),
              input.occurrenceKey ?? null,
              input.monitor?.subject ?? null,
              input.monitor ? jsonText(input.monitor) : null,
              input.rule ?? null,
            ) as Row,
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

  findOccurrence(personId: PersonId, occurrenceKey: string): Promise<NotificationRecord | null> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(`SELECT * FROM notifications WHERE person_id = ? AND occurrence_key = ? AND ${delivered} ORDER BY at DESC, id DESC LIMIT 1`)
        .get(personId, occurrenceKey) as Row | undefined;
      return row ? toRecord(row) : null;
    });
  }

  lastMonitorReport(personId: PersonId, subject: string): Promise<NotificationRecord | null> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(`SELECT * FROM notifications WHERE person_id = ? AND monitor_subject = ? AND ${delivered} ORDER BY at DESC, id DESC LIMIT 1`)
        .get(personId, subject) as Row | undefined;
      return row ? toRecord(row) : null;
    });
  }
}
