/**
 * iCalendar text → event series (`CalendarSeries`), with ical.js.
 *
 * One bad item never costs the rest: when ical.js refuses the whole text (a syntax error anywhere
 * fails `ICAL.parse`), the text is cut into its VTIMEZONE and VEVENT blocks and each is parsed on its
 * own; a VEVENT that still fails, has no DTSTART, names an unknown TZID or carries an invalid RRULE
 * becomes an `ItemError` and is skipped. Text that is not iCalendar at all (an HTML login page, an
 * empty body) is one error for the whole input.
 */
import { createHash } from "node:crypto";
import ICAL from "ical.js";
import type { CalendarSeries, EventComponent, EventDetails, EventOverride, EventTime, ItemError } from "../model.js";
import { boundedIterator } from "./expand.js";
import { formatWall, zoneOf } from "./zones.js";

/** What parsing one iCalendar text gave: the series found and the items that were skipped. */
export interface ParsedCalendar {
  series: CalendarSeries[];
  errors: ItemError[];
  /** The calendar's own name (X-WR-CALNAME), when it has one. */
  name: string | null;
}

/** The text is not iCalendar at all (nothing in it can be read). */
export class NotICalendarError extends Error {
  readonly code = "not_icalendar";
  constructor(message: string) {
    super(message);
    this.name = "NotICalendarError";
  }
}

/** Longest text kept of a title or location, and of a description (characters). */
const MAX_TITLE = 500;
const MAX_DESCRIPTION = 4_000;

/**
 * Parses iCalendar text (one calendar object or a whole feed).
 *
 * @throws NotICalendarError when the text is not iCalendar (HTML, JSON, empty, no BEGIN:VCALENDAR)
 */
export function parseICalendar(text: string): ParsedCalendar {
  const body = text.replace(/^\uFEFF/, "").trimStart();
  if (!/^BEGIN:VCALENDAR/i.test(body)) {
    const looksHtml = /^<(!doctype|html|head|body|\?xml)/i.test(body);
    throw new NotICalendarError(
      body === "" ? "the calendar data is empty" : looksHtml ? "the server answered with a web page (HTML), not an iCalendar file" : "this is not an iCalendar file (it does not start with BEGIN:VCALENDAR)",
    );
  }
  let roots: ICAL.Component[];
  const errors: ItemError[] = [];
  try {
    const jcal = ICAL.parse(body) as unknown;
    const list = Array.isArray(jcal) && Array.isArray(jcal[0]) ? (jcal as unknown[]) : [jcal];
    roots = list.map((j) => new ICAL.Component(j as never));
  } catch {
    roots = [parseBlockByBlock(body, errors)];
  }
  const vtimezones = new Map<string, ICAL.Timezone>();
  const vtimezoneText = new Map<string, string>();
  for (const root of roots) {
    for (const vtz of root.getAllSubcomponents("vtimezone")) {
      try {
        const tz = new ICAL.Timezone(vtz);
        if (tz.tzid) {
          vtimezones.set(tz.tzid, tz);
          vtimezoneText.set(tz.tzid, vtz.toString());
        }
      } catch (error) {
        errors.push({ item: "VTIMEZONE", message: `a VTIMEZONE could not be read: ${messageOf(error)}` });
      }
    }
  }
  const byUid = new Map<string, { master: ICAL.Component | null; overrides: ICAL.Component[] }>();
  for (const root of roots) {
    for (const vevent of root.getAllSubcomponents("vevent")) {
      const uid = textProp(vevent, "uid") ?? syntheticUid(vevent);
      const entry = byUid.get(uid) ?? { master: null, overrides: [] };
      if (vevent.hasProperty("recurrence-id")) entry.overrides.push(vevent);
      else if (entry.master === null || sequenceOf(vevent) >= sequenceOf(entry.master)) entry.master = vevent;
      byUid.set(uid, entry);
    }
  }
  const series: CalendarSeries[] = [];
  const probeSteps = { left: TEXT_PROBE_STEPS };
  for (const [uid, entry] of byUid) {
    const result = buildSeries(uid, entry, vtimezones, vtimezoneText, probeSteps);
    errors.push(...result.errors);
    if (result.series !== null) series.push(result.series);
  }
  const name = roots.map((r) => textProp(r, "x-wr-calname")).find((n) => n !== null) ?? null;
  return { series, errors, name };
}

/** Cuts unparseable text into VTIMEZONE / VEVENT blocks and parses each alone (see the file comment). */
function parseBlockByBlock(body: string, errors: ItemError[]): ICAL.Component {
  const root = new ICAL.Component(["vcalendar", [], []]);
  const lines = body.replace(/\r?\n[ \t]/g, "").split(/\r?\n/);
  let block: string[] | null = null;
  let kind = "";
  let count = 0;
  for (const line of lines) {
    const begin = /^BEGIN:(VEVENT|VTIMEZONE)\s*$/i.exec(line);
    if (block === null && begin !== null) {
      block = [line];
      kind = begin[1]!.toUpperCase();
      continue;
    }
    if (block === null) continue;
    block.push(line);
    if (new RegExp(`^END:${kind}\\s*$`, "i").test(line)) {
      if (kind === "VEVENT") count++;
      const text = `BEGIN:VCALENDAR\r\nVERSION:2.0\r\n${block.join("\r\n")}\r\nEND:VCALENDAR\r\n`;
      try {
        const part = new ICAL.Component(ICAL.parse(text) as never);
        for (const sub of part.getAllSubcomponents()) root.addSubcomponent(sub);
      } catch (error) {
        const uid = block.find((l) => /^UID[:;]/i.test(l))?.replace(/^UID[^:]*:/i, "");
        errors.push({ item: uid ? `event ${uid}` : `${kind} #${count}`, message: `this ${kind} is not valid iCalendar: ${messageOf(error)}` });
      }
      block = null;
    }
  }
  if (block !== null) errors.push({ item: `${kind} #${count + 1}`, message: `this ${kind} never ends (the text is cut off)` });
  return root;
}

function buildSeries(
  uid: string,
  entry: { master: ICAL.Component | null; overrides: ICAL.Component[] },
  vtimezones: ReadonlyMap<string, ICAL.Timezone>,
  vtimezoneText: ReadonlyMap<string, string>,
  probeSteps: { left: number },
): { series: CalendarSeries | null; errors: ItemError[] } {
  const errors: ItemError[] = [];
  const usedZones = new Set<string>();
  const read: ReadContext = { vtimezones, usedZones, probeSteps };
  let master: EventComponent | null = null;
  let rrule: string | null = null;
  let rdates: EventTime[] = [];
  let exdates: EventTime[] = [];
  if (entry.master !== null) {
    try {
      master = readComponent(entry.master, read);
      rrule = readRrule(entry.master, entry.master.getFirstPropertyValue("dtstart") as ICAL.Time, read);
      rdates = readTimes(entry.master, "rdate", read);
      exdates = readTimes(entry.master, "exdate", read);
    } catch (error) {
      errors.push({ item: describeItem(uid, entry.master), message: messageOf(error) });
      return { series: null, errors };
    }
  }
  const overrides: EventOverride[] = [];
  for (const component of entry.overrides) {
    try {
      const recurrenceId = readTime(component.getFirstProperty("recurrence-id")!, read);
      overrides.push({ ...readComponent(component, read), recurrenceId });
    } catch (error) {
      errors.push({ item: describeItem(uid, component), message: messageOf(error) });
    }
  }
  if (master === null && overrides.length === 0) return { series: null, errors };
  const timezones: Record<string, string> = {};
  for (const tzid of usedZones) {
    const text = vtimezoneText.get(tzid);
    if (text !== undefined) timezones[tzid] = text;
  }
  return { series: { uid, master, rrule, rdates, exdates, overrides, timezones }, errors };
}

interface ReadContext {
  vtimezones: ReadonlyMap<string, ICAL.Timezone>;
  usedZones: Set<string>;
  /** Rule-probing steps left for the whole text (see TEXT_PROBE_STEPS). */
  probeSteps: { left: number };
}

/** Reads DTSTART, DTEND / DURATION and the details of one VEVENT. Throws with a readable message. */
function readComponent(vevent: ICAL.Component, read: ReadContext): EventComponent {
  const dtstart = vevent.getFirstProperty("dtstart");
  if (dtstart === null) throw new Error("the event has no start (DTSTART)");
  const start = readTime(dtstart, read);
  const dtend = vevent.getFirstProperty("dtend");
  let end: EventTime;
  if (dtend !== null) {
    end = readTime(dtend, read);
    if (end.kind === "date" && start.kind !== "date") end = start;
  } else {
    const duration = vevent.getFirstPropertyValue("duration");
    end = duration instanceof ICAL.Duration ? endAfter(dtstart, duration, read) : start.kind === "date" ? endAfter(dtstart, ICAL.Duration.fromSeconds(86_400), read) : start;
  }
  return { start, end, details: readDetails(vevent) };
}

function endAfter(dtstart: ICAL.Property, duration: ICAL.Duration, read: ReadContext): EventTime {
  const time = (dtstart.getFirstValue() as ICAL.Time).clone();
  time.addDuration(duration);
  return toEventTime(time, tzidOf(dtstart), read);
}

function tzidOf(prop: ICAL.Property): string | undefined {
  const tzid = prop.getParameter("tzid");
  return typeof tzid === "string" ? tzid : undefined;
}

function readDetails(vevent: ICAL.Component): EventDetails {
  const status = (textProp(vevent, "status") ?? "CONFIRMED").toUpperCase();
  const attendees = vevent.getAllProperties("attendee").map((p) => String(p.getFirstValue() ?? "").replace(/^mailto:/i, ""));
  return {
    title: clip(textProp(vevent, "summary") ?? "(no title)", MAX_TITLE),
    location: nullableClip(textProp(vevent, "location"), MAX_TITLE),
    description: nullableClip(textProp(vevent, "description"), MAX_DESCRIPTION),
    status: status === "CANCELLED" || status === "TENTATIVE" ? status : "CONFIRMED",
    transparent: (textProp(vevent, "transp") ?? "").toUpperCase() === "TRANSPARENT",
    attendees: attendees.length,
    attendeeAddresses: attendees.slice(0, 50).map((a) => clip(a, 200)),
    sequence: sequenceOf(vevent),
  };
}

/**
 * Candidate checks a rule may take to find its first occurrences when it is read (a legitimate
 * sparse rule — hourly on 25 December — needs under 9,000), and all rules of one text together.
 */
const RULE_PROBE_STEPS = 20_000;
const TEXT_PROBE_STEPS = 400_000;

function readRrule(vevent: ICAL.Component, dtstart: ICAL.Time, read: ReadContext): string | null {
  const rules = vevent.getAllProperties("rrule");
  if (rules.length === 0) return null;
  const recur = rules[0]!.getFirstValue();
  if (!(recur instanceof ICAL.Recur)) throw new Error("the repeat rule (RRULE) is not valid");
  if (!recur.freq) throw new Error("the repeat rule (RRULE) has no FREQ");
  // A rule that never matches (BYMONTH=2;BYMONTHDAY=30) or matches too rarely for its frequency
  // would make every later expansion search in vain: refuse it now, once.
  const probe = recur.clone();
  probe.until = null;
  const start = ICAL.Time.fromData({ year: dtstart.year, month: dtstart.month, day: dtstart.day, hour: dtstart.hour, minute: dtstart.minute, second: dtstart.second, isDate: dtstart.isDate });
  const budget = { left: Math.min(RULE_PROBE_STEPS, read.probeSteps.left) };
  const before = budget.left;
  try {
    const iterator = boundedIterator(probe, start, budget);
    for (let i = 0; i < 3 && iterator.next(); i++);
  } catch {
    throw new Error(`the repeat rule "${clip(recur.toString(), 120)}" finds no next date within ${before.toLocaleString("en")} steps (impossible, or too sparse for its frequency)`);
  } finally {
    read.probeSteps.left -= before - Math.max(0, budget.left);
  }
  return recur.toString();
}

function readTimes(vevent: ICAL.Component, name: "rdate" | "exdate", read: ReadContext): EventTime[] {
  const out: EventTime[] = [];
  for (const prop of vevent.getAllProperties(name)) {
    const tzid = tzidOf(prop);
    for (const value of prop.getValues() as unknown[]) {
      const time = value instanceof ICAL.Period ? value.start : value;
      if (time instanceof ICAL.Time) out.push(toEventTime(time, tzid, read));
    }
  }
  return out;
}

function readTime(prop: ICAL.Property, read: ReadContext): EventTime {
  const value = prop.getFirstValue();
  if (!(value instanceof ICAL.Time)) throw new Error(`${prop.name.toUpperCase()} is not a date or time`);
  return toEventTime(value, tzidOf(prop), read);
}

/** One ical.js time as an `EventTime`; checks the fields and that a TZID names a known zone. */
function toEventTime(time: ICAL.Time, tzid: string | undefined, read: ReadContext): EventTime {
  const fields = [time.year, time.month, time.day, time.hour, time.minute, time.second];
  if (fields.some((f) => !Number.isFinite(f)) || time.month < 1 || time.month > 12 || time.day < 1 || time.day > 31 || time.year < 1 || time.year > 9999) {
    throw new Error(`the date or time "${String(time)}" is not valid`);
  }
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  if (time.isDate) return { kind: "date", date: `${pad(time.year, 4)}-${pad(time.month)}-${pad(time.day)}` };
  const wall = formatWall(time);
  if (time.zone === ICAL.Timezone.utcTimezone || tzid === "UTC" || tzid === "Z") return { kind: "utc", instant: `${wall}.000Z` };
  if (tzid === undefined || tzid === "") return { kind: "floating", wall };
  if (zoneOf(tzid, read.vtimezones) === null) throw new Error(`the time zone "${clip(tzid, 80)}" is unknown (not an IANA zone and no VTIMEZONE for it)`);
  read.usedZones.add(tzid);
  return { kind: "zoned", wall, tzid };
}

function textProp(component: ICAL.Component, name: string): string | null {
  const value = component.getFirstPropertyValue(name);
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  return text === "" ? null : text;
}

function sequenceOf(component: ICAL.Component): number {
  const value = Number(component.getFirstPropertyValue("sequence"));
  return Number.isFinite(value) ? value : 0;
}

/** A stable UID for an event that has none (RFC 5545 requires one; some feeds omit it). */
function syntheticUid(vevent: ICAL.Component): string {
  const basis = [vevent.getFirstProperty("dtstart")?.toICALString(), textProp(vevent, "summary"), vevent.getFirstProperty("recurrence-id")?.toICALString()].join("|");
  return `no-uid-${createHash("sha256").update(basis).digest("hex").slice(0, 16)}`;
}

function describeItem(uid: string, vevent: ICAL.Component): string {
  const title = textProp(vevent, "summary");
  return title ? `event "${clip(title, 80)}" (${uid})` : `event ${uid}`;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function nullableClip(text: string | null, max: number): string | null {
  return text === null ? null : clip(text, max);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
