/**
 * The calendar tools against a real Radicale: what the model reads (`calendar_list`), what the
 * person's card says (the write tools' descriptions), and what lands on the server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CalendarConnection, CalendarConnections } from "../../../connectors/calendar/connections.js";
import { calendarReadTools } from "../../../connectors/calendar/read-tools.js";
import { SqliteCalendarStore } from "../../../connectors/calendar/sqlite-store.js";
import { syncCaldavSource, syncFeedSource } from "../../../connectors/calendar/sync.js";
import { calendarWriteTools } from "../../../connectors/calendar/write-tools.js";
import type { CalendarWriteDeps } from "../../../connectors/calendar/write-plans.js";
import { asId } from "../../../core/ids.js";
import { EgressGuard } from "../../../core/egress/index.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../../../core/tools/index.js";
import { startIcsServer, type IcsServer } from "../../helpers/ics-server.js";
import { startRadicale, type RadicaleServer } from "../../helpers/radicale.js";

const person = asId("person", "per_tools");
let radicale: RadicaleServer;
let feeds: IcsServer;
let store: SqliteCalendarStore;
let deps: CalendarWriteDeps;
let tools: Map<string, ToolDefinition>;
let work: string;
let zone = "Europe/Berlin";
let step = 0;

const connections: CalendarConnection[] = [];
const port: CalendarConnections = {
  list: async (p) => connections.filter((c) => c.personId === p),
  listAll: async () => connections,
  credentials: async () => ({ serverUrl: radicale.url, username: radicale.user, password: radicale.password }),
  granted: (p, capability) => connections.some((c) => c.personId === p && c.capabilities[capability]),
};

const context = (extra: Partial<ToolContext> = {}): ToolContext => ({
  personId: person,
  taskId: null,
  originMessageId: null,
  idempotencyKey: `act_tools:${++step}:0`,
  now: new Date(),
  signal: new AbortController().signal,
  ...extra,
});

async function call(name: string, args: unknown, extra: Partial<ToolContext> = {}): Promise<ToolResult> {
  const tool = tools.get(name)!;
  const parsed = tool.parameters.parse(args);
  return tool.execute(parsed, context(extra));
}

async function describeCall(name: string, args: unknown, extra: Partial<ToolContext> = {}) {
  const tool = tools.get(name)!;
  return tool.policy!.describe!(args, context(extra));
}

const sync = () => syncCaldavSource({ ...deps, http: deps.httpFor("conn_dav") }, person, "conn_dav", { serverUrl: radicale.url, username: radicale.user, password: radicale.password });
const vcal = (...lines: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", "DTSTAMP:20260101T000000Z", ...lines, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

beforeAll(async () => {
  [radicale, feeds] = await Promise.all([startRadicale(), startIcsServer()]);
  work = await radicale.makeCalendar("work", "Work");
  store = new SqliteCalendarStore({ path: ":memory:" });
  const http = new EgressGuard({ privateHostsAllowed: [new URL(radicale.url).host, feeds.host] });
  deps = { store, connections: port, httpFor: () => http, clock: { now: () => new Date("2026-03-01T08:00:00Z") }, personZone: async () => zone };
  connections.push({ id: "conn_dav", personId: person, kind: "caldav", label: "Radicale", url: radicale.url, username: radicale.user, capabilities: { read: true, write: true } });
  connections.push({ id: "conn_feed", personId: person, kind: "ics", label: "School", url: `${feeds.origin}/school.ics`, username: null, capabilities: { read: true, write: false } });
  tools = new Map([...calendarReadTools(deps), ...calendarWriteTools(deps)].map((t) => [t.name, t]));
  await radicale.put(work, "standup.ics", vcal("UID:standup", "DTSTART;TZID=Europe/Berlin:20260302T090000", "DTEND;TZID=Europe/Berlin:20260302T093000", "RRULE:FREQ=WEEKLY;BYDAY=MO", "SUMMARY:Standup", "DESCRIPTION:Dial-in 123", "ATTENDEE:mailto:a@example.org"));
  feeds.set("/school.ics", { body: ["BEGIN:VCALENDAR", "VERSION:2.0", "X-WR-CALNAME:School", "BEGIN:VEVENT", "UID:term", "DTSTART;VALUE=DATE:20260330", "DTEND;VALUE=DATE:20260411", "SUMMARY:Easter holidays", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n") });
  await sync();
  await syncFeedSource({ ...deps, http: deps.httpFor("conn_feed") }, person, "conn_feed", `${feeds.origin}/school.ics`);
}, 30_000);

afterAll(async () => {
  store?.close();
  await Promise.all([radicale?.stop(), feeds?.close()]);
});

describe("calendar_list", () => {
  it("lists occurrences in the person's local time with offsets, all-day spans as first and last date, untrusted", async () => {
    const result = await call("calendar_list", { from: "2026-03-23", to: "2026-04-05" });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.untrusted?.source).toMatch(/calendar/);
    const lines = result.content.split("\n");
    expect(lines[0]).toBe("3 occurrences from 2026-03-23 to 2026-04-05 (times in Europe/Berlin):");
    expect(lines[1]).toMatch(/^- 2026-03-23T09:00:00\+01:00 to 2026-03-23T09:30:00\+01:00 · “Standup” · calendar “Work” · repeats every week on Monday · 1 attendee · id ev_[0-9a-f]{12} · notes “Dial-in 123”$/);
    expect(lines[2]).toMatch(/^- 2026-03-30 to 2026-04-10 \(all day, 12 days\) · “Easter holidays” · calendar “School” · id ev_/);
    expect(lines[3]).toMatch(/^- 2026-03-30T09:00:00\+02:00 to 2026-03-30T09:30:00\+02:00 · “Standup”/);
    expect(lines).toHaveLength(4);
  });

  it("shows the same events in another zone, and refuses a window it cannot read", async () => {
    zone = "America/New_York";
    const result = await call("calendar_list", { from: "2026-03-09", to: "2026-03-09", calendar: "work" });
    zone = "Europe/Berlin";
    expect(result.ok && result.content).toContain("2026-03-09T04:00:00-04:00 to 2026-03-09T04:30:00-04:00");
    const bad = await call("calendar_list", { from: "2026-03-10", to: "2026-03-01" });
    expect(bad).toMatchObject({ ok: false, code: "invalid_arguments" });
    const unknown = await call("calendar_list", { from: "2026-03-01", to: "2026-03-02", calendar: "Nope" });
    expect(!unknown.ok && unknown.error).toMatch(/no calendar named “Nope”.*“School”, “Work”/);
  });
});

describe("calendar_conflicts", () => {
  it("reports overlaps in the person's own calendars in local time (not with a followed feed), and says when there are none", async () => {
    await radicale.put(work, "review.ics", vcal("UID:review", "DTSTART;TZID=Europe/Berlin:20260513T100000", "DTEND;TZID=Europe/Berlin:20260513T110000", "SUMMARY:Review", "LOCATION:Room 4", "ATTENDEE:mailto:a@example.org", "ATTENDEE:mailto:b@example.org"));
    await radicale.put(work, "call.ics", vcal("UID:call", "DTSTART;TZID=Europe/Berlin:20260513T103000", "DTEND;TZID=Europe/Berlin:20260513T111500", "SUMMARY:Client call"));
    const school = (...more: string[][]) =>
      ["BEGIN:VCALENDAR", "VERSION:2.0", "X-WR-CALNAME:School", ...[["UID:term", "DTSTART;VALUE=DATE:20260330", "DTEND;VALUE=DATE:20260411", "SUMMARY:Easter holidays"], ...more].flatMap((e) => ["BEGIN:VEVENT", ...e, "END:VEVENT"]), "END:VCALENDAR", ""].join("\r\n");
    // A followed feed's event at the same time is not the person's own: no conflict with it.
    feeds.set("/school.ics", { body: school(["UID:parents", "DTSTART;TZID=Europe/Berlin:20260513T101500", "DTEND;TZID=Europe/Berlin:20260513T110000", "SUMMARY:Parents' evening"]) });
    await sync();
    await syncFeedSource({ ...deps, http: deps.httpFor("conn_feed") }, person, "conn_feed", `${feeds.origin}/school.ics`);
    try {
      const found = await call("calendar_conflicts", { from: "2026-05-11", to: "2026-05-17" });
      expect(found.ok).toBe(true);
      if (!found.ok) return;
      const lines = found.content.split("\n");
      expect(lines[0]).toBe("1 conflict from 2026-05-11 to 2026-05-17 (times in Europe/Berlin):");
      expect(lines[1]).toMatch(/^- “Review” 2026-05-13T10:00:00\+02:00 to 2026-05-13T11:00:00\+02:00 \(calendar “Work”, id ev_[0-9a-f]{12}\) overlaps “Client call” 2026-05-13T10:30:00\+02:00 to 2026-05-13T11:15:00\+02:00 \(calendar “Work”, id ev_[0-9a-f]{12}\)$/);
      expect(lines).toHaveLength(2);
      expect(found.untrusted?.source).toMatch(/calendar/);
      // The list shows the same day with the place and the attendees, and the feed's event beside them.
      const day = await call("calendar_list", { from: "2026-05-13", to: "2026-05-13" });
      expect(day.ok && day.content).toMatch(/- 2026-05-13T10:00:00\+02:00 to 2026-05-13T11:00:00\+02:00 · “Review” · calendar “Work” · at “Room 4” · 2 attendees · id ev_/);
      expect(day.ok && day.content).toContain("· “Parents' evening” · calendar “School”");
      zone = "America/New_York";
      const there = await call("calendar_conflicts", { from: "2026-05-13", to: "2026-05-13" });
      zone = "Europe/Berlin";
      expect(there.ok && there.content).toContain("“Review” 2026-05-13T04:00:00-04:00 to 2026-05-13T05:00:00-04:00");
      expect(await call("calendar_conflicts", { from: "2026-05-14", to: "2026-05-20" })).toMatchObject({ ok: true, content: "No overlapping events from 2026-05-14 to 2026-05-20 (times in Europe/Berlin)." });
      expect(await call("calendar_conflicts", { from: "2026-05-20", to: "2026-05-14" })).toMatchObject({ ok: false, code: "invalid_arguments" });
    } finally {
      zone = "Europe/Berlin";
      await radicale.remove(`${work}review.ics`);
      await radicale.remove(`${work}call.ics`);
      feeds.set("/school.ics", { body: school() });
      await sync();
      await syncFeedSource({ ...deps, http: deps.httpFor("conn_feed") }, person, "conn_feed", `${feeds.origin}/school.ics`);
    }
  });
});

describe("write tools", () => {
  it("describes a new weekly event on the card (weekday, date, local range with zone, repetition, attendees), then creates it with the person's TZID", async () => {
    const args = { title: "Piano", start: "2026-03-17T17:00", end: "2026-03-17T18:00", repeat: { frequency: "weekly" as const }, attendees: ["teacher@example.org"] };
    const card = await describeCall("calendar_create", args);
    expect(card).toMatchObject({ capability: "calendar.write", access: "write", method: "WRITE", destinations: [work], hardToUndo: true, onceOnly: false });
    expect(card.summary).toBe("Add “Piano” to the calendar “Work”: Tuesday 17 March 2026, 17:00–18:00 (Europe/Berlin, UTC+01:00), repeating every week on Tuesday");
    expect(card.fields).toContainEqual({ name: "Attendees", value: "teacher@example.org (they may receive an invitation)" });
    expect((await describeCall("calendar_create", args, { tainted: true })).onceOnly).toBe(true);

    const created = await call("calendar_create", args);
    expect(created).toMatchObject({ ok: true });
    const [href] = (await radicale.list(work)).filter((h) => h.includes("familiar-"));
    const ics = await radicale.get(href!);
    expect(ics).toContain("DTSTART;TZID=Europe/Berlin:20260317T170000");
    expect(ics).toContain("RRULE:FREQ=WEEKLY");
    expect(ics).toContain("TZID:Europe/Berlin");
    const listed = await call("calendar_list", { from: "2026-03-30", to: "2026-04-01" });
    expect(listed.ok && listed.content).toContain("2026-03-31T17:00:00+02:00 to 2026-03-31T18:00:00+02:00 · “Piano”");
    expect((await sync()).changes).toEqual([]);
  });

  it("moves one occurrence of a repeating event, saying so on the card, and asks which one when the scope is missing", async () => {
    const day = await call("calendar_list", { from: "2026-03-09", to: "2026-03-09" });
    const id = /“Standup”.*id (ev_[0-9a-f]{12})/.exec(day.ok ? day.content : "")![1]!;
    const missing = await call("calendar_update", { event: id, start: "2026-03-09T10:00" });
    expect(missing).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(!missing.ok && missing.error).toMatch(/repeats \(every week on Monday\).*scope "occurrence"/);
    const args = { event: id, scope: "occurrence" as const, occurrence: "2026-03-09T09:00:00+01:00", start: "2026-03-10T11:00" };
    const card = await describeCall("calendar_update", args);
    expect(card.summary).toBe("Change “Standup” in the calendar “Work”: only the occurrence on Monday 9 March 2026, 09:00–09:30 (Europe/Berlin, UTC+01:00); the other occurrences stay as they are");
    expect(card.fields).toContainEqual({ name: "New time", value: "Tuesday 10 March 2026, 11:00–11:30 (Europe/Berlin, UTC+01:00)" });
    expect(await call("calendar_update", args)).toMatchObject({ ok: true });
    const ics = await radicale.get(`${work}standup.ics`);
    expect(ics).toContain("RECURRENCE-ID;TZID=Europe/Berlin:20260309T090000");
    const week = await call("calendar_list", { from: "2026-03-09", to: "2026-03-15" });
    expect(week.ok && week.content).toContain("2026-03-10T11:00:00+01:00 to 2026-03-10T11:30:00+01:00 · “Standup”");
    expect(week.ok && week.content).not.toContain("2026-03-09T09:00");
  });

  it("moves the whole series by the same wall-clock step, keeping 09:00 → 10:00 local across the clock change", async () => {
    const listing = await call("calendar_list", { from: "2026-03-16", to: "2026-03-16" });
    const id = /id (ev_[0-9a-f]{12})/.exec(listing.ok ? listing.content : "")![1]!;
    const args = { event: id, scope: "series" as const, occurrence: "2026-03-16T09:00", start: "2026-03-16T10:00" };
    const card = await describeCall("calendar_update", args);
    expect(card.summary).toMatch(/the whole series \(it repeats every week on Monday\): every occurrence$/);
    expect(await call("calendar_update", args)).toMatchObject({ ok: true });
    expect(await radicale.get(`${work}standup.ics`)).toContain("DTSTART;TZID=Europe/Berlin:20260302T100000");
    const after = await call("calendar_list", { from: "2026-03-30", to: "2026-03-30" });
    expect(after.ok && after.content).toContain("2026-03-30T10:00:00+02:00 to 2026-03-30T10:30:00+02:00 · “Standup”");
  });

  it("refuses to run a change other than the one judged, and a change to a followed feed", async () => {
    const listing = await call("calendar_list", { from: "2026-03-30", to: "2026-03-30" });
    const standup = /“Standup”.*id (ev_[0-9a-f]{12})/.exec(listing.ok ? listing.content : "")![1]!;
    const holidays = /“Easter holidays”.*id (ev_[0-9a-f]{12})/.exec(listing.ok ? listing.content : "")![1]!;
    const judged = await describeCall("calendar_delete", { event: standup, scope: "series" });
    const other = await call("calendar_delete", { event: standup, scope: "occurrence", occurrence: "2026-03-30T10:00" }, { action: judged });
    expect(other).toMatchObject({ ok: false, code: "calendar_changed" });
    expect(await radicale.get(`${work}standup.ics`)).not.toBeNull();
    const feed = await call("calendar_delete", { event: holidays });
    expect(feed).toMatchObject({ ok: false, code: "calendar_read_only" });
  });

  it("cancels one occurrence with EXDATE and deletes a whole series", async () => {
    const listing = await call("calendar_list", { from: "2026-03-30", to: "2026-03-30" });
    const standup = /“Standup”.*id (ev_[0-9a-f]{12})/.exec(listing.ok ? listing.content : "")![1]!;
    const card = await describeCall("calendar_delete", { event: standup, scope: "occurrence", occurrence: "2026-03-30T10:00" });
    expect(card).toMatchObject({ method: "DELETE", hardToUndo: true });
    expect(await call("calendar_delete", { event: standup, scope: "occurrence", occurrence: "2026-03-30T10:00" }, { action: card })).toMatchObject({ ok: true });
    expect(await radicale.get(`${work}standup.ics`)).toMatch(/EXDATE;TZID=Europe\/Berlin:20260330T100000/);
    const gone = await call("calendar_list", { from: "2026-03-30", to: "2026-03-30" });
    expect(gone.ok && gone.content).not.toContain("“Standup”");
    expect(await call("calendar_delete", { event: standup, scope: "series" })).toMatchObject({ ok: true });
    expect(await radicale.get(`${work}standup.ics`)).toBeNull();
  });
});
