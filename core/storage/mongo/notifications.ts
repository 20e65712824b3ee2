/** MongoDB implementation of `NotificationRepository` (`notifications`). */
import type { Clock } from "../../clock.js";
import { newId, type NotificationId, type PersonId } from "../../ids.js";
import type { NotificationRepository } from "../index.js";
import type { NewNotificationRecord, NotificationRecord } from "../../notify/records.js";
import type { NotificationDoc } from "./documents.js";
import { toNotification } from "./codec.js";
import type { DbLike } from "./driver.js";
import { heldNotificationsFilter, markDigested, monitorReportFilter, occurrenceFilter } from "./filters.js";
import { openColl } from "./session.js";

/** Notification filter decisions and the digest queue (`notifications`). */
export class MongoNotificationRepository implements NotificationRepository {
  private readonly records;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.records = openColl<NotificationDoc>(db, "notifications", "notification");
  }

  async recordNotification(input: NewNotificationRecord): Promise<NotificationRecord> {
    const doc: NotificationDoc = {
      _id: newId("notification"),
      personId: input.personId,
      taskId: input.taskId,
      text: input.text,
      decision: input.decision,
      reasons: [...input.reasons],
      digestedAt: null,
      at: input.at ?? this.clock.now(),
      origin: input.origin ?? null,
      urgency: input.urgency ?? null,
      needsAction: input.needsAction ?? false,
      askedFor: input.askedFor ?? false,
      demoted: input.demoted ?? null,
      deadline: input.deadline ?? null,
      occurrenceKey: input.occurrenceKey ?? null,
      monitor: input.monitor ?? null,
      rule: input.rule ?? null,
    };
    await this.records.insertOne(doc);
    return toNotification(doc);
  }

  async listNotificationsSince(personId: PersonId, since: Date): Promise<NotificationRecord[]> {
    const docs = await this.records.find({ personId, at: { $gte: since } }, { sort: { at: -1, _id: -1 } });
    return docs.map(toNotification);
  }

  async listHeldNotifications(personId: PersonId): Promise<NotificationRecord[]> {
    const docs = await this.records.find(heldNotificationsFilter(personId), { sort: { at: 1, _id: 1 } });
    return docs.map(toNotification);
  }

  async markDigested(ids: NotificationId[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    const { filter, update } = markDigested(ids, now);
    await this.records.updateMany(filter, update);
  }

  async findOccurrence(personId: PersonId, occurrenceKey: string): Promise<NotificationRecord | null> {
    const [doc] = await this.records.find(occurrenceFilter(personId, occurrenceKey), { sort: { at: -1, _id: -1 }, limit: 1 });
    return doc ? toNotification(doc) : null;
  }

  async lastMonitorReport(personId: PersonId, subject: string): Promise<NotificationRecord | null> {
    const [doc] = await this.records.find(monitorReportFilter(personId, subject), { sort: { at: -1, _id: -1 }, limit: 1 });
    return doc ? toNotification(doc) : null;
  }
}
