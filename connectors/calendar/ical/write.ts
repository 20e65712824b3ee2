/**
 * Writing iCalendar: a new event Familiar creates, and changes to an existing calendar object
 * (the whole series, or one occurrence as a RECURRENCE-ID override / EXDATE), with ical.js.
 *
 * Timed events are written on the wall clock of their zone (the person's, for new ones) with its TZID and a VTIMEZONE
 * (RFC 5545 §3.6.5), so a weekly 09:00 stays 09:00 across clock changes in every client; all-day
 * events are DATE values with an exclusive DTEND. Edits keep every property Familiar does not
 * change, raise SEQUENCE and refresh DTSTAMP (RFC 5546 §2.1.4).
 */
import ICAL from "ical.js";
import type { EventTime } from "../model.js";
import { vtimezoneFor } from "./vtimezone.js";
import { ianaName } from "./zones.js";

/** An event to write. Times are `date` (all-day) or `zoned` (a wall time with its TZID). */
export interface EventDraft {
  title: string;
  start: EventTime;
  /** Exclusive: the day after the last day of an all-day event; the end instant of a timed one. */
  end: EventTime;
  location?: string | null;
  description?: string | null;
  /** E-mail addresses. */
  attendees?: string[];
  /** RRULE value without the `RRULE:` prefix (e.g. `FREQ=WEEKLY;BYDAY=MO`), or null for none. */
  rrule?: string | null;
}

/** The fields of a change: only what is given is changed. */
export type EventChanges = Partial<EventDraft>;

const PRODID = "-//Familiar//Calendar 1.0//EN";

/** A new calendar object (VCALENDAR with one VEVENT, and a VTIMEZONE for a timed event). */
export function newEventIcs(draft: EventDraft, options: { uid: string; now: Date }): string {
  const calendar = new ICAL.Component(["vcalendar", [], []]);
  calendar.addPropertyWithValue("version", "2.0");
  calendar.addPropertyWithValue("prodid", PRODID);
  const vevent = new ICAL.Component("vevent");
  vevent.addPropertyWithValue("uid", options.uid);
  vevent.addPropertyWithValue("dtstamp", ICAL.Time.fromJSDate(options.now, true));
  vevent.addPropertyWithValue("created", ICAL.Time.fromJSDate(options.now, true));
  vevent.addPropertyWithValue("sequence", 0);
  applyChanges(vevent, draft);
  addTimezones(calendar, [vevent]);
  calendar.addSubcomponent(vevent);
  return calendar.toString() + "\r\n";
}

/**
 * Changes the whole series (the master VEVENT of `uid`).
 * @throws Error when the object has no event `uid`
 */
export function updateSeriesIcs(ics: string, uid: string, changes: EventChanges, now: Date): string {
  const calendar = parseCalendar(ics);
  const master = findMaster(calendar, uid);
  applyChanges(master, changes);
  touch(master, now);
  addTimezones(calendar, [master]);
  return calendar.toString() + "\r\n";
}

/**
 * Changes one occurrence: its override (RECURRENCE-ID) is changed, or made from the master.
 * `recurrenceId` is the occurrence's original start as the series writes it.
 * @throws Error when the object has no event `uid`
 */
export function updateOccurrenceIcs(ics: string, uid: string, recurrenceId: EventTime, changes: EventChanges, now: Date): string {
  const calendar = parseCalendar(ics);
  const master = findMaster(calendar, uid);
  let override = findOverride(calendar, uid, recurrenceId);
  if (override === null) {
    override = new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\r\n${master.toString()}\r\nEND:VCALENDAR`) as never).getFirstSubcomponent("vevent")!;
    for (const name of ["rrule", "rdate", "exdate", "recurrence-id"]) override.removeAllProperties(name);
    const duration = durationOf(master);
    setTime(override, "dtstart", recurrenceId);
    setTime(override, "recurrence-id", recurrenceId);
    const end = (override.getFirstPropertyValue("dtstart") as ICAL.Time).clone();
    end.addDuration(duration);
    override.removeAllProperties("dtend");
    override.removeAllProperties("duration");
    const prop = new ICAL.Property("dtend");
    const tzid = override.getFirstProperty("dtstart")!.getParameter("tzid");
    if (typeof tzid === "string") prop.setParameter("tzid", tzid);
    prop.setValue(end);
    override.addProperty(prop);
    calendar.addSubcomponent(override);
  }
  applyChanges(override, { ...changes, rrule: undefined });
  touch(override, now);
  addTimezones(calendar, [override]);
  return calendar.toString() + "\r\n";
}

/**
 * Cancels one occurrence: an EXDATE on the master, and its override (if any) removed.
 * @throws Error when the object has no event `uid`
 */
export function deleteOccurrenceIcs(ics: string, uid: string, recurrenceId: EventTime, now: Date): string {
  const calendar = parseCalendar(ics);
  const master = findMaster(calendar, uid);
  const override = findOverride(calendar, uid, recurrenceId);
  if (override !== null) calendar.removeSubcomponent(override);
  const exdate = new ICAL.Property("exdate");
  writeTime(exdate, recurrenceId);
  master.addProperty(exdate);
  touch(master, now);
  return calendar.toString() + "\r\n";
}

function parseCalendar(ics: string): ICAL.Component {
  return new ICAL.Component(ICAL.parse(ics) as never);
}

function findMaster(calendar: ICAL.Component, uid: string): ICAL.Component {
  const master = calendar.getAllSubcomponents("vevent").find((v) => v.getFirstPropertyValue("uid") === uid && !v.hasProperty("recurrence-id"));
  if (master === undefined) throw new Error(`the calendar object has no event ${uid}`);
  return master;
}

function findOverride(calendar: ICAL.Component, uid: string, recurrenceId: EventTime): ICAL.Component | null {
  const wanted = stamp(recurrenceId);
  return (
    calendar.getAllSubcomponents("vevent").find((v) => {
      if (v.getFirstPropertyValue("uid") !== uid) return false;
      const rid = v.getFirstPropertyValue("recurrence-id");
      return rid instanceof ICAL.Time && rid.toString().replace(/Z$/, "") === wanted;
    }) ?? null
  );
}

function stamp(time: EventTime): string {
  return time.kind === "date" ? time.date : time.kind === "utc" ? time.instant.slice(0, 19) : time.wall;
}

function durationOf(vevent: ICAL.Component): ICAL.Duration {
  const start = vevent.getFirstPropertyValue("dtstart") as ICAL.Time;
  const end = vevent.getFirstPropertyValue("dtend");
  if (end instanceof ICAL.Time) return end.subtractDate(start);
  const duration = vevent.getFirstPropertyValue("duration");
  if (duration instanceof ICAL.Duration) return duration;
  return ICAL.Duration.fromSeconds(start.isDate ? 86_400 : 0);
}

function applyChanges(vevent: ICAL.Component, changes: EventChanges): void {
  if (changes.title !== undefined) vevent.updatePropertyWithValue("summary", changes.title);
  if (changes.start !== undefined) setTime(vevent, "dtstart", changes.start);
  if (changes.end !== undefined) {
    vevent.removeAllProperties("duration");
    setTime(vevent, "dtend", changes.end);
  }
  if (changes.location !== undefined) setText(vevent, "location", changes.location);
  if (changes.description !== undefined) setText(vevent, "description", changes.description);
  if (changes.attendees !== undefined) {
    vevent.removeAllProperties("attendee");
    for (const address of changes.attendees) {
      const prop = new ICAL.Property("attendee");
      prop.setParameter("partstat", "NEEDS-ACTION");
      prop.setParameter("rsvp", "TRUE");
      prop.setValue(`mailto:${address}`);
      vevent.addProperty(prop);
    }
  }
  if (changes.rrule !== undefined) {
    vevent.removeAllProperties("rrule");
    if (changes.rrule !== null) vevent.addPropertyWithValue("rrule", ICAL.Recur.fromString(changes.rrule));
  }
}

function setText(vevent: ICAL.Component, name: string, value: string | null): void {
  if (value === null || value === "") vevent.removeAllProperties(name);
  else vevent.updatePropertyWithValue(name, value);
}

function setTime(vevent: ICAL.Component, name: string, time: EventTime): void {
  vevent.removeAllProperties(name);
  const prop = new ICAL.Property(name);
  writeTime(prop, time);
  vevent.addProperty(prop);
}

function writeTime(prop: ICAL.Property, time: EventTime): void {
  switch (time.kind) {
    case "date":
      prop.setValue(ICAL.Time.fromDateString(time.date));
      return;
    case "utc":
      prop.setValue(ICAL.Time.fromJSDate(new Date(time.instant), true));
      return;
    case "zoned":
      prop.setParameter("tzid", time.tzid);
      prop.setValue(ICAL.Time.fromDateTimeString(time.wall));
      return;
    case "floating":
      prop.setValue(ICAL.Time.fromDateTimeString(time.wall));
  }
}

function touch(vevent: ICAL.Component, now: Date): void {
  vevent.updatePropertyWithValue("dtstamp", ICAL.Time.fromJSDate(now, true));
  vevent.updatePropertyWithValue("last-modified", ICAL.Time.fromJSDate(now, true));
  const sequence = Number(vevent.getFirstPropertyValue("sequence") ?? 0);
  vevent.updatePropertyWithValue("sequence", (Number.isFinite(sequence) ? sequence : 0) + 1);
}

/** Adds a VTIMEZONE for every IANA TZID the given events use that the calendar does not define yet. */
function addTimezones(calendar: ICAL.Component, vevents: ICAL.Component[]): void {
  const defined = new Set(calendar.getAllSubcomponents("vtimezone").map((c) => String(c.getFirstPropertyValue("tzid"))));
  for (const vevent of vevents) {
    for (const prop of vevent.getAllProperties()) {
      const tzid = prop.getParameter("tzid");
      if (typeof tzid !== "string" || defined.has(tzid) || ianaName(tzid) === null) continue;
      const year = (prop.getFirstValue() as ICAL.Time).year;
      const vtz = new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\r\n${vtimezoneFor(ianaName(tzid)!, year)}\r\nEND:VCALENDAR`) as never).getFirstSubcomponent("vtimezone")!;
      vtz.updatePropertyWithValue("tzid", tzid);
      calendar.addSubcomponent(vtz);
      defined.add(tzid);
    }
  }
}
