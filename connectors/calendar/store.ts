/**
 * The calendar's storage port: a person's calendars (one per CalDAV collection or iCalendar feed)
 * with their sync state, the items of each calendar (a CalDAV object, or one UID of a feed) with
 * their parsed series, and the conflicts already announced. SQLite (`sqlite-store.ts`) and MongoDB
 * (`mongo-store.ts`) implement it and pass one contract suite.
 *
 * A sync is applied with {@link CalendarStore.applySync}: items first, the new sync state last, so
 * a crash in between repeats the same (idempotent) changes on the next run instead of losing them.
 */
import { createHash } from "node:crypto";
import type { PersonId } from "../../core/ids.js";
import { seriesBounds } from "./ical/expand.js";
import type { CalendarSeries } from "./model.js";

/** The kind of source a calendar comes from. */
export type CalendarSourceKind = "caldav" | "ics";

/** Sync state of a calendar: CalDAV sync token and ctag, or a feed's HTTP validators. */
export interface CalendarSyncState {
  syncToken: string | null;
  ctag: string | null;
  etag: string | null;
  lastModified: string | null;
}

/** One calendar of a person. */
export interface StoredCalendar {
  personId: PersonId;
  /** Stable id (see {@link calendarIdOf}). */
  calendarId: string;
  /** The connection it belongs to. */
  sourceId: string;
  kind: CalendarSourceKind;
  /** The collection's URL, or the feed's URL. */
  url: string;
  name: string;
  color: string | null;
  /** CalDAV calendars can be written (with the write capability); feeds never. */
  writable: boolean;
  sync: CalendarSyncState;
  /** ISO 8601 UTC of the last successful sync, or null. */
  syncedAt: string | null;
  /** The last sync's error message (null when it succeeded). */
  error: string | null;
}

/** One item of a calendar: a CalDAV object (href = its URL) or one UID of a feed (href = `<feed>#<uid>`). */
export interface StoredItem {
  href: string;
  /** The server's ETag (null for feed items or when the server sent none). */
  etag: string | null;
  /** Digest of the parsed series: what tells a real change from a new ETag. */
  hash: string;
  /** The raw iCalendar text, kept for CalDAV objects (edits change it); null for feed items. */
  ics: string | null;
  series: CalendarSeries[];
  /** Earliest start and latest end of all its series (null: repeats forever), ms, widened by zone margins. */
  startMs: number;
  endMs: number | null;
}

/** What one sync changes in one calendar. */
export interface CalendarSyncBatch {
  upserts: StoredItem[];
  /** hrefs to delete. */
  deletes: string[];
  /** Delete every item not in `upserts` (a feed is replaced as a whole). */
  replaceAll?: boolean;
  /** The new sync state and its time; absent for Familiar's own writes, which change items only. */
  sync?: CalendarSyncState;
  syncedAt?: string;
}

/** The calendar storage port. Every method is scoped to one person. */
export interface CalendarStore {
  /** The person's calendars, by name. */
  listCalendars(personId: PersonId): Promise<StoredCalendar[]>;
  /** Creates or updates a calendar's description; keeps its sync state when `calendar.sync` is omitted. */
  saveCalendar(calendar: Omit<StoredCalendar, "sync" | "syncedAt" | "error"> & Partial<Pick<StoredCalendar, "sync" | "syncedAt" | "error">>): Promise<void>;
  /** Records a failed sync's error (null clears it); the stored items stay. */
  setCalendarError(personId: PersonId, calendarId: string, error: string | null): Promise<void>;
  /** Deletes a calendar with its items (gone from the server). */
  removeCalendar(personId: PersonId, calendarId: string): Promise<void>;
  /** Deletes every calendar (with its items) of a source whose connection was removed. */
  removeSource(sourceId: string): Promise<void>;
  /** Every item's href → ETag and hash, for comparing with the server. */
  itemTags(personId: PersonId, calendarId: string): Promise<Map<string, { etag: string | null; hash: string }>>;
  /** The stored items with these hrefs (those that exist). */
  getItems(personId: PersonId, calendarId: string, hrefs: readonly string[]): Promise<StoredItem[]>;
  /** Applies one sync (see the file comment). */
  applySync(personId: PersonId, calendarId: string, batch: CalendarSyncBatch): Promise<void>;
  /** Items of the person (optionally of some calendars) whose span may overlap `[fromMs, toMs)`. */
  itemsInWindow(personId: PersonId, fromMs: number, toMs: number, calendarIds?: readonly string[]): Promise<(StoredItem & { calendarId: string })[]>;
  /** The items holding the event `eventId` (see {@link eventIdOf}; normally one). */
  itemsByEvent(personId: PersonId, eventId: string): Promise<(StoredItem & { calendarId: string })[]>;
  /**
   * Records conflict keys as announced and returns those that were not known before (in the order
   * given). Idempotent: a key is new exactly once.
   */
  recordConflicts(personId: PersonId, keys: readonly string[], now: Date): Promise<string[]>;
  /**
   * The sync lease of a source (a CalDAV account or a feed), so that two processes sharing this
   * store never sync one source at once (its repeating job and a `:now` one are separate Agenda
   * jobs, each locked on its own). Atomic: takes the lease for `holder` until `now + leaseMs` when
   * it is free, expired or already `holder`'s, and returns true; while another holder's lease runs,
   * it records on that lease that another sync was asked for (see {@link releaseSync}) and returns false.
   */
  claimSync(sourceId: string, holder: string, now: Date, leaseMs: number): Promise<boolean>;
  /** Extends `holder`'s lease to `now + leaseMs`; false when it is no longer `holder`'s (it expired and was taken). */
  renewSync(sourceId: string, holder: string, now: Date, leaseMs: number): Promise<boolean>;
  /**
   * Ends `holder`'s lease. Returns true when another sync was asked for while it ran (a claim that
   * found it held): the holder then syncs again, so what that request was for is not missed.
   */
  releaseSync(sourceId: string, holder: string): Promise<boolean>;
}

/** A stable calendar id from its source and URL: `cal_` + 16 hex of SHA-256. */
export function calendarIdOf(sourceId: string, url: string): string {
  return `cal_${createHash("sha256").update(`${sourceId}\n${url}`).digest("hex").slice(0, 16)}`;
}

/**
 * The id an event goes by in tools (`ev_` + 12 hex of SHA-256 of calendar id and UID): short,
 * stable across syncs, and distinct for the same UID in two calendars.
 */
export function eventIdOf(calendarId: string, uid: string): string {
  return `ev_${createHash("sha256").update(`${calendarId}\n${uid}`).digest("hex").slice(0, 12)}`;
}

/** A stored item from parsed series (computes its hash and span). */
export function storedItem(href: string, etag: string | null, ics: string | null, series: CalendarSeries[]): StoredItem {
  let startMs = Infinity;
  let endMs: number | null = -Infinity;
  for (const s of series) {
    const bounds = seriesBounds(s);
    startMs = Math.min(startMs, bounds.startMs);
    endMs = endMs === null || bounds.endMs === null ? null : Math.max(endMs, bounds.endMs);
  }
  if (series.length === 0) {
    startMs = 0;
    endMs = 0;
  }
  const hash = createHash("sha256").update(JSON.stringify(series)).digest("hex").slice(0, 32);
  return { href, etag, hash, ics, series, startMs: Number.isFinite(startMs) ? startMs : 0, endMs: endMs !== null && !Number.isFinite(endMs) ? 0 : endMs };
}
