/**
 * Two processes on one store never sync one calendar account at once. Each "process" here has what
 * a second Familiar process on the same DATA_DIR would have: its own connection to the SQLite file
 * holding the calendar store, its own Agenda (the embedded SQLite backend, on one shared job file,
 * both polling) running the `calendar.sync` jobs through the job catalogue, and its own
 * CalendarService. The account's repeating job and a `:now` one are separate Agenda jobs, each
 * locked on its own, so Agenda alone would let two processes run them at once; the sync lease in
 * the calendar store is what keeps them apart. Real Radicale; the HTTP of each process is recorded,
 * and can be held at a gate to keep a sync in flight.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calendarKinds } from "../../../connectors/calendar/kinds.js";
import { CalendarService, CALENDAR_SYNC_JOB } from "../../../connectors/calendar/service.js";
import { SqliteCalendarStore } from "../../../connectors/calendar/sqlite-store.js";
import type { CalendarHttp } from "../../../connectors/calendar/http.js";
import { Connections } from "../../../core/connections/index.js";
import { EgressGuard } from "../../../core/egress/index.js";
import type { PersonId } from "../../../core/ids.js";
import { createLogger } from "../../../core/log/index.js";
import { SecretVault } from "../../../core/secrets/index.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import { registerJobs } from "../../../jobs/index.js";
import { createEmbeddedScheduler, type AgendaScheduler } from "../../../jobs/agenda/index.js";
import { sleep, until } from "../../helpers/e2e.js";
import { startRadicale, type RadicaleServer } from "../../helpers/radicale.js";

interface Worker {
  name: string;
  calendars: SqliteCalendarStore;
  scheduler: AgendaScheduler;
  service: CalendarService;
}

let radicale: RadicaleServer;
let dir: string;
let core: SqliteStore;
let connections: Connections;
let person: PersonId;
const workers: Worker[] = [];
/** Every request each process sent, as `<process> <METHOD> <path>[ <report>]`, in order. */
const sent: string[] = [];
/** Requests in flight per process, and whether two processes ever had one in flight at once. */
const inFlight = new Map<string, number>();
let overlapped = false;
/** While set, every calendar-multiget waits for it (a sync held in flight after it listed the changes). */
let gate: Promise<void> | null = null;

const vcal = (...lines: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", "DTSTAMP:20260101T000000Z", ...lines, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

function recordingHttp(name: string, guard: EgressGuard): CalendarHttp {
  return {
    async request(url, init) {
      const report = init.body?.includes("sync-collection") ? " sync-collection" : init.body?.includes("calendar-multiget") ? " multiget" : "";
      sent.push(`${name} ${init.method ?? "GET"} ${new URL(url).pathname}${report}`);
      inFlight.set(name, (inFlight.get(name) ?? 0) + 1);
      if ([...inFlight].filter(([, n]) => n > 0).length > 1) overlapped = true;
      try {
        if (gate !== null && report === " multiget") await gate;
        return await guard.request(url, init);
      } finally {
        inFlight.set(name, inFlight.get(name)! - 1);
      }
    },
  };
}

beforeAll(async () => {
  radicale = await startRadicale();
  const home = await radicale.makeCalendar("home", "Home");
  await radicale.put(home, "dentist.ics", vcal("UID:dentist", "DTSTART:20260310T090000Z", "DTEND:20260310T100000Z", "SUMMARY:Dentist"));
  dir = mkdtempSync(join(tmpdir(), "familiar-calendar-lease-"));
  core = openSqliteStore({ path: join(dir, "familiar.db") });
  const vault = await SecretVault.open({ dataDir: dir, secretKey: "c".repeat(64) });
  const clock = { now: () => new Date() };
  const { logger } = createLogger({ level: "silent" });
  const guard = new EgressGuard({ privateHostsAllowed: [new URL(radicale.url).host] });
  connections = new Connections({ store: core, vault, clock, logger, kinds: calendarKinds({ httpFor: () => guard, changed: async () => undefined }) });
  person = (await core.persons.createPerson({ displayName: "Ana" })).id;
  for (const name of ["p1", "p2"]) {
    const calendars = new SqliteCalendarStore({ path: join(dir, "familiar.db") });
    const scheduler = await createEmbeddedScheduler({ path: join(dir, "jobs.db"), processEveryMs: 100, workerName: name, logger });
    const service = new CalendarService({
      store: calendars,
      connections,
      core,
      notifier: { propose: async () => ({ decision: "send" }) as never },
      scheduler,
      pokeWatches: () => undefined,
      httpFor: () => recordingHttp(name, guard),
      clock,
      logger,
      intervals: { caldavMs: 3_600_000, feedMs: 3_600_000 },
      owner: name,
    });
    registerJobs(scheduler, { expireApprovals: async () => 0, sendDigest: async () => 0, syncCalendar: (id) => service.sync(id) }, { logger, now: () => new Date() });
    await scheduler.start();
    workers.push({ name, calendars, scheduler, service });
  }
}, 60_000);

afterAll(async () => {
  gate = null;
  for (const w of workers) {
    await w.scheduler.drain(5_000);
    w.calendars.close();
  }
  await core?.close();
  await radicale?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const titles = async (w: Worker) => (await w.calendars.itemsInWindow(person, Date.parse("2026-03-01T00:00:00Z"), Date.parse("2026-04-01T00:00:00Z"))).flatMap((i) => i.series.map((s) => s.master?.details.title));

describe("calendar sync across processes on one store", () => {
  it("never syncs one account in two processes at once, and the sync asked for meanwhile still happens", async () => {
    const made = await connections.connect({ personId: person, kind: "caldav", settings: { url: radicale.url, user: radicale.user }, secret: radicale.password, capabilities: ["read"], source: "person", test: false });
    expect(made.ok).toBe(true);
    if (!made.ok) return;
    const id = made.connection.id;
    let open!: () => void;
    gate = new Promise<void>((resolve) => (open = resolve));
    // The `:now` job, picked up by whichever process polls first: it lists the calendar, then its
    // fetch of the events waits at the gate.
    await workers[0]!.scheduler.schedule({ name: CALENDAR_SYNC_JOB, key: `${id}:now`, data: { connectionId: id }, timing: { kind: "now" } });
    const first = await until(() => sent.find((s) => s.endsWith(" multiget")), "the first sync's fetch of the events", 15_000);
    const holder = workers.find((w) => first.startsWith(`${w.name} `))!;
    const other = workers.find((w) => w !== holder)!;
    // Meanwhile an event is added (after the listing: this sync will not see it), and the other
    // process runs the account's sync: it finds the lease held.
    await radicale.put(`${radicale.home}home/`, "lunch.ics", vcal("UID:lunch", "DTSTART:20260318T120000Z", "DTEND:20260318T130000Z", "SUMMARY:Lunch"));
    let skipped: unknown = "running";
    other.service.sync(id).then(
      (outcome) => (skipped = outcome),
      (error: unknown) => (skipped = error),
    );
    await until(() => skipped !== "running" || sent.some((s) => s.startsWith(`${other.name} `)), "the other process's sync to return or send a request");
    expect(sent.filter((s) => s.startsWith(`${other.name} `))).toEqual([]);
    expect(skipped).toBeNull();
    // So does its Agenda: the account's repeating job, due now, is a separate job Agenda lets it run.
    await other.scheduler.schedule({ name: CALENDAR_SYNC_JOB, key: id, data: { connectionId: id }, timing: { kind: "every", intervalMs: 3_600_000 } });
    const ran = Date.now() + 15_000;
    while (((await other.scheduler.nextRunAt(CALENDAR_SYNC_JOB, id))?.getTime() ?? 0) < Date.now() + 1_800_000 && Date.now() < ran) await sleep(50);
    expect((await other.scheduler.nextRunAt(CALENDAR_SYNC_JOB, id))!.getTime()).toBeGreaterThan(Date.now() + 1_800_000);
    expect(sent.filter((s) => s.startsWith(`${other.name} `))).toEqual([]);
    open();
    gate = null;
    // The holder syncs once more after its first sync (another was asked for), and that one sees the lunch.
    const seen = async () => (await titles(holder)).sort().join(",");
    const end = Date.now() + 20_000;
    while ((await seen()) !== "Dentist,Lunch" && Date.now() < end) await sleep(50);
    expect(await seen()).toBe("Dentist,Lunch");
    expect(sent.filter((s) => s.endsWith(" sync-collection")).map((s) => s.split(" ")[0])).toEqual([holder.name, holder.name]);
    expect(await titles(other)).toEqual(expect.arrayContaining(["Dentist", "Lunch"]));
    expect(overlapped).toBe(false);
    // Once free, the other process syncs the account itself.
    const before = sent.length;
    const later = await other.service.sync(id);
    expect(later?.calendars).toEqual([expect.objectContaining({ name: "Home", error: null })]);
    expect(sent.slice(before).every((s) => s.startsWith(`${other.name} `))).toBe(true);
    expect(overlapped).toBe(false);
  }, 40_000);
});
