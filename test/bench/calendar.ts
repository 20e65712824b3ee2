/**
 * `npm run bench -- calendar`: the calendar connector's figures.
 *
 * - `calendar-sync`: a first sync of 5,000 events in five calendars from a real Radicale (discovery, sync-collection,
 *   calendar-multiget in batches, parsing, SQLite writes), then an unchanged sync (one PROPFIND) and
 *   an incremental one after 50 changes; the same 5,000 events as one iCalendar feed.
 * - `calendar-expand`: one year of 200 repeating events (weekly, daily, monthly, yearly; Berlin, New
 *   York, Auckland, all-day) expanded in the reader's zone.
 * - `calendar-list`: the agenda behind `calendar_list` for a month, over the 5,000 stored events
 *   (p50/p99 of 50 runs), and the same with the lines the model reads.
 *
 * The events are written straight into Radicale's storage folder (one file per event, as Radicale
 * keeps them) and Radicale reads them once before timing, so the bench measures Familiar's sync, not
 * 5,000 uploads or Radicale building its caches.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { agendaFor } from "../../connectors/calendar/agenda.js";
import { expandSeries } from "../../connectors/calendar/ical/expand.js";
import { parseICalendar } from "../../connectors/calendar/ical/parse.js";
import { vtimezoneFor } from "../../connectors/calendar/ical/vtimezone.js";
import { occurrenceLine } from "../../connectors/calendar/present.js";
import { SqliteCalendarStore } from "../../connectors/calendar/sqlite-store.js";
import { eventIdOf } from "../../connectors/calendar/store.js";
import { syncCaldavSource, syncFeedSource } from "../../connectors/calendar/sync.js";
import { asId } from "../../core/ids.js";
import { EgressGuard } from "../../core/egress/guard.js";
import { startIcsServer } from "../helpers/ics-server.js";
import { startRadicale } from "../helpers/radicale.js";
import { round, spread } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

const EVENTS = 5_000;
const CALENDARS = 5;
const ZONES = ["Europe/Berlin", "America/New_York", "Pacific/Auckland", "Asia/Tokyo"];

/** Event `i`: mostly single events over a year, every tenth repeating. */
function vevent(i: number): string[] {
  const zone = ZONES[i % ZONES.length]!;
  const day = new Date(Date.UTC(2026, 0, 1) + (i % 365) * 86_400_000).toISOString().slice(0, 10).replace(/-/g, "");
  const hour = String(8 + (i % 10)).padStart(2, "0");
  const lines = ["BEGIN:VEVENT", `UID:bench-${i}@familiar`, "DTSTAMP:20260101T000000Z", `SUMMARY:Event ${i}`, `LOCATION:Room ${i % 40}`];
  if (i % 25 === 0) lines.push(`DTSTART;VALUE=DATE:${day}`, "DURATION:P1D");
  else lines.push(`DTSTART;TZID=${zone}:${day}T${hour}0000`, `DTEND;TZID=${zone}:${day}T${hour}4500`);
  if (i % 10 === 0) lines.push(["RRULE:FREQ=WEEKLY", "RRULE:FREQ=DAILY;INTERVAL=3", "RRULE:FREQ=MONTHLY;BYDAY=2TU", "RRULE:FREQ=YEARLY"][(i / 10) % 4]!);
  if (i % 7 === 0) lines.push("ATTENDEE:mailto:ann@example.org", "ATTENDEE:mailto:bo@example.org");
  lines.push("END:VEVENT");
  return lines;
}

/** Each zone's VTIMEZONE, as clients write it beside every TZID (RFC 5545 §3.6.5). */
const VTIMEZONES = new Map(ZONES.map((zone) => [zone, vtimezoneFor(zone, 2026)]));

/** A VCALENDAR of `events` with the VTIMEZONE of every zone they name. */
function wrap(events: string[][]): string {
  const named = ZONES.filter((zone) => events.some((e) => e.some((l) => l.includes(`;TZID=${zone}:`))));
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//bench//EN", ...named.map((zone) => VTIMEZONES.get(zone)!.replace(/\r\n$/, "")), ...events.flat(), "END:VCALENDAR", ""].join("\r\n");
}

export async function bench(emit: Emit): Promise<void> {
  const person = asId("person", "per_bench");
  const radicale = await startRadicale({ inMemory: true });
  const feeds = await startIcsServer();
  const store = new SqliteCalendarStore({ path: ":memory:" });
  const clock = { now: () => new Date("2026-01-15T08:00:00Z") };
  const setupStart = performance.now();
  try {
    // Five calendars of 1,000 events (Radicale's listing time grows faster than its collection size).
    const calendarUrls: string[] = [];
    for (let c = 0; c < CALENDARS; c++) {
      const url = await radicale.makeCalendar(`bench${c}`, `Bench ${c}`);
      calendarUrls.push(url);
      const folder = join(radicale.storage, "collection-root", radicale.user, `bench${c}`);
      mkdirSync(folder, { recursive: true });
      for (let i = c; i < EVENTS; i += CALENDARS) writeFileSync(join(folder, `bench-${i}.ics`), wrap([vevent(i)]));
      // A real server has its caches built long before Familiar connects: let Radicale build its
      // own (item ETags, the collection's sync token) once, untimed.
      await radicale.list(url);
    }
    const deps = { store, http: new EgressGuard({ privateHostsAllowed: [new URL(radicale.url).host, feeds.host], maxBytes: 64 * 1024 * 1024 }), clock };
    const credentials = { serverUrl: radicale.url, username: radicale.user, password: radicale.password };

    const setupMs = performance.now() - setupStart;
    let t0 = performance.now();
    const first = await syncCaldavSource(deps, person, "conn_bench", credentials);
    const firstMs = performance.now() - t0;
    t0 = performance.now();
    await syncCaldavSource(deps, person, "conn_bench", credentials);
    const unchangedMs = performance.now() - t0;
    for (let i = 0; i < 50; i++) {
      const n = i * 97;
      await radicale.put(calendarUrls[n % CALENDARS]!, `bench-${n}.ics`, wrap([vevent(n).map((l) => (l.startsWith("SUMMARY:") ? `${l} (renamed)` : l))]));
    }
    t0 = performance.now();
    const incremental = await syncCaldavSource(deps, person, "conn_bench", credentials);
    const incrementalMs = performance.now() - t0;
    feeds.set("/bench.ics", { body: wrap(Array.from({ length: EVENTS }, (_, i) => vevent(i))) });
    t0 = performance.now();
    await syncFeedSource(deps, person, "conn_feed", `${feeds.origin}/bench.ics`);
    const feedMs = performance.now() - t0;
    emit({
      bench: "calendar-sync",
      events: EVENTS,
      calendars: CALENDARS,
      radicale_setup_ms: round(setupMs),
      stored: first.calendars.reduce((n, c) => n + c.stored, 0),
      first_sync_ms: round(firstMs),
      first_sync_events_per_s: round(EVENTS / (firstMs / 1000)),
      unchanged_sync_ms: round(unchangedMs),
      incremental_50_changes_ms: round(incrementalMs),
      incremental_changes_reported: incremental.changes.length,
      feed_5000_events_ms: round(feedMs),
    });

    benchExpansion(emit);

    const zone = "Europe/Berlin";
    const month = { fromMs: Date.parse("2026-03-01T00:00:00+01:00"), toMs: Date.parse("2026-04-01T00:00:00+02:00") };
    const agendaTimes: number[] = [];
    const listTimes: number[] = [];
    let occurrences = 0;
    for (let run = 0; run < 50; run++) {
      t0 = performance.now();
      const agenda = await agendaFor(store, person, month, zone, { maxPerSeries: 201 });
      agendaTimes.push(performance.now() - t0);
      const lines = agenda.entries.slice(0, 200).map((e) => occurrenceLine(e, zone, eventIdOf(e.calendarId, e.uid)));
      listTimes.push(performance.now() - t0);
      occurrences = agenda.entries.length;
      if (lines.length === 0) throw new Error("no occurrences listed");
    }
    emit({ bench: "calendar-list", stored_events: EVENTS * 2, window: "one month", occurrences, ...spread(agendaTimes, "_ms", "agenda_"), ...spread(listTimes, "_ms", "list_") });
  } finally {
    store.close();
    await Promise.all([radicale.stop(), feeds.close()]);
  }
}

/** One year of 200 repeating events, expanded in the reader's zone. */
function benchExpansion(emit: Emit): void {
  const rules = ["FREQ=WEEKLY", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=DAILY", "FREQ=MONTHLY;BYDAY=-1FR", "FREQ=YEARLY", "FREQ=DAILY;INTERVAL=2;COUNT=200"];
  const series = parseICalendar(
    wrap(
      Array.from({ length: 200 }, (_, i) => {
        const zone = ZONES[i % ZONES.length]!;
        const start = i % 9 === 0 ? ["DTSTART;VALUE=DATE:20250310"] : [`DTSTART;TZID=${zone}:20250310T${String(7 + (i % 12)).padStart(2, "0")}3000`, "DURATION:PT45M"];
        return ["BEGIN:VEVENT", `UID:rep-${i}`, "DTSTAMP:20260101T000000Z", `SUMMARY:Repeating ${i}`, ...start, `RRULE:${rules[i % rules.length]}`, ...(i % 5 === 0 ? ["EXDATE;TZID=Europe/Berlin:20260316T073000"] : []), "END:VEVENT"];
      }),
    ),
  ).series;
  const year = { fromMs: Date.parse("2026-01-01T00:00:00Z"), toMs: Date.parse("2027-01-01T00:00:00Z") };
  const times: number[] = [];
  let count = 0;
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now();
    count = 0;
    for (const s of series) count += expandSeries(s, { ...year, zone: "America/Los_Angeles", maxOccurrences: 1_000 }).occurrences.length;
    times.push(performance.now() - t0);
  }
  emit({ bench: "calendar-expand", series: series.length, window: "one year", occurrences: count, ...spread(times, "_ms"), occurrences_per_s: round(count / (Math.min(...times) / 1000)) });
}
