/**
 * Plans of `calendar_update` and `calendar_delete` (see `write-plans.ts` for what a plan is).
 *
 * The event is the id `calendar_list` showed; for a repeating event the model says the scope — one
 * occurrence (named by its start as listed) or the whole series. One occurrence changes through a
 * RECURRENCE-ID override or an EXDATE; the whole series through its master. Moving a whole series
 * shifts its first start by the same wall-clock step as the occurrence named (in the event's own
 * zone), so "the weekly 09:00 at 10:00 from now on" keeps its weekday and its zone.
 */
import type { ToolContext } from "../../core/tools/index.js";
import { CalendarError } from "./errors.js";
import { expandSeries, SeriesClock } from "./ical/expand.js";
import { describeRecurrence } from "./ical/describe.js";
import { parseICalendar } from "./ical/parse.js";
import { deleteOccurrenceIcs, updateOccurrenceIcs, updateSeriesIcs, type EventChanges } from "./ical/write.js";
import { addDays, formatWall, instantToWall, parseWall, wallAsUtcMs, wallFromUtcMs } from "./ical/zones.js";
import type { CalendarSeries, EventTime, Occurrence } from "./model.js";
import { entryInputs, quote, readLocal, whenWords } from "./present.js";
import { eventIdOf, storedItem, type StoredCalendar, type StoredItem } from "./store.js";
import { rruleOf, type DeleteArgs, type UpdateArgs } from "./write-args.js";
import { clientFor, describeWrite, eventTimeOf, readSpan, refuse, writableCalendars, type CalendarWriteDeps, type PlanFields, type WritePlan } from "./write-plans.js";

const DAY_MS = 86_400_000;

/** The event a change is about, and (for one occurrence, or as the reference of a series move) an occurrence. */
interface Target {
  calendar: StoredCalendar;
  item: StoredItem & { ics: string };
  series: CalendarSeries & { master: NonNullable<CalendarSeries["master"]> };
  repeats: boolean;
  scope: "single" | "occurrence" | "series";
  occurrence: Occurrence;
  zone: string;
}

async function resolve(deps: CalendarWriteDeps, context: ToolContext, args: Pick<UpdateArgs, "event" | "occurrence" | "scope">): Promise<Target> {
  const zone = await deps.personZone(context.personId);
  const [item] = await deps.store.itemsByEvent(context.personId, args.event);
  if (item === undefined) refuse("not_found", `There is no event ${args.event} (any more). List the calendar again for current ids.`);
  const calendar = (await writableCalendars(deps, context.personId)).find((c) => c.calendarId === item.calendarId);
  if (calendar === undefined || item.ics === null) {
    const name = (await deps.store.listCalendars(context.personId)).find((c) => c.calendarId === item.calendarId)?.name ?? "its calendar";
    refuse("calendar_read_only", `The event is in ${quote(name)}, which Familiar may only read (a followed feed, or a connection without write access).`);
  }
  const series = item.series.find((s) => eventIdOf(item.calendarId, s.uid) === args.event)!;
  if (series.master === null) refuse("calendar_read_only", "This event holds only single invited occurrences (no series); change it in the calendar app that received the invitation.");
  const withMaster = series as Target["series"];
  const repeats = series.rrule !== null || series.rdates.length > 0;
  if (!repeats) {
    const [only] = expandSeries(withMaster, { fromMs: -8.64e15, toMs: 8.64e15, zone, maxOccurrences: 1 }).occurrences;
    if (only === undefined) refuse("not_found", "The event has no occurrence to change (it was cancelled).");
    return { calendar, item: item as Target["item"], series: withMaster, repeats, scope: "single", occurrence: only, zone };
  }
  const described = describeRecurrence(series.rrule, series.master.start, series.rdates.length, zone);
  if (args.scope === undefined) {
    refuse("invalid_arguments", `This event repeats (${described}). Say scope "occurrence" with the occurrence's start as calendar_list shows it, or scope "series" for all of them.`);
  }
  if (args.occurrence === undefined) {
    if (args.scope === "occurrence") refuse("invalid_arguments", "Say which occurrence: its start as calendar_list shows it.");
    const [first] = expandSeries(withMaster, { fromMs: -8.64e15, toMs: 8.64e15, zone, maxOccurrences: 1 }).occurrences;
    if (first === undefined) refuse("not_found", "The series has no occurrence left.");
    return { calendar, item: item as Target["item"], series: withMaster, repeats, scope: "series", occurrence: first, zone };
  }
  return { calendar, item: item as Target["item"], series: withMaster, repeats, scope: args.scope, occurrence: findOccurrence(withMaster, args.occurrence, zone), zone };
}

function findOccurrence(series: CalendarSeries, text: string, zone: string): Occurrence {
  let input;
  try {
    input = readLocal(text, zone);
  } catch (error) {
    return refuse("invalid_arguments", (error as Error).message);
  }
  const at = input.kind === "date" ? Date.parse(`${input.date}T12:00:00Z`) : input.ms;
  const around = expandSeries(series, { fromMs: at - 2 * DAY_MS, toMs: at + 2 * DAY_MS, zone });
  const match = around.occurrences.find((o) => (input.kind === "date" ? o.allDay && o.start.kind === "date" && o.start.date === input.date : !o.allDay && Math.abs(o.startMs - input.ms) < 60_000));
  if (match !== undefined) return match;
  const near = around.occurrences.map((o) => (o.allDay && o.start.kind === "date" ? o.start.date : entryInputs(o, zone).start)).map((s) => (typeof s === "string" ? s : s.kind === "wall" ? s.wall.slice(0, 16) : s.date));
  return refuse("not_found", `The event has no occurrence starting at ${text}${near.length > 0 ? `; near it: ${near.join(", ")}` : ""}. Use the start calendar_list shows.`);
}

/** What the scope means, in words for the card. */
function scopeWords(target: Target): string {
  const when = occurrenceWhen(target.occurrence, target.zone);
  if (target.scope === "single") return `the event on ${when}`;
  if (target.scope === "occurrence") return `only the occurrence on ${when}; the other occurrences stay as they are`;
  return `the whole series (it repeats ${describeRecurrence(target.series.rrule, target.series.master.start, target.series.rdates.length, target.zone)}): every occurrence`;
}

function occurrenceWhen(o: Occurrence, zone: string): string {
  const { start, end } = entryInputs(o, zone);
  return whenWords(start, end, zone);
}

/** The plan of `calendar_update`. */
export async function planUpdate(deps: CalendarWriteDeps, args: UpdateArgs, context: ToolContext): Promise<WritePlan> {
  const target = await resolve(deps, context, args);
  const { zone, occurrence, series } = target;
  const changes: EventChanges = {};
  if (args.title !== undefined) changes.title = args.title;
  if (args.location !== undefined) changes.location = args.location;
  if (args.description !== undefined) changes.description = args.description;
  if (args.attendees !== undefined) changes.attendees = args.attendees;
  if (args.repeat !== undefined) {
    if (target.scope === "occurrence") refuse("invalid_arguments", 'A new repetition changes the whole series: use scope "series".');
    changes.rrule = args.repeat === null ? null : rruleOf(args.repeat, series.master.start.kind === "date", zone);
  }
  let newWhen: string | null = null;
  if (args.start !== undefined || args.end !== undefined) {
    const current = entryInputs(occurrence, zone);
    const startText = args.start ?? (current.start.kind === "date" ? current.start.date : current.start.wall);
    const lengthMs = occurrence.endMs - occurrence.startMs;
    const endText = args.end ?? (args.start === undefined ? lastOf(current.end) : undefined);
    const span = args.end === undefined && args.start !== undefined ? keepLength(readSpan(startText, undefined, zone), lengthMs, occurrence.allDay, zone) : readSpan(startText, endText, zone);
    newWhen = whenWords(span.start, span.end, zone);
    if (target.scope === "series") {
      Object.assign(changes, shiftSeries(target, span));
    } else {
      changes.start = eventTimeOf(span.start, zone);
      changes.end = eventTimeOf(span.end, zone);
    }
  }
  if (Object.keys(changes).length === 0) refuse("invalid_arguments", "Nothing to change: give at least one of title, start, end, location, description, attendees, repeat.");
  const fields: PlanFields = [
    { name: "Calendar", value: target.calendar.name },
    { name: "Event", value: occurrence.details.title },
    { name: "Changes", value: scopeWords(target) },
  ];
  if (newWhen !== null) fields.push({ name: "Now", value: occurrenceWhen(occurrence, zone) }, { name: target.scope === "series" ? "New time (this occurrence; the others move alike)" : "New time", value: newWhen });
  if (changes.title !== undefined) fields.push({ name: "New title", value: changes.title });
  if (changes.location !== undefined) fields.push({ name: "New location", value: changes.location ?? "(none)" });
  if (changes.description !== undefined) fields.push({ name: "New notes", value: changes.description ?? "(none)" });
  if (changes.attendees !== undefined) fields.push({ name: "Attendees", value: changes.attendees.length > 0 ? `${changes.attendees.join(", ")} (they may receive an invitation)` : "none" });
  if (changes.rrule !== undefined) fields.push({ name: "Repeats", value: changes.rrule === null ? "no longer (a single event)" : (describeRecurrence(changes.rrule, changes.start ?? series.master.start, 0, zone) ?? changes.rrule) });
  const description = describeWrite({
    method: "WRITE",
    calendar: target.calendar,
    summary: `Change ${quote(occurrence.details.title)} in the calendar ${quote(target.calendar.name)}: ${scopeWords(target)}`,
    fields,
    digestOf: { tool: "calendar_update", calendar: target.calendar.url, href: target.item.href, etag: target.item.etag, hash: target.item.hash, uid: series.uid, scope: target.scope, occurrence: occurrence.recurrenceKey, changes },
    hardToUndo: (changes.attendees?.length ?? occurrence.details.attendees) > 0,
    context,
  });
  return {
    description,
    async perform(run) {
      const now = deps.clock.now();
      const ics = target.scope === "occurrence" ? updateOccurrenceIcs(target.item.ics, series.uid, occurrence.originalStart, changes, now) : updateSeriesIcs(target.item.ics, series.uid, changes, now);
      return write(deps, run, target, ics, `Changed ${quote(changes.title ?? occurrence.details.title)}: ${scopeWords(target)}${newWhen ? `, now ${newWhen}` : ""}.`);
    },
  };
}

/** The plan of `calendar_delete`. */
export async function planDelete(deps: CalendarWriteDeps, args: DeleteArgs, context: ToolContext): Promise<WritePlan> {
  const target = await resolve(deps, context, args);
  const title = target.occurrence.details.title;
  const description = describeWrite({
    method: "DELETE",
    calendar: target.calendar,
    summary: `Delete ${quote(title)} from the calendar ${quote(target.calendar.name)}: ${scopeWords(target)}`,
    fields: [
      { name: "Calendar", value: target.calendar.name },
      { name: "Event", value: title },
      { name: "Deletes", value: scopeWords(target) },
      { name: "Attendees", value: target.occurrence.details.attendees > 0 ? `${target.occurrence.details.attendees} (they may be told it is cancelled)` : "none" },
    ],
    digestOf: { tool: "calendar_delete", calendar: target.calendar.url, href: target.item.href, etag: target.item.etag, hash: target.item.hash, uid: target.series.uid, scope: target.scope, occurrence: target.occurrence.recurrenceKey },
    hardToUndo: true,
    context,
  });
  return {
    description,
    async perform(run) {
      if (target.scope === "occurrence") {
        const ics = deleteOccurrenceIcs(target.item.ics, target.series.uid, target.occurrence.originalStart, deps.clock.now());
        return write(deps, run, target, ics, `Deleted ${quote(title)}: ${scopeWords(target)}.`);
      }
      const client = await clientFor(deps, run.personId, target.calendar);
      await client.remove(target.item.href, target.item.etag);
      await deps.store.applySync(run.personId, target.calendar.calendarId, { upserts: [], deletes: [target.item.href] });
      return { ok: true, content: `Deleted ${quote(title)} from the calendar ${quote(target.calendar.name)}: ${scopeWords(target)}.` };
    },
  };
}

/** PUTs the changed object (If-Match its ETag) and keeps the store in step. */
async function write(deps: CalendarWriteDeps, run: ToolContext, target: Target, ics: string, done: string): Promise<{ ok: true; content: string }> {
  const client = await clientFor(deps, run.personId, target.calendar);
  let etag: string | null;
  try {
    etag = (await client.update(target.item.href, ics, target.item.etag)).etag;
  } catch (error) {
    if (error instanceof CalendarError && error.code === "conflict") throw new CalendarError("conflict", "The event was changed on the server since it was read, so nothing was changed. The next sync will bring the new version; list the calendar again and decide anew.");
    throw error;
  }
  await deps.store.applySync(run.personId, target.calendar.calendarId, { upserts: [storedItem(target.item.href, etag, ics, parseICalendar(ics).series)], deletes: [] });
  return { ok: true, content: done };
}

/** An exclusive end as the inclusive text the model would write (the last day of an all-day event). */
function lastOf(end: ReturnType<typeof entryInputs>["end"]): string {
  return end.kind === "date" ? addDays(end.date, -1) : end.wall;
}

/** A new start with the occurrence's old length. */
function keepLength(span: ReturnType<typeof readSpan>, lengthMs: number, allDay: boolean, zone: string): ReturnType<typeof readSpan> {
  if (span.start.kind === "date") {
    const days = allDay ? Math.max(1, Math.round(lengthMs / DAY_MS)) : 1;
    return { start: span.start, end: { kind: "date", date: addDays(span.start.date, days) } };
  }
  const length = allDay ? 3_600_000 : lengthMs;
  return { start: span.start, end: readLocal(new Date(span.start.ms + length).toISOString(), zone) };
}

/** The master's new DTSTART/DTEND: shifted by the step from the occurrence named to its new time. */
function shiftSeries(target: Target, span: ReturnType<typeof readSpan>): Pick<EventChanges, "start" | "end"> {
  const master = target.series.master;
  const allDay = master.start.kind === "date";
  if (allDay !== (span.start.kind === "date")) refuse("invalid_arguments", "A whole series cannot switch between all-day and timed; change one occurrence, or delete the series and create a new one.");
  if (span.start.kind === "date" && span.end.kind === "date" && target.occurrence.start.kind === "date" && target.occurrence.end.kind === "date") {
    const startDays = Math.round((Date.parse(span.start.date) - Date.parse(target.occurrence.start.date)) / DAY_MS);
    const endDays = Math.round((Date.parse(span.end.date) - Date.parse(target.occurrence.end.date)) / DAY_MS);
    return { start: shift(master.start, startDays * DAY_MS), end: shift(master.end, endDays * DAY_MS) };
  }
  if (span.start.kind !== "wall" || span.end.kind !== "wall") return {};
  const zone = new SeriesClock(target.series, target.zone).zoneOf(master.start);
  const step = (fromMs: number, toMs: number) => wallAsUtcMs(instantToWall(toMs, zone)) - wallAsUtcMs(instantToWall(fromMs, zone));
  return { start: shift(master.start, step(target.occurrence.startMs, span.start.ms)), end: shift(master.end, step(target.occurrence.endMs, span.end.ms)) };
}

/** A time moved by `ms` on its own clock (wall time, instant, or whole days for a date). */
function shift(time: EventTime, ms: number): EventTime {
  switch (time.kind) {
    case "date":
      return { kind: "date", date: addDays(time.date, Math.round(ms / DAY_MS)) };
    case "utc":
      return { kind: "utc", instant: new Date(Date.parse(time.instant) + ms).toISOString() };
    default:
      return { ...time, wall: formatWall(wallFromUtcMs(wallAsUtcMs(parseWall(time.wall)) + ms)) };
  }
}
