/**
 * Occurrences of an event series within a window — always computed here, never asked of the server
 * (CalDAV servers may ignore server-side expansion).
 *
 * The RRULE is iterated by ical.js on the wall clock of the event's own zone, and each wall time is
 * then turned into an instant by `zones.ts`, so a weekly 09:00 stays at 09:00 local on both sides of
 * a clock change (field case C1). UNTIL, EXDATE, RDATE and RECURRENCE-ID are matched here as instants
 * (or as dates for all-day events), never by ical.js's floating-time comparisons. All-day events stay
 * dates; only to place them in a window are they read as the reader's local days (field case C2).
 *
 * Bounded work: iteration stops at the window's end; a rule with no COUNT that started long before
 * the window is fast-forwarded by whole periods; every expansion stops after `maxSteps` rule steps
 * and `maxOccurrences` occurrences per series (then `truncated` is set).
 */
import ICAL from "ical.js";
import type { CalendarSeries, EventComponent, EventTime, Occurrence } from "../model.js";
import { addDays, daysBetween, formatWall, instantToWall, parseWall, startOfDate, wallAsUtcMs, wallFromUtcMs, wallToInstant, zoneOf, type Wall, type Zone } from "./zones.js";

/** Settings of one expansion. Instants are ms since the epoch; the window is `[fromMs, toMs)`. */
export interface ExpandOptions {
  fromMs: number;
  toMs: number;
  /** The reader's IANA zone: all-day dates and floating times are read in it. */
  zone: string;
  /** Occurrences kept per series at most (default 1,000). */
  maxOccurrences?: number;
  /** RRULE steps taken per series at most (default 50,000). */
  maxSteps?: number;
}

/** The occurrences of one series in a window, in start order. */
export interface Expansion {
  occurrences: Occurrence[];
  /** The series had more occurrences (or steps) than the limits allowed; the first ones are kept. */
  truncated: boolean;
}

const DAY_MS = 86_400_000;
const DEFAULT_MAX_OCCURRENCES = 1_000;
const DEFAULT_MAX_STEPS = 50_000;
/** Widest UTC offsets in use (−12:00 … +14:00), for bounds that do not know the reader's zone. */
const ZONE_MARGIN_MS = 14 * 3_600_000;
const PERIOD_SECONDS: Partial<Record<string, number>> = { SECONDLY: 1, MINUTELY: 60, HOURLY: 3_600, DAILY: 86_400, WEEKLY: 604_800 };

const vtimezoneCache = new Map<string, ICAL.Timezone>();

/** Reads EventTimes of one series: its VTIMEZONEs, the reader's zone. */
export class SeriesClock {
  private readonly vtimezones = new Map<string, ICAL.Timezone>();
  private readonly reader: Zone;
  /** Instants already computed, by time object (an occurrence's start is asked for several times). */
  private readonly known = new WeakMap<EventTime, number>();

  constructor(series: Pick<CalendarSeries, "timezones">, readerZone: string) {
    this.reader = { kind: "iana", name: readerZone };
    for (const [tzid, text] of Object.entries(series.timezones)) {
      let tz = vtimezoneCache.get(text);
      if (tz === undefined) {
        tz = new ICAL.Timezone(new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\r\n${text}\r\nEND:VCALENDAR`) as never).getFirstSubcomponent("vtimezone")!);
        if (vtimezoneCache.size > 500) vtimezoneCache.clear();
        vtimezoneCache.set(text, tz);
      }
      this.vtimezones.set(tzid, tz);
    }
  }

  /** The zone a time is written in (the reader's for dates and floating times, UTC for instants). */
  zoneOf(time: EventTime): Zone {
    if (time.kind === "zoned") return zoneOf(time.tzid, this.vtimezones) ?? this.reader;
    if (time.kind === "utc") return { kind: "iana", name: "UTC" };
    return this.reader;
  }

  /** The instant a time starts at (a date: its local midnight for the reader). */
  ms(time: EventTime): number {
    const known = this.known.get(time);
    if (known !== undefined) return known;
    let ms: number;
    switch (time.kind) {
      case "date":
        ms = startOfDate(time.date, this.reader.kind === "iana" ? this.reader.name : "UTC");
        break;
      case "utc":
        ms = Date.parse(time.instant);
        break;
      default:
        ms = wallToInstant(parseWall(time.wall), this.zoneOf(time));
    }
    this.known.set(time, ms);
    return ms;
  }

  /** The identity of an occurrence that started (originally) at `time`: a date, or an instant. */
  key(time: EventTime, allDay: boolean): string {
    if (allDay) return `d:${time.kind === "date" ? time.date : time.kind === "utc" ? time.instant.slice(0, 10) : time.wall.slice(0, 10)}`;
    return `t:${new Date(this.ms(time)).toISOString()}`;
  }
}

/** Expands one series into its occurrences overlapping `[fromMs, toMs)`. */
export function expandSeries(series: CalendarSeries, options: ExpandOptions): Expansion {
  const clock = new SeriesClock(series, options.zone);
  const maxOccurrences = options.maxOccurrences ?? DEFAULT_MAX_OCCURRENCES;
  const out: Occurrence[] = [];
  let truncated = false;
  const master = series.master;
  const allDay = master?.start.kind === "date";
  const repeats = series.rrule !== null || series.rdates.length > 0;
  const overrides = new Map(series.overrides.map((o) => [clock.key(o.recurrenceId, master ? allDay : o.start.kind === "date"), o]));
  if (master !== null && master.details.status !== "CANCELLED") {
    const excluded = new Set(series.exdates.map((t) => clock.key(t, allDay)));
    const excludedDates = new Set(series.exdates.flatMap((t) => (t.kind === "date" && !allDay ? [t.date] : [])));
    const seen = new Set<string>();
    const starts = masterStarts(series, master, clock, { ...options, maxOccurrences });
    truncated = starts.truncated;
    for (const start of starts.times) {
      const key = clock.key(start, allDay);
      if (seen.has(key)) continue;
      seen.add(key);
      if (excluded.has(key) || overrides.has(key)) continue;
      if (excludedDates.size > 0 && start.kind !== "date" && excludedDates.has(formatWall(instantToWall(clock.ms(start), clock.zoneOf(start))).slice(0, 10))) continue;
      const occurrence = build(series, master, start, repeats ? key : null, clock, { repeats, overridden: false, originalStart: start });
      if (overlaps(occurrence, options)) out.push(occurrence);
    }
  }
  for (const [key, override] of overrides) {
    if (override.details.status === "CANCELLED") continue;
    const occurrence = build(series, override, override.start, key, clock, { repeats: repeats || master === null, overridden: true, originalStart: override.recurrenceId });
    if (overlaps(occurrence, options)) out.push(occurrence);
  }
  out.sort((a, b) => a.startMs - b.startMs || a.details.title.localeCompare(b.details.title));
  if (out.length > maxOccurrences) {
    out.length = maxOccurrences;
    truncated = true;
  }
  return { occurrences: out, truncated };
}

function overlaps(o: Pick<Occurrence, "startMs" | "endMs">, window: { fromMs: number; toMs: number }): boolean {
  if (o.endMs <= o.startMs) return o.startMs >= window.fromMs && o.startMs < window.toMs;
  return o.startMs < window.toMs && o.endMs > window.fromMs;
}

/** Start times of the master's occurrences that may overlap the window: DTSTART, RRULE and RDATE. */
function masterStarts(series: CalendarSeries, master: EventComponent, clock: SeriesClock, options: ExpandOptions & { maxOccurrences: number }): { times: EventTime[]; truncated: boolean } {
  const times: EventTime[] = [master.start];
  let truncated = false;
  if (series.rrule !== null) {
    const rule = ruleSteps(series.rrule, master, clock, options);
    truncated = rule.truncated;
    times.push(...rule.times);
  }
  for (const rdate of series.rdates) {
    if (master.start.kind === "date" && rdate.kind !== "date") times.push({ kind: "date", date: keyDate(rdate) });
    else times.push(rdate);
  }
  return { times, truncated };
}

function keyDate(time: EventTime): string {
  return time.kind === "date" ? time.date : time.kind === "utc" ? time.instant.slice(0, 10) : time.wall.slice(0, 10);
}

/** The RRULE's occurrences from (a fast-forwarded) DTSTART to the window's end. */
function ruleSteps(rrule: string, master: EventComponent, clock: SeriesClock, options: ExpandOptions & { maxOccurrences: number }): { times: EventTime[]; truncated: boolean } {
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const recur = ICAL.Recur.fromString(rrule);
  const start = master.start;
  const allDay = start.kind === "date";
  const zone = clock.zoneOf(start);
  const startWall = allDay ? parseWall(start.date) : start.kind === "utc" ? parseWall(start.instant.slice(0, 19)) : parseWall(start.wall);
  const durationMs = Math.max(0, clock.ms(master.end) - clock.ms(start));
  if (recur.until) recur.until = floatingUntil(recur.until, allDay, zone);
  const first = fastForward(recur, startWall, clock.ms(start), options.fromMs - durationMs);
  if (first === null) return { times: [], truncated: false };
  const iterator = boundedIterator(recur, ICAL.Time.fromData({ ...first, isDate: allDay }), { left: maxSteps });
  const times: EventTime[] = [];
  for (;;) {
    let next: ICAL.Time | null;
    try {
      next = iterator.next();
    } catch {
      // Out of steps, or ical.js gave up on the rule: what was found so far is kept.
      return { times, truncated: true };
    }
    if (!next) break;
    const wall: Wall = { year: next.year, month: next.month, day: next.day, hour: next.hour, minute: next.minute, second: next.second };
    const time: EventTime = allDay
      ? { kind: "date", date: formatWall(wall).slice(0, 10) }
      : start.kind === "utc"
        ? { kind: "utc", instant: `${formatWall(wall)}.000Z` }
        : start.kind === "zoned"
          ? { kind: "zoned", wall: formatWall(wall), tzid: start.tzid }
          : { kind: "floating", wall: formatWall(wall) };
    const ms = clock.ms(time);
    if (ms >= options.toMs) break;
    // Ends before the window (all-day lengths vary by an hour across a clock change).
    if (ms + durationMs + (allDay ? 7_200_000 : 0) <= options.fromMs && !(durationMs === 0 && ms === options.fromMs)) continue;
    // Rule times come in order: past the limit, the rest are later ones.
    if (times.length >= options.maxOccurrences) return { times, truncated: true };
    times.push(time);
  }
  return { times, truncated: false };
}

/** Thrown inside ical.js's iteration when a rule has used up its steps. */
class StepsExhausted extends Error {}

/**
 * An ical.js iterator that throws `StepsExhausted` once `budget.left` candidate checks are used up
 * (the budget may be shared by several iterators). ical.js
 * searches for the next match without a limit for SECONDLY to WEEKLY rules, so an impossible rule
 * (`FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30`) or a very sparse one would otherwise never return: each
 * candidate passes through `check_contracting_rules`, which is counted here on this one instance.
 */
export function boundedIterator(recur: ICAL.Recur, start: ICAL.Time, budget: { left: number }): ICAL.RecurIterator {
  const iterator = recur.iterator(start);
  const check = iterator.check_contracting_rules.bind(iterator);
  iterator.check_contracting_rules = () => {
    if (--budget.left < 0) throw new StepsExhausted("out of steps");
    return check();
  };
  return iterator;
}

/**
 * Where to start iterating a rule whose DTSTART lies long before `needFromMs`: whole periods
 * (INTERVAL × FREQ, for SECONDLY to WEEKLY) are skipped, ending a period and a margin before it,
 * so the skipped start — which ical.js yields as an occurrence — ends before the window.
 * A rule with COUNT is skipped only when it has no BY parts (then every period is one occurrence,
 * and COUNT is lowered by the periods skipped). Returns null when a COUNT ends before the window.
 * The rule object is changed in place (COUNT).
 */
function fastForward(recur: ICAL.Recur, startWall: Wall, startMs: number, needFromMs: number): Wall | null {
  const period = PERIOD_SECONDS[recur.freq];
  if (period === undefined) return startWall;
  const byCount = recur.isByCount();
  if (byCount && Object.keys(recur.parts).length > 0) return startWall;
  const periodMs = period * 1000 * Math.max(1, recur.interval || 1);
  // Wall-clock steps and instants drift apart by the zone's offset changes (an hour; a day where a
  // country moved across the date line): keep that much room, less for second-by-second rules.
  const margin = recur.freq === "SECONDLY" ? 3 * 3_600_000 : 26 * 3_600_000;
  const skip = Math.floor((needFromMs - periodMs - margin - startMs) / periodMs);
  if (skip <= 2) return startWall;
  if (byCount) {
    if (recur.count === null || recur.count <= skip) return null;
    recur.count -= skip;
  }
  return wallFromUtcMs(wallAsUtcMs(startWall) + skip * periodMs);
}

/** UNTIL as a floating time on the series' own wall clock (or a date for an all-day series). */
function floatingUntil(until: ICAL.Time, allDay: boolean, zone: Zone): ICAL.Time {
  if (allDay) return ICAL.Time.fromData({ year: until.year, month: until.month, day: until.day, isDate: true });
  if (until.isDate) return ICAL.Time.fromData({ year: until.year, month: until.month, day: until.day, hour: 23, minute: 59, second: 59, isDate: false });
  if (until.zone === ICAL.Timezone.utcTimezone) {
    const wall = instantToWall(until.toUnixTime() * 1000, zone);
    return ICAL.Time.fromData({ ...wall, isDate: false });
  }
  return ICAL.Time.fromData({ year: until.year, month: until.month, day: until.day, hour: until.hour, minute: until.minute, second: until.second, isDate: false });
}

function build(
  series: CalendarSeries,
  component: EventComponent,
  start: EventTime,
  recurrenceKey: string | null,
  clock: SeriesClock,
  flags: { repeats: boolean; overridden: boolean; originalStart: EventTime },
): Occurrence {
  const base = component.start;
  const allDay = start.kind === "date";
  let end: EventTime;
  let startMs: number;
  let endMs: number;
  if (allDay) {
    const days = component.end.kind === "date" ? Math.max(1, daysBetween(keyDate(base), component.end.date)) : 1;
    end = { kind: "date", date: addDays(start.date, days) };
    startMs = clock.ms(start);
    endMs = clock.ms(end);
  } else {
    const durationMs = Math.max(0, clock.ms(component.end) - clock.ms(base));
    startMs = clock.ms(start);
    endMs = startMs + durationMs;
    end = timeLike(component.end, endMs, clock);
  }
  return {
    uid: series.uid,
    recurrenceKey,
    start,
    end,
    originalStart: flags.originalStart,
    startMs,
    endMs,
    allDay,
    details: component.details,
    rrule: series.rrule,
    repeats: flags.repeats,
    overridden: flags.overridden,
  };
}

/** An instant written in the same form (zone) as `like`. */
function timeLike(like: EventTime, ms: number, clock: SeriesClock): EventTime {
  if (like.kind === "zoned") return { kind: "zoned", wall: formatWall(instantToWall(ms, clock.zoneOf(like))), tzid: like.tzid };
  if (like.kind === "floating") return { kind: "floating", wall: formatWall(instantToWall(ms, clock.zoneOf(like))) };
  return { kind: "utc", instant: new Date(ms).toISOString() };
}

/**
 * The span a series can occupy, for a store's window pre-filter: its earliest start and its latest
 * end (null when it repeats forever). Dates and floating times are widened by the widest UTC
 * offsets, since the reader's zone is not known when the series is stored.
 */
export function seriesBounds(series: CalendarSeries): { startMs: number; endMs: number | null } {
  const clock = new SeriesClock(series, "UTC");
  const components: EventComponent[] = [...(series.master ? [series.master] : []), ...series.overrides];
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const c of components) {
    startMs = Math.min(startMs, clock.ms(c.start));
    endMs = Math.max(endMs, clock.ms(c.end));
  }
  for (const o of series.overrides) startMs = Math.min(startMs, clock.ms(o.recurrenceId));
  const master = series.master;
  if (master !== null) {
    const durationMs = Math.max(0, clock.ms(master.end) - clock.ms(master.start));
    for (const r of series.rdates) endMs = Math.max(endMs, clock.ms(r) + durationMs);
    if (series.rrule !== null) {
      const last = lastRuleEnd(series, master, durationMs);
      if (last === null) return { startMs: startMs - ZONE_MARGIN_MS, endMs: null };
      endMs = Math.max(endMs, last);
    }
  }
  return { startMs: startMs - ZONE_MARGIN_MS, endMs: endMs + ZONE_MARGIN_MS };
}

/** End of the rule's last occurrence, or null when it has none (forever, or too many to walk). */
function lastRuleEnd(series: CalendarSeries, master: EventComponent, durationMs: number): number | null {
  const recur = ICAL.Recur.fromString(series.rrule!);
  if (!recur.isFinite()) return null;
  const clock = new SeriesClock(series, "UTC");
  if (recur.until) {
    const until = recur.until;
    const ms = until.zone === ICAL.Timezone.utcTimezone ? until.toUnixTime() * 1000 : wallAsUtcMs({ year: until.year, month: until.month, day: until.day, hour: until.hour, minute: until.minute, second: until.second }) + DAY_MS;
    return ms + durationMs;
  }
  const period = PERIOD_SECONDS[recur.freq];
  if (period !== undefined && recur.count !== null && Object.keys(recur.parts).length === 0 && master.start.kind !== "date") {
    // Every period is one occurrence: the last is COUNT − 1 periods after the first, on the wall clock.
    const start = master.start;
    const wall = parseWall(start.kind === "utc" ? start.instant.slice(0, 19) : start.wall);
    const lastWall = wallFromUtcMs(wallAsUtcMs(wall) + (recur.count - 1) * period * 1000 * Math.max(1, recur.interval || 1));
    return wallToInstant(lastWall, clock.zoneOf(start)) + durationMs;
  }
  const walk = expandSeries({ ...series, overrides: [], rdates: [], exdates: [] }, { fromMs: -8.64e15, toMs: 8.64e15, zone: "UTC", maxOccurrences: 100_000, maxSteps: 100_000 });
  if (walk.truncated) return null;
  const last = walk.occurrences.at(-1);
  return last === undefined ? clock.ms(master.end) : last.startMs + durationMs;
}
