/**
 * Times between people and the calendar, in the person's zone — so the model never computes an
 * epoch or an offset:
 *
 * - what the model writes (`2026-03-30`, `2026-03-30T09:00`, or an ISO time with an offset) is read
 *   as the person's local date or wall time (`readLocal`, `readWindow`);
 * - what the model reads is ISO 8601 local time with the offset (`2026-03-30T09:00:00+02:00`), a
 *   date for an all-day event, the first and last date for a multi-day one (`occurrenceLine`);
 * - what an approval card shows is the weekday, date and local time range with the zone
 *   (`Monday 30 March 2026, 09:00–10:00 (Europe/Berlin)`, `whenWords`).
 */
import { DateTime } from "luxon";
import type { AgendaEntry } from "./agenda.js";
import { describeRecurrence } from "./ical/describe.js";
import { addDays, isoInZone } from "./ical/zones.js";

/** A local date or wall time the person (or the model for them) gave. */
export type LocalInput = { kind: "date"; date: string } | { kind: "wall"; wall: string; ms: number };

/**
 * Reads `YYYY-MM-DD`, `YYYY-MM-DDTHH:mm[:ss]` (the person's wall clock) or an ISO time with `Z` or
 * an offset (turned into the person's wall clock).
 * @throws Error with a sentence naming the accepted forms
 */
export function readLocal(text: string, zone: string): LocalInput {
  const trimmed = text.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const day = DateTime.fromISO(trimmed, { zone });
    if (!day.isValid) throw new Error(`"${trimmed}" is not a valid date`);
    return { kind: "date", date: trimmed };
  }
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(trimmed);
  if (m === null) throw new Error(`"${text}" is not a date (YYYY-MM-DD) or a local time (YYYY-MM-DDTHH:MM)`);
  const wallText = `${m[1]}T${m[2]}:${m[3]}:${m[4] ?? "00"}`;
  const time = m[5] === undefined ? DateTime.fromISO(wallText, { zone }) : DateTime.fromISO(`${wallText}${m[5]}`, { setZone: true }).setZone(zone);
  if (!time.isValid) throw new Error(`"${text}" is not a valid time`);
  return { kind: "wall", wall: time.toFormat("yyyy-LL-dd'T'HH:mm:ss"), ms: time.toMillis() };
}

/** The instant a local input starts at (a date: its midnight in `zone`). */
export function instantOf(input: LocalInput, zone: string): number {
  return input.kind === "date" ? DateTime.fromISO(input.date, { zone }).startOf("day").toMillis() : input.ms;
}

/**
 * A window `[fromMs, toMs)` from two local inputs; a date as `to` includes that whole day.
 * @throws Error when it is empty, reversed, or longer than `maxDays`
 */
export function readWindow(from: string, to: string, zone: string, maxDays = 366): { fromMs: number; toMs: number } {
  const start = readLocal(from, zone);
  const end = readLocal(to, zone);
  const fromMs = instantOf(start, zone);
  const toMs = end.kind === "date" ? DateTime.fromISO(addDays(end.date, 1), { zone }).toMillis() : end.ms;
  if (toMs <= fromMs) throw new Error(`"to" (${to}) must be after "from" (${from})`);
  if (toMs - fromMs > maxDays * 86_400_000 + 3_600_000) throw new Error(`the window is longer than ${maxDays} days; ask for a shorter one`);
  return { fromMs, toMs };
}

/** Start and end of an occurrence as the model reads them: ISO local times, or first and last date. */
export function occurrenceTimes(entry: Pick<AgendaEntry, "allDay" | "start" | "end" | "startMs" | "endMs">, zone: string): { start: string; end: string; allDay: boolean } {
  if (entry.allDay && entry.start.kind === "date" && entry.end.kind === "date") {
    return { start: entry.start.date, end: addDays(entry.end.date, -1), allDay: true };
  }
  return { start: isoInZone(entry.startMs, zone), end: isoInZone(entry.endMs, zone), allDay: false };
}

/** The repetition of an occurrence's series in words (null for a single event). */
export function repeatWords(entry: Pick<AgendaEntry, "series">, zone: string): string | null {
  const master = entry.series.master;
  if (master === null) return entry.series.overrides.length > 0 ? "an occurrence of a repeating event" : null;
  return describeRecurrence(entry.series.rrule, master.start, entry.series.rdates.length, zone);
}

/** One line of `calendar_list`: when, what, where, which calendar, how it repeats, who comes. */
export function occurrenceLine(entry: AgendaEntry, zone: string, eventId: string): string {
  const t = occurrenceTimes(entry, zone);
  const when = t.allDay ? (t.start === t.end ? `${t.start} (all day)` : `${t.start} to ${t.end} (all day, ${daysWord(t.start, t.end)})`) : `${t.start} to ${t.end}`;
  const parts = [when, quote(entry.details.title), `calendar ${quote(entry.calendarName)}`];
  if (entry.details.location) parts.push(`at ${quote(entry.details.location)}`);
  const repeats = repeatWords(entry, zone);
  if (repeats) parts.push(`repeats ${repeats}${entry.overridden ? " (this occurrence was moved or changed)" : ""}`);
  if (entry.details.attendees > 0) parts.push(`${entry.details.attendees} ${entry.details.attendees === 1 ? "attendee" : "attendees"}`);
  if (entry.details.status === "TENTATIVE") parts.push("tentative");
  parts.push(`id ${eventId}`);
  return `- ${parts.join(" · ")}`;
}

/** "Monday 30 March 2026, 09:00–10:00 (Europe/Berlin)", "Saturday 4 July 2026 (all day)", … */
export function whenWords(start: LocalInput, end: LocalInput, zone: string, locale = "en-GB"): string {
  if (start.kind === "date") {
    const last = end.kind === "date" ? addDays(end.date, -1) : start.date;
    const first = DateTime.fromISO(start.date, { zone, locale });
    if (last <= start.date) return `${first.toFormat("cccc d LLLL yyyy")} (all day)`;
    return `${first.toFormat("cccc d LLLL yyyy")} to ${DateTime.fromISO(last, { zone, locale }).toFormat("cccc d LLLL yyyy")} (all day)`;
  }
  const a = DateTime.fromMillis(start.ms, { zone, locale });
  const b = DateTime.fromMillis(end.kind === "wall" ? end.ms : start.ms, { zone, locale });
  const sameDay = a.toISODate() === b.toISODate();
  const range = sameDay ? `${a.toFormat("HH:mm")}–${b.toFormat("HH:mm")}` : `${a.toFormat("HH:mm")} to ${b.toFormat("cccc d LLLL yyyy, HH:mm")}`;
  return `${a.toFormat("cccc d LLLL yyyy")}, ${range} (${zone}, UTC${a.toFormat("ZZ")})`;
}

/** The local input of an occurrence's start and end. */
export function entryInputs(entry: Pick<AgendaEntry, "allDay" | "start" | "end" | "startMs" | "endMs">, zone: string): { start: LocalInput; end: LocalInput } {
  if (entry.allDay && entry.start.kind === "date" && entry.end.kind === "date") return { start: { kind: "date", date: entry.start.date }, end: { kind: "date", date: entry.end.date } };
  const wall = (ms: number) => DateTime.fromMillis(ms, { zone }).toFormat("yyyy-LL-dd'T'HH:mm:ss");
  return { start: { kind: "wall", wall: wall(entry.startMs), ms: entry.startMs }, end: { kind: "wall", wall: wall(entry.endMs), ms: entry.endMs } };
}

function daysWord(first: string, last: string): string {
  const days = Math.round((Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / 86_400_000) + 1;
  return `${days} days`;
}

/** Untrusted text in quotes, one line, clipped (a title can hold anything). */
export function quote(text: string, max = 120): string {
  const line = text.replace(/\s+/g, " ").trim();
  return `“${line.length > max ? `${line.slice(0, max - 1)}…` : line}”`;
}
