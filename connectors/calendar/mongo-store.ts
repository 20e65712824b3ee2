/**
 * The calendar store on MongoDB (production), through the same `DbLike` subset of the driver the
 * core adapter uses (so its shapes are checked offline with mingo).
 *
 * Collections: `calendar_calendars`, `calendar_items` (series kept as a JSON string: TZIDs and
 * other keys inside may hold `.` or `$`), `calendar_conflicts`. There are no multi-document
 * transactions here: `applySync` writes items first and the sync state last, so an interrupted sync
 * is repeated — idempotently — from the old state (see `store.ts`). A conflict key is recorded by an
 * upsert, which only one writer can insert. A sync lease (`calendar_sync_leases`, `_id` the source)
 * is taken by one conditional upsert: while another holder's lease runs the upsert collides on
 * `_id` (E11000), and the request is marked on that lease instead.
 */
import type { Document } from "mongodb";
import type { PersonId } from "../../core/ids.js";
import type { DbLike } from "../../core/storage/mongo/index.js";
import { seriesSchema } from "./model.js";
import { eventIdOf, type CalendarStore, type CalendarSyncBatch, type StoredCalendar, type StoredItem } from "./store.js";

/** Collection names of the calendar store. */
export const calendarCollections = { calendars: "calendar_calendars", items: "calendar_items", conflicts: "calendar_conflicts", leases: "calendar_sync_leases" } as const;

/** {@link CalendarStore} on MongoDB. Call {@link MongoCalendarStore.ensureIndexes} once at start. */
export class MongoCalendarStore implements CalendarStore {
  constructor(private readonly db: DbLike) {}

  /** Creates the indexes the queries use (idempotent). */
  async ensureIndexes(): Promise<void> {
    await this.db.collection(calendarCollections.calendars).createIndexes([
      { key: { personId: 1, name: 1 }, name: "person_name" },
      { key: { sourceId: 1 }, name: "source" },
    ]);
    await this.db.collection(calendarCollections.items).createIndexes([
      { key: { personId: 1, startMs: 1 }, name: "person_window" },
      { key: { personId: 1, calendarId: 1 }, name: "person_calendar" },
      { key: { personId: 1, eventIds: 1 }, name: "person_event" },
    ]);
  }

  async listCalendars(personId: PersonId): Promise<StoredCalendar[]> {
    const docs = await this.db.collection(calendarCollections.calendars).find({ personId }, { sort: { name: 1, calendarId: 1 } }).toArray();
    return docs.map(toCalendar);
  }

  async saveCalendar(calendar: Parameters<CalendarStore["saveCalendar"]>[0]): Promise<void> {
    const set: Document = {
      personId: calendar.personId,
      calendarId: calendar.calendarId,
      sourceId: calendar.sourceId,
      kind: calendar.kind,
      url: calendar.url,
      name: calendar.name,
      color: calendar.color,
      writable: calendar.writable,
    };
    const onInsert: Document = {};
    const empty = { syncToken: null, ctag: null, etag: null, lastModified: null };
    if (calendar.sync !== undefined) set.sync = calendar.sync;
    else onInsert.sync = empty;
    if (calendar.syncedAt !== undefined) set.syncedAt = calendar.syncedAt;
    else onInsert.syncedAt = null;
    if (calendar.error !== undefined) set.error = calendar.error;
    else onInsert.error = null;
    await this.db.collection(calendarCollections.calendars).updateOne({ _id: key(calendar.personId, calendar.calendarId) }, { $set: set, $setOnInsert: onInsert }, { upsert: true });
  }

  async setCalendarError(personId: PersonId, calendarId: string, error: string | null): Promise<void> {
    await this.db.collection(calendarCollections.calendars).updateOne({ _id: key(personId, calendarId) }, { $set: { error } });
  }

  async removeCalendar(personId: PersonId, calendarId: string): Promise<void> {
    await this.db.collection(calendarCollections.items).deleteMany({ personId, calendarId });
    await this.db.collection(calendarCollections.calendars).deleteOne({ _id: key(personId, calendarId) });
  }

  async removeSource(sourceId: string): Promise<void> {
    const calendars = await this.db.collection(calendarCollections.calendars).find({ sourceId }, { projection: { personId: 1, calendarId: 1 } }).toArray();
    for (const c of calendars) await this.removeCalendar(c.personId as PersonId, String(c.calendarId));
    await this.db.collection(calendarCollections.leases).deleteOne({ _id: sourceId });
  }

  async itemTags(personId: PersonId, calendarId: string): Promise<Map<string, { etag: string | null; hash: string }>> {
    const docs = await this.db.collection(calendarCollections.items).find({ personId, calendarId }, { projection: { href: 1, etag: 1, hash: 1 } }).toArray();
    return new Map(docs.map((d) => [String(d.href), { etag: (d.etag as string | null) ?? null, hash: String(d.hash) }]));
  }

  async getItems(personId: PersonId, calendarId: string, hrefs: readonly string[]): Promise<StoredItem[]> {
    if (hrefs.length === 0) return [];
    const docs = await this.db.collection(calendarCollections.items).find({ personId, calendarId, href: { $in: [...hrefs] } }).toArray();
    return docs.map(toItem);
  }

  async applySync(personId: PersonId, calendarId: string, batch: CalendarSyncBatch): Promise<void> {
    const items = this.db.collection(calendarCollections.items);
    for (const item of batch.upserts) {
      await items.updateOne(
        { _id: key(personId, calendarId, item.href) },
        {
          $set: {
            personId,
            calendarId,
            href: item.href,
            etag: item.etag,
            hash: item.hash,
            ics: item.ics,
            series: JSON.stringify(item.series),
            eventIds: [...new Set(item.series.map((s) => eventIdOf(calendarId, s.uid)))],
            startMs: item.startMs,
            endMs: item.endMs,
          },
        },
        { upsert: true },
      );
    }
    if (batch.deletes.length > 0) await items.deleteMany({ personId, calendarId, href: { $in: batch.deletes } });
    if (batch.replaceAll) await items.deleteMany({ personId, calendarId, href: { $nin: batch.upserts.map((u) => u.href) } });
    if (batch.sync === undefined) return;
    await this.db.collection(calendarCollections.calendars).updateOne({ _id: key(personId, calendarId) }, { $set: { sync: batch.sync, syncedAt: batch.syncedAt ?? null, error: null } });
  }

  async itemsInWindow(personId: PersonId, fromMs: number, toMs: number, calendarIds?: readonly string[]): Promise<(StoredItem & { calendarId: string })[]> {
    if (calendarIds !== undefined && calendarIds.length === 0) return [];
    const filter: Document = { personId, startMs: { $lt: toMs }, $or: [{ endMs: null }, { endMs: { $gt: fromMs } }] };
    if (calendarIds !== undefined) filter.calendarId = { $in: [...calendarIds] };
    const docs = await this.db.collection(calendarCollections.items).find(filter).toArray();
    return docs.map(toItem);
  }

  async itemsByEvent(personId: PersonId, eventId: string): Promise<(StoredItem & { calendarId: string })[]> {
    const docs = await this.db.collection(calendarCollections.items).find({ personId, eventIds: eventId }).toArray();
    return docs.map(toItem);
  }

  async recordConflicts(personId: PersonId, keys: readonly string[], now: Date): Promise<string[]> {
    const fresh: string[] = [];
    for (const conflictKey of keys) {
      const result = await this.db
        .collection(calendarCollections.conflicts)
        .updateOne({ _id: key(personId, conflictKey) }, { $setOnInsert: { personId, key: conflictKey, firstSeen: now.toISOString() } }, { upsert: true });
      if (result.upsertedCount === 1) fresh.push(conflictKey);
    }
    return fresh;
  }

  async claimSync(sourceId: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    const leases = this.db.collection(calendarCollections.leases);
    const nowMs = now.getTime();
    // A lease released or expired between the collision and the mark is claimed on the next round.
    for (let round = 0; round < 5; round++) {
      try {
        await leases.findOneAndUpdate(
          { _id: sourceId, $or: [{ holder }, { untilMs: { $lte: nowMs } }] },
          { $set: { holder, untilMs: nowMs + leaseMs, again: false } },
          { upsert: true, returnDocument: "after", includeResultMetadata: false },
        );
        return true;
      } catch (error) {
        if ((error as { code?: unknown } | null)?.code !== 11000) throw error;
      }
      const marked = await leases.updateOne({ _id: sourceId, holder: { $ne: holder }, untilMs: { $gt: nowMs } }, { $set: { again: true } });
      if (marked.matchedCount === 1) return false;
    }
    return false;
  }

  async renewSync(sourceId: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    const renewed = await this.db.collection(calendarCollections.leases).updateOne({ _id: sourceId, holder }, { $set: { untilMs: now.getTime() + leaseMs } });
    return renewed.matchedCount === 1;
  }

  async releaseSync(sourceId: string, holder: string): Promise<boolean> {
    // Released by expiring it (one atomic step that also returns whether a sync was asked for).
    const before = await this.db
      .collection(calendarCollections.leases)
      .findOneAndUpdate({ _id: sourceId, holder }, { $set: { holder: "", untilMs: 0, again: false } }, { returnDocument: "before", includeResultMetadata: false });
    return before?.again === true;
  }
}

function key(...parts: string[]): string {
  return parts.join("\u0000");
}

function toCalendar(doc: Document): StoredCalendar {
  const sync = (doc.sync ?? {}) as Partial<StoredCalendar["sync"]>;
  return {
    personId: doc.personId as PersonId,
    calendarId: String(doc.calendarId),
    sourceId: String(doc.sourceId),
    kind: doc.kind === "ics" ? "ics" : "caldav",
    url: String(doc.url),
    name: String(doc.name),
    color: (doc.color as string | null) ?? null,
    writable: doc.writable === true,
    sync: { syncToken: sync.syncToken ?? null, ctag: sync.ctag ?? null, etag: sync.etag ?? null, lastModified: sync.lastModified ?? null },
    syncedAt: (doc.syncedAt as string | null) ?? null,
    error: (doc.error as string | null) ?? null,
  };
}

function toItem(doc: Document): StoredItem & { calendarId: string } {
  return {
    calendarId: String(doc.calendarId),
    href: String(doc.href),
    etag: (doc.etag as string | null) ?? null,
    hash: String(doc.hash),
    ics: (doc.ics as string | null) ?? null,
    series: seriesSchema.array().parse(JSON.parse(String(doc.series))),
    startMs: Number(doc.startMs),
    endMs: doc.endMs === null || doc.endMs === undefined ? null : Number(doc.endMs),
  };
}
