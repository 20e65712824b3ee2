import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agendaFor } from "../../../connectors/calendar/agenda.js";
import { findConflicts } from "../../../connectors/calendar/conflicts.js";
import { CalendarError } from "../../../connectors/calendar/errors.js";
import { SqliteCalendarStore } from "../../../connectors/calendar/sqlite-store.js";
import { eventIdOf } from "../../../connectors/calendar/store.js";
import { syncCaldavSource, syncFeedSource, type CalendarSyncDeps } from "../../../connectors/calendar/sync.js";
import { asId } from "../../../core/ids.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { startIcsServer, type IcsServer } from "../../helpers/ics-server.js";
import { startRadicale, type RadicaleServer } from "../../helpers/radicale.js";

const person = asId("person", "per_sync");
let radicale: RadicaleServer;
let feeds: IcsServer;
let deps: CalendarSyncDeps;
let store: SqliteCalendarStore;
let now = new Date("2026-03-01T08:00:00Z");

const ics = (uid: string, lines: string[]) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260101T000000Z", ...lines, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
const at = (start: string, end: string, title: string, extra: string[] = []) => [`DTSTART;TZID=Europe/Berlin:${start}`, `DTEND;TZID=Europe/Berlin:${end}`, `SUMMARY:${title}`, ...extra];

beforeAll(async () => {
  [radicale, feeds] = await Promise.all([startRadicale(), startIcsServer()]);
  store = new SqliteCalendarStore({ path: ":memory:" });
  deps = { store, http: new EgressGuard({ privateHostsAllowed: [new URL(radicale.url).host, feeds.host] }), clock: { now: () => now } };
}, 30_000);

afterAll(async () => {
  store?.close();
  await Promise.all([radicale?.stop(), feeds?.close()]);
});

/** The stored items of event `uid` in the CalDAV calendar "Work". */
async function byUid(uid: string) {
  const work = (await store.listCalendars(person)).find((c) => c.name === "Work")!;
  return store.itemsByEvent(person, eventIdOf(work.calendarId, uid));
}

const credentials = () => ({ serverUrl: radicale.url, username: radicale.user, password: radicale.password });

describe("syncing a CalDAV account into the store", () => {
  let work: string;

  it("stores everything on the first sync and reports no changes (a baseline)", async () => {
    work = await radicale.makeCalendar("work", "Work");
    await radicale.put(work, "standup.ics", ics("standup", at("20260302T090000", "20260302T093000", "Standup", ["RRULE:FREQ=WEEKLY"])));
    await radicale.put(work, "review.ics", ics("review", at("20260303T140000", "20260303T150000", "Review")));
    const outcome = await syncCaldavSource(deps, person, "conn_dav", credentials());
    expect(outcome.changes).toEqual([]);
    expect(outcome.calendars).toMatchObject([{ name: "Work", full: true, stored: 2, error: null }]);
    const agenda = await agendaFor(store, person, { fromMs: Date.parse("2026-03-01T00:00:00Z"), toMs: Date.parse("2026-03-10T00:00:00Z") }, "Europe/Berlin");
    expect(agenda.entries.map((e) => e.details.title)).toEqual(["Standup", "Review", "Standup"]);
  });

  it("reports additions, moves, cancellations, changes and removals on later syncs", async () => {
    await radicale.put(work, "lunch.ics", ics("lunch", at("20260304T120000", "20260304T130000", "Lunch")));
    await radicale.put(work, "review.ics", ics("review", at("20260303T160000", "20260303T170000", "Review")));
    await radicale.put(work, "standup.ics", ics("standup", at("20260302T090000", "20260302T093000", "Standup", ["RRULE:FREQ=WEEKLY", "EXDATE;TZID=Europe/Berlin:20260309T090000"])));
    now = new Date("2026-03-01T09:00:00Z");
    const outcome = await syncCaldavSource(deps, person, "conn_dav", credentials());
    expect(outcome.changes.map((c) => [c.kind, c.uid]).sort()).toEqual([["added", "lunch"], ["cancelled", "standup"], ["moved", "review"]]);
    expect(outcome.changes.every((c) => c.calendarName === "Work" && c.sourceKind === "caldav")).toBe(true);

    await radicale.put(work, "lunch.ics", ics("lunch", at("20260304T120000", "20260304T130000", "Lunch with Ann")));
    const changed = await syncCaldavSource(deps, person, "conn_dav", credentials());
    expect(changed.changes.map((c) => [c.kind, c.uid, c.title])).toEqual([["changed", "lunch", "Lunch with Ann"]]);
    expect((await syncCaldavSource(deps, person, "conn_dav", credentials())).changes).toEqual([]);
  });

  it("removes an event deleted on the server, also after the server forgot the sync token (field case C3)", async () => {
    await radicale.remove(`${work}lunch.ics`);
    const first = await syncCaldavSource(deps, person, "conn_dav", credentials());
    expect(first.changes.map((c) => [c.kind, c.uid])).toEqual([["removed", "lunch"]]);
    expect(await byUid("lunch")).toEqual([]);

    // Radicale keeps sync tokens in its cache: without it, the stored token is refused.
    await radicale.remove(`${work}review.ics`);
    const cache = join(radicale.storage, "collection-root", radicale.user, "work", ".Radicale.cache");
    for (const entry of readdirSync(cache)) if (entry === "sync-token") rmSync(join(cache, entry), { recursive: true, force: true });
    const second = await syncCaldavSource(deps, person, "conn_dav", credentials());
    expect(second.calendars[0]).toMatchObject({ full: true, reason: "the server refused the stored sync token", deleted: 1 });
    expect(second.changes.map((c) => [c.kind, c.uid])).toEqual([["removed", "review"]]);
    expect(await byUid("review")).toEqual([]);
    expect((await byUid("standup")).length).toBe(1);
  });

  it("keeps the other objects when one cannot be read (an unknown TZID, which Radicale accepts), and says which", async () => {
    await radicale.put(work, "broken.ics", ics("broken", ["DTSTART;TZID=Mars/Olympus_Mons:20260305T090000", "SUMMARY:Rover check"]));
    const outcome = await syncCaldavSource(deps, person, "conn_dav", credentials());
    expect(outcome.errors).toEqual([{ item: 'broken.ics: event "Rover check" (broken)', message: 'the time zone "Mars/Olympus_Mons" is unknown (not an IANA zone and no VTIMEZONE for it)' }]);
    expect(await byUid("broken")).toEqual([]);
    expect((await byUid("standup")).length).toBe(1);
    await radicale.remove(`${work}broken.ics`);
  });

  it("finds two overlapping events as one conflict, known on the next sync", async () => {
    const home = await radicale.makeCalendar("home", "Home");
    await radicale.put(home, "dentist.ics", ics("dentist", at("20260302T091500", "20260302T100000", "Dentist")));
    await radicale.put(home, "free.ics", ics("free", at("20260302T090000", "20260302T100000", "Maybe gym", ["TRANSP:TRANSPARENT"])));
    await syncCaldavSource(deps, person, "conn_dav", credentials());
    const agenda = await agendaFor(store, person, { fromMs: Date.parse("2026-03-01T00:00:00Z"), toMs: Date.parse("2026-03-08T00:00:00Z") }, "Europe/Berlin");
    const conflicts = findConflicts(agenda.entries);
    expect(conflicts.map((c) => [c.first.details.title, c.second.details.title])).toEqual([["Standup", "Dentist"]]);
    expect(await store.recordConflicts(person, conflicts.map((c) => c.key), now)).toEqual([conflicts[0]!.key]);
    const again = findConflicts((await agendaFor(store, person, { fromMs: Date.parse("2026-03-01T00:00:00Z"), toMs: Date.parse("2026-03-08T00:00:00Z") }, "Europe/Berlin")).entries);
    expect(await store.recordConflicts(person, again.map((c) => c.key), now)).toEqual([]);
  });

  it("removes a calendar deleted on the server, and refuses a wrong password without touching the store", async () => {
    await fetch(`${radicale.home}home/`, { method: "DELETE", headers: { authorization: `Basic ${Buffer.from(`${radicale.user}:${radicale.password}`).toString("base64")}` } });
    const outcome = await syncCaldavSource(deps, person, "conn_dav", credentials());
    expect(outcome.changes.map((c) => [c.kind, c.uid]).sort()).toEqual([["removed", "dentist"], ["removed", "free"]]);
    expect((await store.listCalendars(person)).map((c) => c.name)).toEqual(["Work"]);
    const refused = await syncCaldavSource(deps, person, "conn_dav", { ...credentials(), password: "nope" }).catch((e: unknown) => e);
    expect((refused as CalendarError).code).toBe("unauthorized");
    expect((await store.listCalendars(person)).map((c) => c.name)).toEqual(["Work"]);
  });
});

describe("syncing an iCalendar feed into the store", () => {
  const feed = (...events: [string, string][]) =>
    ["BEGIN:VCALENDAR", "VERSION:2.0", "X-WR-CALNAME:Club fixtures", ...events.flatMap(([uid, date]) => ["BEGIN:VEVENT", `UID:${uid}`, `DTSTART;VALUE=DATE:${date}`, `SUMMARY:Match ${uid}`, "END:VEVENT"]), "END:VCALENDAR", ""].join("\r\n");

  it("baselines, reports a new fixture, skips an unchanged feed, and keeps the last good copy when it turns into a web page", async () => {
    feeds.set("/club.ics", { body: feed(["m1", "20260307"], ["m2", "20260314"]) });
    const url = `${feeds.origin}/club.ics`;
    const first = await syncFeedSource(deps, person, "conn_feed", url);
    expect(first.changes).toEqual([]);
    expect(first.calendars[0]).toMatchObject({ name: "Club fixtures", stored: 2 });

    feeds.set("/club.ics", { body: feed(["m1", "20260307"], ["m2", "20260321"], ["m3", "20260328"]) });
    const second = await syncFeedSource(deps, person, "conn_feed", url);
    expect(second.changes.map((c) => [c.kind, c.uid, c.sourceKind])).toEqual([["moved", "m2", "ics"], ["added", "m3", "ics"]]);

    const requestsBefore = feeds.requests.length;
    expect((await syncFeedSource(deps, person, "conn_feed", url)).changes).toEqual([]);
    expect(feeds.requests.at(-1)!.status).toBe(304);
    expect(feeds.requests.length).toBe(requestsBefore + 1);

    feeds.set("/club.ics", { body: "<html><body>Maintenance</body></html>", contentType: "text/html" });
    const error = await syncFeedSource(deps, person, "conn_feed", url).catch((e: unknown) => e);
    expect((error as CalendarError).code).toBe("not_icalendar");
    const calendar = (await store.listCalendars(person)).find((c) => c.kind === "ics")!;
    expect(calendar.error).toMatch(/not a calendar feed/);
    expect(calendar.writable).toBe(false);
    const entries = (await agendaFor(store, person, { fromMs: Date.parse("2026-03-01T00:00:00Z"), toMs: Date.parse("2026-04-01T00:00:00Z") }, "Pacific/Auckland")).entries.filter((e) => e.calendarKind === "ics");
    expect(entries.map((e) => e.start)).toEqual([
      { kind: "date", date: "2026-03-07" },
      { kind: "date", date: "2026-03-21" },
      { kind: "date", date: "2026-03-28" },
    ]);
  });
});
