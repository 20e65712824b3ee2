/**
 * The calendar kinds on the connections framework and the sync service, against a real Radicale and
 * a local feed server: a connection is tested before it is kept, its password lives in the person's
 * vault only, its sync job follows its capabilities, a sync records its status (a failed one keeps
 * the stored copy), and a removed connection takes its job and its synced calendars with it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { calendarKinds } from "../../../connectors/calendar/kinds.js";
import { CalendarService, CALENDAR_SYNC_JOB, type CalendarServiceDeps } from "../../../connectors/calendar/service.js";
import { SqliteCalendarStore } from "../../../connectors/calendar/sqlite-store.js";
import { ConnectDesk, Connections } from "../../../core/connections/index.js";
import { CommandRegistry, registerConnectCommands } from "../../../core/inbound/index.js";
import { EgressGuard } from "../../../core/egress/index.js";
import type { PersonId } from "../../../core/ids.js";
import { createLogger } from "../../../core/log/index.js";
import type { Notifier } from "../../../core/notify/index.js";
import { Outbound } from "../../../core/outbox/index.js";
import type { ScheduleRequest, Scheduler } from "../../../core/scheduling/index.js";
import { SecretVault } from "../../../core/secrets/index.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import { startIcsServer, type IcsServer } from "../../helpers/ics-server.js";
import { startRadicale, type RadicaleServer } from "../../helpers/radicale.js";

let radicale: RadicaleServer;
let feeds: IcsServer;
let dir: string;
let core: SqliteStore;
let calendars: SqliteCalendarStore;
let connections: Connections;
let service: CalendarService;
let serviceDeps: CalendarServiceDeps;
let person: PersonId;
/** What the service asked of the scheduler (a recording stand-in for Agenda). */
let scheduled: ScheduleRequest[] = [];
let cancelled: string[] = [];
const proposals: unknown[] = [];

const vcal = (...lines: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", "DTSTAMP:20260101T000000Z", ...lines, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

beforeAll(async () => {
  [radicale, feeds] = await Promise.all([startRadicale(), startIcsServer()]);
  const work = await radicale.makeCalendar("home", "Home");
  expect(work).toBe(`${radicale.home}home/`);
  await radicale.put(work, "dentist.ics", vcal("UID:dentist", "DTSTART:20260310T090000Z", "DTEND:20260310T100000Z", "SUMMARY:Dentist"));
  feeds.set("/club.ics", { body: ["BEGIN:VCALENDAR", "VERSION:2.0", "X-WR-CALNAME:Club", "BEGIN:VEVENT", "UID:match", "DTSTART;VALUE=DATE:20260321", "SUMMARY:Home match", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n") });
  dir = mkdtempSync(join(tmpdir(), "familiar-calendar-service-"));
  core = openSqliteStore({ path: join(dir, "familiar.db") });
  calendars = new SqliteCalendarStore({ path: join(dir, "familiar.db") });
  const vault = await SecretVault.open({ dataDir: dir, secretKey: "b".repeat(64) });
  const clock = { now: () => new Date("2026-03-01T08:00:00Z") };
  const { logger } = createLogger({ level: "silent" });
  const http = new EgressGuard({ privateHostsAllowed: [new URL(radicale.url).host, feeds.host] });
  const scheduler: Pick<Scheduler, "schedule" | "cancel"> = {
    schedule: async (request) => {
      scheduled.push(request);
      return null;
    },
    cancel: async (name, key) => {
      cancelled.push(`${name}:${key}`);
      return 1;
    },
  };
  const notifier: Pick<Notifier, "propose"> = {
    propose: async (p) => {
      proposals.push(p);
      return { decision: "send" } as never;
    },
  };
  const kinds = calendarKinds({ httpFor: () => http, changed: (id, c) => service.changed(id, c) });
  connections = new Connections({ store: core, vault, clock, logger, kinds });
  serviceDeps = {
    store: calendars,
    connections,
    core,
    notifier,
    scheduler,
    pokeWatches: () => undefined,
    httpFor: () => http,
    clock,
    logger,
    intervals: { caldavMs: 900_000, feedMs: 3_600_000 },
  };
  service = new CalendarService(serviceDeps);
  person = (await core.persons.createPerson({ displayName: "Ana" })).id;
}, 60_000);

beforeEach(() => {
  scheduled = [];
  cancelled = [];
});

afterAll(async () => {
  calendars?.close();
  await core?.close();
  await Promise.all([radicale?.stop(), feeds?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

async function connectCaldav(password: string) {
  return connections.connect({ personId: person, kind: "caldav", settings: { url: radicale.url, user: radicale.user }, secret: password, capabilities: ["read", "write"], source: "person", test: true });
}

describe("calendar connections", () => {
  it("refuses settings that are not right, and an account whose password the server refuses, keeping nothing", async () => {
    const bad = await connections.connect({ personId: person, kind: "caldav", settings: { url: "ftp://x", user: "" }, secret: "pw", source: "person", test: true });
    expect(bad).toMatchObject({ ok: false });
    expect(!bad.ok && bad.problems.join(" ")).toMatch(/server URL must start with https:\/\/.*user name is needed/);
    const refused = await connectCaldav("wrong-password");
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.problems.join(" ")).not.toContain("wrong-password");
    expect(await connections.list({ personId: person })).toEqual([]);
    expect(scheduled).toEqual([]);
  });

  it("keeps a tested account with its password in the vault only, schedules its sync, and syncs it", async () => {
    const made = await connectCaldav(radicale.password);
    expect(made.ok).toBe(true);
    if (!made.ok) return;
    expect(made.test).toMatchObject({ ok: true, summary: expect.stringContaining("“Home”") });
    const id = made.connection.id;
    expect(JSON.stringify(await core.connections.getConnection(id))).not.toContain(radicale.password);
    expect(connections.secretOf(made.connection)).toBe(radicale.password);
    expect(scheduled).toEqual([
      { name: CALENDAR_SYNC_JOB, key: id, data: { connectionId: id }, timing: { kind: "every", intervalMs: 900_000 } },
      { name: CALENDAR_SYNC_JOB, key: `${id}:now`, data: { connectionId: id }, timing: { kind: "now" } },
    ]);
    expect(connections.granted(person, "caldav", "write")).toBe(true);

    const outcome = await service.sync(id);
    expect(outcome?.calendars.map((c) => c.name)).toEqual(["Home"]);
    const status = (await connections.get(id))!.status;
    expect(status).toMatchObject({ state: "ok", lastError: null });
    expect(status.lastSyncAt).toEqual(new Date("2026-03-01T08:00:00Z"));
    expect((await calendars.listCalendars(person)).map((c) => c.name)).toEqual(["Home"]);
    // The first sync is the baseline; what changes after it is recorded for the watches.
    const latest = await core.changes.latestSeq(person);
    await radicale.put(radicale.home + "home/", "checkup.ics", vcal("UID:checkup", "DTSTART:20260317T090000Z", "DTEND:20260317T100000Z", "SUMMARY:Checkup"));
    await service.sync(id);
    const changes = await core.changes.listChangesAfter({ personId: person, kind: "calendar.changed", afterSeq: latest, limit: 10 });
    expect(changes.map((c) => c.data)).toEqual([expect.objectContaining({ kind: "added", title: "Checkup", calendarName: "Home", sourceKind: "caldav" })]);

    // Two syncs at once (the repeating job and a `:now` one) run one after the other: one change, recorded once.
    const mark = await core.changes.latestSeq(person);
    await radicale.put(`${radicale.home}home/`, "lunch.ics", vcal("UID:lunch", "DTSTART:20260318T120000Z", "DTEND:20260318T130000Z", "SUMMARY:Lunch"));
    let tick = Date.parse("2026-03-01T09:00:00Z");
    const ticking = new CalendarService({ ...serviceDeps, clock: { now: () => new Date(tick++) } });
    const both = await Promise.all([ticking.sync(id), ticking.sync(id)]);
    expect(both.map((o) => o?.changes.length)).toEqual([1, 0]);
    const once = await core.changes.listChangesAfter({ personId: person, kind: "calendar.changed", afterSeq: mark, limit: 10 });
    expect(once.map((c) => (c.data as { title: string }).title)).toEqual(["Lunch"]);

    // A restart (a new process: its own calendar store and service over the same database) resumes
    // incrementally from the stored sync token: only the change comes, nothing is listed in full.
    const reopened = new SqliteCalendarStore({ path: join(dir, "familiar.db") });
    try {
      const again = new CalendarService({ ...serviceDeps, store: reopened });
      await radicale.remove(`${radicale.home}home/checkup.ics`);
      const resumed = await again.sync(id);
      expect(resumed?.calendars).toEqual([expect.objectContaining({ name: "Home", full: false, deleted: 1, error: null })]);
      expect(resumed?.changes.map((c) => `${c.kind} ${c.title}`)).toEqual(["removed Checkup"]);
    } finally {
      reopened.close();
    }

    // Withdrawing write keeps the sync; withdrawing read stops it.
    await connections.setCapabilities(person, id, ["read"]);
    expect(connections.granted(person, "caldav", "write")).toBe(false);
    expect(cancelled).toEqual([]);
    await connections.setCapabilities(person, id, []);
    expect(cancelled).toEqual([`${CALENDAR_SYNC_JOB}:${id}`]);
    expect(await service.sync(id)).toBeNull();
    expect((await calendars.listCalendars(person)).map((c) => c.name)).toEqual(["Home"]);

    // Disconnecting deletes the job, the password and the synced calendars.
    expect(await connections.disconnect(person, id)).toBe(true);
    expect(cancelled.at(-1)).toBe(`${CALENDAR_SYNC_JOB}:${id}`);
    expect(connections.secretOf(made.connection)).toBeNull();
    expect(await calendars.listCalendars(person)).toEqual([]);
    // A job still queued for it cancels itself.
    cancelled = [];
    expect(await service.sync(id)).toBeNull();
    expect(cancelled).toEqual([`${CALENDAR_SYNC_JOB}:${id}`]);
  });

  it("follows a feed (read only), and keeps its copy when it turns into a web page", async () => {
    const made = await connections.connect({ personId: person, kind: "ics", settings: { url: `${feeds.origin}/club.ics`, name: "Club" }, secret: null, source: "person", test: true });
    expect(made.ok).toBe(true);
    if (!made.ok) return;
    expect(made.connection.capabilities).toEqual(["read"]);
    const id = made.connection.id;
    expect(scheduled[0]).toMatchObject({ key: id, timing: { kind: "every", intervalMs: 3_600_000 } });
    // A feed cannot be written.
    const write = await connections.connect({ personId: person, kind: "ics", settings: { url: `${feeds.origin}/club.ics`, name: "Club" }, secret: null, capabilities: ["read", "write"], source: "person", test: false });
    expect(write.ok).toBe(false);

    await service.sync(id);
    expect((await connections.get(id))!.status.state).toBe("ok");
    feeds.set("/club.ics", { body: "<!doctype html><html><body>Moved to our new site</body></html>", contentType: "text/html" });
    await service.sync(id);
    const status = (await connections.get(id))!.status;
    expect(status.state).toBe("error");
    expect(status.lastError).toMatch(/web page|not iCalendar|HTML/i);
    const kept = await calendars.listCalendars(person);
    expect(kept.map((c) => c.name)).toEqual(["Club"]);
    await connections.disconnect(person, id);
    expect(await calendars.listCalendars(person)).toEqual([]);
  });

  it("answers /connect calendar (and /connect feed) with a one-time link whose form tests the account before keeping it", async () => {
    const registry = new CommandRegistry();
    const clock = { now: () => new Date("2026-03-01T08:00:00Z") };
    const desk = new ConnectDesk({ connections, clock, publicUrl: () => "https://familiar.example/", outbound: new Outbound({ store: core, clock, wake: () => undefined }) });
    registerConnectCommands(registry, { desk, connections });
    const ana = (await core.persons.getPerson(person))!;
    const run = (args: string) => registry.run("connect", { person: ana, args, channel: "local", accountId: "ana" });
    const offered = await run("calendar");
    expect(offered.text).toContain("To connect Calendar (CalDAV)");
    const token = /https:\/\/familiar\.example\/connect\/([A-Za-z0-9_-]+)/.exec(offered.text)?.[1];
    expect(token).toBeDefined();
    expect(desk.peek(token!)?.kind.kind).toBe("caldav");
    expect((await run("feed")).text).toContain("To connect Calendar feed (iCalendar URL)");
    expect((await run("")).text).toMatch(/\/connect calendar or \/connect feed/);
    // The form's values: a wrong password is tested and refused (the link stays usable), the right one is kept.
    const wrong = await desk.submit(token!, { url: radicale.url, user: radicale.user, password: "not-it" }, ["read"]);
    expect(wrong.ok).toBe(false);
    const kept = await desk.submit(token!, { url: radicale.url, user: radicale.user, password: radicale.password }, ["read"]);
    expect(kept).toMatchObject({ ok: true, connection: { kind: "caldav", capabilities: ["read"] } });
    if (kept.ok) {
      expect(connections.secretOf(kept.connection)).toBe(radicale.password);
      await connections.disconnect(person, kept.connection.id);
    }
  });
});
