import { DateTime } from "luxon";
import type { Person, QuietHours } from "../persons/records.js";

/**
 * Wall-clock arithmetic of the notification filter in the person's IANA time zone (luxon handles
 * DST gaps and overlaps): quiet hours, the start of the local day for the daily budget, and when
 * a held message goes out.
 */

/** Without quiet hours or a `/digest` time, held messages go out at this local time. */
export const fallbackDigestTime = "18:00";
/** A held item with a deadline goes out at least this long before it (outside quiet hours). */
export const deadlineLeadMs = 2 * 3_600_000;

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const local = (at: Date, zone: string) => DateTime.fromJSDate(at, { zone });

/** True when `at` falls in the quiet hours (wall clock in `zone`; the span may wrap midnight). */
export function inQuietHours(quiet: QuietHours | null, at: Date, zone: string): boolean {
  if (!quiet) return false;
  const from = minutesOf(quiet.from);
  const to = minutesOf(quiet.to);
  const t = local(at, zone);
  const m = t.hour * 60 + t.minute;
  return from <= to ? m >= from && m < to : m >= from || m < to;
}

/**
 * The first instant strictly after `after` at which the local clock in `zone` shows `hhmm`. On a
 * day when that wall time does not exist (spring-forward gap) it is the first instant after the gap.
 */
export function nextLocalTime(hhmm: string, after: Date, zone: string): Date {
  const start = local(after, zone);
  const [hour, minute] = [Number(hhmm.slice(0, 2)), Number(hhmm.slice(3, 5))];
  for (let day = 0; day <= 2; day++) {
    const d = start.startOf("day").plus({ days: day }).set({ hour, minute, second: 0, millisecond: 0 });
    if (d.toMillis() > after.getTime()) return d.toJSDate();
  }
  // Unreachable: two days ahead always has the time.
  return start.plus({ days: 1 }).toJSDate();
}

/** The most recent instant at or before `at` at which the local clock showed `hhmm`. */
export function previousLocalTime(hhmm: string, at: Date, zone: string): Date {
  const start = local(at, zone);
  const [hour, minute] = [Number(hhmm.slice(0, 2)), Number(hhmm.slice(3, 5))];
  for (let day = 0; day <= 2; day++) {
    const d = start.startOf("day").minus({ days: day }).set({ hour, minute, second: 0, millisecond: 0 });
    if (d.toMillis() <= at.getTime()) return d.toJSDate();
  }
  return start.minus({ days: 1 }).toJSDate();
}

/** Local midnight (start of the local day) of `at` in `zone`: the daily budget counts from here. */
export function startOfLocalDay(at: Date, zone: string): Date {
  return local(at, zone).startOf("day").toJSDate();
}

/** When the quiet hours that contain `at` end (null when `at` is not in quiet hours). */
export function quietHoursEnd(quiet: QuietHours | null, at: Date, zone: string): Date | null {
  if (!quiet || !inQuietHours(quiet, at, zone)) return null;
  return nextLocalTime(quiet.to, at, zone);
}

/**
 * When the digest after `after` goes out: at the person's `/digest` time if set, else when (the
 * current or next) quiet hours end, else at 18:00 local.
 */
export function nextDigestAt(person: Pick<Person, "digestTime" | "quietHours" | "timeZone">, after: Date): Date {
  if (person.digestTime) return nextLocalTime(person.digestTime, after, person.timeZone);
  if (person.quietHours) return nextLocalTime(person.quietHours.to, after, person.timeZone);
  return nextLocalTime(fallbackDigestTime, after, person.timeZone);
}

/**
 * When a message held at `heldAt` goes out. Normally with the next digest; a message whose deadline
 * would pass before that digest goes out earlier: when the quiet hours it was held in end (at the
 * latest), or — held outside quiet hours — two hours before its deadline, moved before the quiet
 * hours if that falls inside them. Never before `heldAt`.
 */
export function releaseAt(person: Pick<Person, "digestTime" | "quietHours" | "timeZone">, heldAt: Date, deadline: Date | null): Date {
  const digest = nextDigestAt(person, heldAt);
  if (!deadline || deadline.getTime() > digest.getTime()) return digest;
  const quietEnd = quietHoursEnd(person.quietHours, heldAt, person.timeZone);
  if (quietEnd) return quietEnd.getTime() < digest.getTime() ? quietEnd : digest;
  let at = new Date(Math.max(heldAt.getTime(), deadline.getTime() - deadlineLeadMs));
  if (person.quietHours && inQuietHours(person.quietHours, at, person.timeZone)) {
    const quietStart = previousLocalTime(person.quietHours.from, at, person.timeZone);
    at = new Date(Math.max(heldAt.getTime(), quietStart.getTime() - 60_000));
  }
  return at.getTime() < digest.getTime() ? at : digest;
}

/** `HH:MM` of `at` in `zone` and the weekday, for people and the model judge ("Sun 07:05"). */
export function localTimeLabel(at: Date, zone: string): string {
  return local(at, zone).toFormat("ccc yyyy-LL-dd HH:mm ZZZZ");
}
