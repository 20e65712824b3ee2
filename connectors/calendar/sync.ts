/**
 * One sync of one source — a CalDAV account (every calendar in it) or an iCalendar feed — into the
 * calendar store, reporting what changed. A sync job (one per source, `jobs/`) calls this on its
 * interval; a restart resumes from the stored sync tokens and validators.
 *
 * The first sync of a calendar is its baseline: it stores everything and reports no changes (a
 * task waiting for "a new event" is not woken by events that were there before it connected).
 * A failure of one calendar is recorded on it and the others still sync; a bad object is an item
 * error and the rest is kept.
 */
import type { Clock } from "../../core/clock.js";
import type { PersonId } from "../../core/ids.js";
import { CaldavClient, type CaldavCredentials, type CaldavOptions, type CalendarChanges, type RemoteCalendar } from "./caldav.js";
import { diffSeries, titleOf, type CalendarChange } from "./changes.js";
import { CalendarError } from "./errors.js";
import { fetchFeed } from "./feed.js";
import { hostOf, type CalendarHttp } from "./http.js";
import { NotICalendarError, parseICalendar } from "./ical/parse.js";
import type { CalendarSeries, ItemError } from "./model.js";
import { calendarIdOf, storedItem, type CalendarStore, type StoredCalendar, type StoredItem } from "./store.js";

/** What a sync needs. */
export interface CalendarSyncDeps {
  store: CalendarStore;
  http: CalendarHttp;
  clock: Clock;
  caldav?: CaldavOptions;
  /** Feed byte limit (default 10 MiB). */
  feedMaxBytes?: number;
}

/** What one sync did. */
export interface SyncOutcome {
  sourceId: string;
  calendars: { calendarId: string; name: string; full: boolean; reason: string | null; stored: number; deleted: number; error: string | null }[];
  /** Changes since the previous sync (none on a calendar's first sync). */
  changes: CalendarChange[];
  /** Items that could not be read (the rest was kept). */
  errors: ItemError[];
}

/**
 * Syncs every event calendar of a CalDAV account. Calendars gone from the server are removed.
 * @throws CalendarError when the account cannot be reached or discovered (nothing is changed)
 */
export async function syncCaldavSource(deps: CalendarSyncDeps, personId: PersonId, sourceId: string, credentials: CaldavCredentials): Promise<SyncOutcome> {
  const client = new CaldavClient(credentials, deps.http, deps.caldav);
  const remote = await client.calendars();
  const stored = (await deps.store.listCalendars(personId)).filter((c) => c.sourceId === sourceId);
  const outcome: SyncOutcome = { sourceId, calendars: [], changes: [], errors: [] };
  const seen = new Set<string>();
  for (const calendar of remote) {
    const calendarId = calendarIdOf(sourceId, calendar.url);
    seen.add(calendarId);
    const prior = stored.find((c) => c.calendarId === calendarId) ?? null;
    await deps.store.saveCalendar({ personId, calendarId, sourceId, kind: "caldav", url: calendar.url, name: calendar.name, color: calendar.color, writable: true });
    try {
      await syncOneCalendar(deps, client, personId, calendarId, calendar, prior, outcome);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await deps.store.setCalendarError(personId, calendarId, message);
      outcome.calendars.push({ calendarId, name: calendar.name, full: false, reason: null, stored: 0, deleted: 0, error: message });
    }
  }
  for (const gone of stored.filter((c) => !seen.has(c.calendarId))) {
    if (gone.syncedAt !== null) outcome.changes.push(...(await removalsOf(deps.store, gone)));
    await deps.store.removeCalendar(personId, gone.calendarId);
  }
  return outcome;
}

async function syncOneCalendar(deps: CalendarSyncDeps, client: CaldavClient, personId: PersonId, calendarId: string, calendar: RemoteCalendar, prior: StoredCalendar | null, outcome: SyncOutcome): Promise<void> {
  const tags = await deps.store.itemTags(personId, calendarId);
  const known = { syncToken: prior?.sync.syncToken ?? null, ctag: prior?.sync.ctag ?? null, etags: new Map([...tags].map(([href, t]) => [href, t.etag])) };
  const delta = await client.changes(calendar, known);
  const syncedAt = deps.clock.now().toISOString();
  if (delta.kind === "unchanged") {
    await deps.store.applySync(personId, calendarId, { upserts: [], deletes: [], sync: { syncToken: delta.syncToken, ctag: delta.ctag, etag: null, lastModified: null }, syncedAt });
    outcome.calendars.push({ calendarId, name: calendar.name, full: false, reason: null, stored: 0, deleted: 0, error: null });
    return;
  }
  const upserts = readObjects(delta, outcome.errors);
  const touched = [...upserts.map((u) => u.href), ...delta.deletes];
  if (prior?.syncedAt) {
    const before = await deps.store.getItems(personId, calendarId, touched);
    outcome.changes.push(...changesOf(before.flatMap((i) => i.series), upserts.flatMap((i) => i.series), { calendarId, calendarName: calendar.name, sourceKind: "caldav" }));
  }
  await deps.store.applySync(personId, calendarId, { upserts, deletes: delta.deletes, sync: { syncToken: delta.syncToken, ctag: delta.ctag, etag: null, lastModified: null }, syncedAt });
  outcome.calendars.push({ calendarId, name: calendar.name, full: delta.full, reason: delta.reason, stored: upserts.length, deleted: delta.deletes.length, error: null });
}

/** Parses the fetched objects; an object that cannot be read at all is an item error and not stored. */
function readObjects(delta: CalendarChanges, errors: ItemError[]): StoredItem[] {
  errors.push(...delta.errors);
  const items: StoredItem[] = [];
  for (const object of delta.upserts) {
    const name = decodeURIComponent(object.href.split("/").filter(Boolean).at(-1) ?? object.href);
    try {
      const parsed = parseICalendar(object.ics);
      errors.push(...parsed.errors.map((e) => ({ item: `${name}: ${e.item}`, message: e.message })));
      if (parsed.series.length > 0) items.push(storedItem(object.href, object.etag, object.ics, parsed.series));
    } catch (error) {
      const message = error instanceof NotICalendarError ? error.message : `the object could not be read: ${error instanceof Error ? error.message : String(error)}`;
      errors.push({ item: name, message });
    }
  }
  return items;
}

/**
 * Fetches an iCalendar feed (conditionally) and replaces its stored events.
 * @throws CalendarError when the feed cannot be fetched or read (the stored copy is kept, the error recorded)
 */
export async function syncFeedSource(deps: CalendarSyncDeps, personId: PersonId, sourceId: string, url: string, name?: string): Promise<SyncOutcome> {
  const calendarId = calendarIdOf(sourceId, url);
  const prior = (await deps.store.listCalendars(personId)).find((c) => c.calendarId === calendarId) ?? null;
  const description = { personId, calendarId, sourceId, kind: "ics" as const, url, color: null, writable: false };
  await deps.store.saveCalendar({ ...description, name: name ?? prior?.name ?? hostOf(url).replace(/^https?:\/\//, "") });
  const outcome: SyncOutcome = { sourceId, calendars: [], changes: [], errors: [] };
  let fetched;
  try {
    fetched = await fetchFeed(deps.http, url, prior === null ? null : { etag: prior.sync.etag, lastModified: prior.sync.lastModified }, { maxBytes: deps.feedMaxBytes });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await deps.store.setCalendarError(personId, calendarId, message);
    throw error instanceof CalendarError ? error : new CalendarError("server_error", message, { cause: error });
  }
  const syncedAt = deps.clock.now().toISOString();
  const feedName = name ?? (fetched.kind === "changed" ? fetched.parsed.name : null) ?? prior?.name ?? hostOf(url).replace(/^https?:\/\//, "");
  if (fetched.kind === "unchanged") {
    await deps.store.applySync(personId, calendarId, { upserts: [], deletes: [], sync: prior!.sync, syncedAt });
    outcome.calendars.push({ calendarId, name: feedName, full: false, reason: null, stored: 0, deleted: 0, error: null });
    return outcome;
  }
  await deps.store.saveCalendar({ ...description, name: feedName });
  outcome.errors.push(...fetched.parsed.errors);
  const items = fetched.parsed.series.map((series) => storedItem(`${url}#${series.uid}`, null, null, [series]));
  const tags = await deps.store.itemTags(personId, calendarId);
  const differing = items.filter((i) => tags.get(i.href)?.hash !== i.hash);
  const present = new Set(items.map((i) => i.href));
  const removed = [...tags.keys()].filter((href) => !present.has(href));
  if (prior?.syncedAt) {
    const before = await deps.store.getItems(personId, calendarId, [...differing.map((i) => i.href), ...removed]);
    outcome.changes.push(...changesOf(before.flatMap((i) => i.series), differing.flatMap((i) => i.series), { calendarId, calendarName: feedName, sourceKind: "ics" }));
  }
  await deps.store.applySync(personId, calendarId, {
    upserts: differing,
    deletes: removed,
    sync: { syncToken: null, ctag: null, etag: fetched.validators.etag, lastModified: fetched.validators.lastModified },
    syncedAt,
  });
  outcome.calendars.push({ calendarId, name: feedName, full: true, reason: null, stored: differing.length, deleted: removed.length, error: null });
  return outcome;
}

/** Changes of the touched items: series compared by UID within those items. */
function changesOf(before: CalendarSeries[], after: CalendarSeries[], where: Pick<CalendarChange, "calendarId" | "calendarName" | "sourceKind">): CalendarChange[] {
  return diffSeries(before, after).map((d) => ({ ...where, kind: d.kind, uid: d.uid, title: titleOf((d.after ?? d.before)!), before: d.before, after: d.after }));
}

async function removalsOf(store: CalendarStore, calendar: StoredCalendar): Promise<CalendarChange[]> {
  const tags = await store.itemTags(calendar.personId, calendar.calendarId);
  const items = await store.getItems(calendar.personId, calendar.calendarId, [...tags.keys()]);
  return items.flatMap((i) => i.series).map((series) => ({ kind: "removed" as const, calendarId: calendar.calendarId, calendarName: calendar.name, sourceKind: calendar.kind, uid: series.uid, title: titleOf(series), before: series, after: null }));
}
