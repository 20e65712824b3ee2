/**
 * The calendar store on SQLite (better-sqlite3), Familiar's embedded default.
 *
 * It runs on a connection of its own (to the same `DATA_DIR` database file, or any file), never on
 * the core store's connection: that one holds async transactions open across awaits, and a
 * statement run on it meanwhile would join (and roll back with) a transaction not its own. With WAL
 * journaling the two connections read concurrently and take turns writing (`busy_timeout`).
 *
 * Tables (created if missing): `calendar_calendars`, `calendar_items` (window index on
 * `(person_id, start_ms)`), `calendar_item_events` (event id → item), `calendar_conflicts`, `calendar_sync_leases`. Every method is one synchronous statement or one
 * transaction, so it is atomic.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { PersonId } from "../../core/ids.js";
import { seriesSchema } from "./model.js";
import { eventIdOf, type CalendarStore, type CalendarSyncBatch, type StoredCalendar, type StoredItem } from "./store.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS calendar_calendars (
  person_id TEXT NOT NULL, calendar_id TEXT NOT NULL, source_id TEXT NOT NULL, kind TEXT NOT NULL,
  url TEXT NOT NULL, name TEXT NOT NULL, color TEXT, writable INTEGER NOT NULL,
  sync_token TEXT, ctag TEXT, etag TEXT, last_modified TEXT, synced_at TEXT, error TEXT,
  PRIMARY KEY (person_id, calendar_id)
);
CREATE TABLE IF NOT EXISTS calendar_items (
  person_id TEXT NOT NULL, calendar_id TEXT NOT NULL, href TEXT NOT NULL, etag TEXT, hash TEXT NOT NULL,
  ics TEXT, series TEXT NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER,
  PRIMARY KEY (person_id, calendar_id, href)
);
CREATE INDEX IF NOT EXISTS calendar_items_window ON calendar_items (person_id, start_ms);
CREATE TABLE IF NOT EXISTS calendar_item_events (
  person_id TEXT NOT NULL, event_id TEXT NOT NULL, calendar_id TEXT NOT NULL, href TEXT NOT NULL,
  PRIMARY KEY (person_id, event_id, calendar_id, href)
);
CREATE INDEX IF NOT EXISTS calendar_item_events_item ON calendar_item_events (person_id, calendar_id, href);
CREATE TABLE IF NOT EXISTS calendar_conflicts (
  person_id TEXT NOT NULL, conflict_key TEXT NOT NULL, first_seen TEXT NOT NULL,
  PRIMARY KEY (person_id, conflict_key)
);
CREATE TABLE IF NOT EXISTS calendar_sync_leases (
  source_id TEXT PRIMARY KEY, holder TEXT NOT NULL, until_ms INTEGER NOT NULL, again INTEGER NOT NULL
);
`;

interface CalendarRow {
  person_id: string;
  calendar_id: string;
  source_id: string;
  kind: string;
  url: string;
  name: string;
  color: string | null;
  writable: number;
  sync_token: string | null;
  ctag: string | null;
  etag: string | null;
  last_modified: string | null;
  synced_at: string | null;
  error: string | null;
}

interface ItemRow {
  calendar_id: string;
  href: string;
  etag: string | null;
  hash: string;
  ics: string | null;
  series: string;
  start_ms: number;
  end_ms: number | null;
}

/** {@link CalendarStore} on SQLite. */
export class SqliteCalendarStore implements CalendarStore {
  private readonly db: Database.Database;
  private readonly owns: boolean;

  /**
   * Opens `path` (made with its folder if missing; `:memory:` for tests) with WAL and a 5 s busy
   * timeout, or uses a connection given — never the core store's own (see the file comment).
   */
  constructor(options: { path: string } | { db: Database.Database }) {
    if ("db" in options) {
      this.db = options.db;
      this.owns = false;
    } else {
      if (options.path !== ":memory:") mkdirSync(dirname(options.path), { recursive: true });
      this.db = new Database(options.path);
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("busy_timeout = 5000");
      this.db.pragma("synchronous = NORMAL");
      this.owns = true;
    }
    this.db.exec(SCHEMA);
  }

  async listCalendars(personId: PersonId): Promise<StoredCalendar[]> {
    const rows = this.db.prepare("SELECT * FROM calendar_calendars WHERE person_id = ? ORDER BY name, calendar_id").all(personId) as CalendarRow[];
    return rows.map(toCalendar);
  }

  async saveCalendar(calendar: Parameters<CalendarStore["saveCalendar"]>[0]): Promise<void> {
    const sync = calendar.sync;
    this.db
      .prepare(
        `INSERT INTO calendar_calendars (person_id, calendar_id, source_id, kind, url, name, color, writable, sync_token, ctag, etag, last_modified, synced_at, error)
         VALUES (@person_id, @calendar_id, @source_id, @kind, @url, @name, @color, @writable, @sync_token, @ctag, @etag, @last_modified, @synced_at, @error)
         ON CONFLICT (person_id, calendar_id) DO UPDATE SET source_id = excluded.source_id, kind = excluded.kind, url = excluded.url, name = excluded.name,
           color = excluded.color, writable = excluded.writable${sync ? ", sync_token = excluded.sync_token, ctag = excluded.ctag, etag = excluded.etag, last_modified = excluded.last_modified" : ""}
           ${calendar.syncedAt !== undefined ? ", synced_at = excluded.synced_at" : ""}${calendar.error !== undefined ? ", error = excluded.error" : ""}`,
      )
      .run({
        person_id: calendar.personId,
        calendar_id: calendar.calendarId,
        source_id: calendar.sourceId,
        kind: calendar.kind,
        url: calendar.url,
        name: calendar.name,
        color: calendar.color,
        writable: calendar.writable ? 1 : 0,
        sync_token: sync?.syncToken ?? null,
        ctag: sync?.ctag ?? null,
        etag: sync?.etag ?? null,
        last_modified: sync?.lastModified ?? null,
        synced_at: calendar.syncedAt ?? null,
        error: calendar.error ?? null,
      });
  }

  async setCalendarError(personId: PersonId, calendarId: string, error: string | null): Promise<void> {
    this.db.prepare("UPDATE calendar_calendars SET error = ? WHERE person_id = ? AND calendar_id = ?").run(error, personId, calendarId);
  }

  async removeCalendar(personId: PersonId, calendarId: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM calendar_items WHERE person_id = ? AND calendar_id = ?").run(personId, calendarId);
      this.db.prepare("DELETE FROM calendar_item_events WHERE person_id = ? AND calendar_id = ?").run(personId, calendarId);
      this.db.prepare("DELETE FROM calendar_calendars WHERE person_id = ? AND calendar_id = ?").run(personId, calendarId);
    })();
  }

  async removeSource(sourceId: string): Promise<void> {
    const calendars = this.db.prepare("SELECT person_id, calendar_id FROM calendar_calendars WHERE source_id = ?").all(sourceId) as { person_id: string; calendar_id: string }[];
    for (const c of calendars) await this.removeCalendar(c.person_id as PersonId, c.calendar_id);
    this.db.prepare("DELETE FROM calendar_sync_leases WHERE source_id = ?").run(sourceId);
  }

  async itemTags(personId: PersonId, calendarId: string): Promise<Map<string, { etag: string | null; hash: string }>> {
    const rows = this.db.prepare("SELECT href, etag, hash FROM calendar_items WHERE person_id = ? AND calendar_id = ?").all(personId, calendarId) as { href: string; etag: string | null; hash: string }[];
    return new Map(rows.map((r) => [r.href, { etag: r.etag, hash: r.hash }]));
  }

  async getItems(personId: PersonId, calendarId: string, hrefs: readonly string[]): Promise<StoredItem[]> {
    const select = this.db.prepare("SELECT calendar_id, href, etag, hash, ics, series, start_ms, end_ms FROM calendar_items WHERE person_id = ? AND calendar_id = ? AND href = ?");
    return hrefs.flatMap((href) => {
      const row = select.get(personId, calendarId, href) as ItemRow | undefined;
      return row === undefined ? [] : [toItem(row)];
    });
  }

  async applySync(personId: PersonId, calendarId: string, batch: CalendarSyncBatch): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO calendar_items (person_id, calendar_id, href, etag, hash, ics, series, start_ms, end_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (person_id, calendar_id, href) DO UPDATE SET etag = excluded.etag, hash = excluded.hash, ics = excluded.ics, series = excluded.series,
         start_ms = excluded.start_ms, end_ms = excluded.end_ms`,
    );
    const remove = this.db.prepare("DELETE FROM calendar_items WHERE person_id = ? AND calendar_id = ? AND href = ?");
    const removeUids = this.db.prepare("DELETE FROM calendar_item_events WHERE person_id = ? AND calendar_id = ? AND href = ?");
    const addEvent = this.db.prepare("INSERT OR IGNORE INTO calendar_item_events (person_id, event_id, calendar_id, href) VALUES (?, ?, ?, ?)");
    this.db.transaction(() => {
      if (batch.replaceAll) {
        const keep = new Set(batch.upserts.map((u) => u.href));
        for (const { href } of this.db.prepare("SELECT href FROM calendar_items WHERE person_id = ? AND calendar_id = ?").all(personId, calendarId) as { href: string }[]) {
          if (!keep.has(href)) {
            remove.run(personId, calendarId, href);
            removeUids.run(personId, calendarId, href);
          }
        }
      }
      for (const href of batch.deletes) {
        remove.run(personId, calendarId, href);
        removeUids.run(personId, calendarId, href);
      }
      for (const item of batch.upserts) {
        const uids = [...new Set(item.series.map((s) => s.uid))];
        upsert.run(personId, calendarId, item.href, item.etag, item.hash, item.ics, JSON.stringify(item.series), item.startMs, item.endMs);
        removeUids.run(personId, calendarId, item.href);
        for (const uid of uids) addEvent.run(personId, eventIdOf(calendarId, uid), calendarId, item.href);
      }
      if (batch.sync === undefined) return;
      this.db
        .prepare("UPDATE calendar_calendars SET sync_token = ?, ctag = ?, etag = ?, last_modified = ?, synced_at = ?, error = NULL WHERE person_id = ? AND calendar_id = ?")
        .run(batch.sync.syncToken, batch.sync.ctag, batch.sync.etag, batch.sync.lastModified, batch.syncedAt ?? null, personId, calendarId);
    })();
  }

  async itemsInWindow(personId: PersonId, fromMs: number, toMs: number, calendarIds?: readonly string[]): Promise<(StoredItem & { calendarId: string })[]> {
    const only = calendarIds !== undefined && calendarIds.length > 0 ? ` AND calendar_id IN (${calendarIds.map(() => "?").join(", ")})` : "";
    if (calendarIds !== undefined && calendarIds.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT calendar_id, href, etag, hash, ics, series, start_ms, end_ms FROM calendar_items WHERE person_id = ? AND start_ms < ? AND (end_ms IS NULL OR end_ms > ?)${only}`)
      .all(personId, toMs, fromMs, ...(calendarIds ?? [])) as ItemRow[];
    return rows.map(toItem);
  }

  async itemsByEvent(personId: PersonId, eventId: string): Promise<(StoredItem & { calendarId: string })[]> {
    const rows = this.db
      .prepare(
        `SELECT i.calendar_id, i.href, i.etag, i.hash, i.ics, i.series, i.start_ms, i.end_ms FROM calendar_item_events u
         JOIN calendar_items i ON i.person_id = u.person_id AND i.calendar_id = u.calendar_id AND i.href = u.href WHERE u.person_id = ? AND u.event_id = ?`,
      )
      .all(personId, eventId) as ItemRow[];
    return rows.map(toItem);
  }

  async recordConflicts(personId: PersonId, keys: readonly string[], now: Date): Promise<string[]> {
    const insert = this.db.prepare("INSERT OR IGNORE INTO calendar_conflicts (person_id, conflict_key, first_seen) VALUES (?, ?, ?)");
    return this.db.transaction(() => keys.filter((key) => insert.run(personId, key, now.toISOString()).changes === 1))();
  }

  async claimSync(sourceId: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    const nowMs = now.getTime();
    // IMMEDIATE: the write lock is taken before the read, so two processes cannot both see it free.
    return this.db
      .transaction(() => {
        const row = this.db.prepare("SELECT holder, until_ms FROM calendar_sync_leases WHERE source_id = ?").get(sourceId) as { holder: string; until_ms: number } | undefined;
        if (row !== undefined && row.holder !== holder && row.until_ms > nowMs) {
          this.db.prepare("UPDATE calendar_sync_leases SET again = 1 WHERE source_id = ?").run(sourceId);
          return false;
        }
        this.db
          .prepare("INSERT INTO calendar_sync_leases (source_id, holder, until_ms, again) VALUES (?, ?, ?, 0) ON CONFLICT (source_id) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms, again = 0")
          .run(sourceId, holder, nowMs + leaseMs);
        return true;
      })
      .immediate();
  }

  async renewSync(sourceId: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    return this.db.prepare("UPDATE calendar_sync_leases SET until_ms = ? WHERE source_id = ? AND holder = ?").run(now.getTime() + leaseMs, sourceId, holder).changes === 1;
  }

  async releaseSync(sourceId: string, holder: string): Promise<boolean> {
    const row = this.db.prepare("DELETE FROM calendar_sync_leases WHERE source_id = ? AND holder = ? RETURNING again").get(sourceId, holder) as { again: number } | undefined;
    return row?.again === 1;
  }

  /** Closes the connection if this store opened it. */
  close(): void {
    if (this.owns && this.db.open) this.db.close();
  }
}

function toCalendar(row: CalendarRow): StoredCalendar {
  return {
    personId: row.person_id as PersonId,
    calendarId: row.calendar_id,
    sourceId: row.source_id,
    kind: row.kind === "ics" ? "ics" : "caldav",
    url: row.url,
    name: row.name,
    color: row.color,
    writable: row.writable === 1,
    sync: { syncToken: row.sync_token, ctag: row.ctag, etag: row.etag, lastModified: row.last_modified },
    syncedAt: row.synced_at,
    error: row.error,
  };
}

function toItem(row: ItemRow): StoredItem & { calendarId: string } {
  return {
    calendarId: row.calendar_id,
    href: row.href,
    etag: row.etag,
    hash: row.hash,
    ics: row.ics,
    series: seriesSchema.array().parse(JSON.parse(row.series)),
    startMs: row.start_ms,
    endMs: row.end_ms,
  };
}
