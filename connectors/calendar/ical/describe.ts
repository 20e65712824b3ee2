/**
 * A repeat rule in words, for `calendar_list` and approval cards: `every week on Monday and
 * Wednesday, until 31 Dec 2026`, `every month on the last Friday, 10 times`. Parts this module does
 * not put into words are appended as the rule itself, so nothing a person should know is hidden.
 */
import ICAL from "ical.js";
import { DateTime } from "luxon";
import type { EventTime } from "../model.js";
import { parseWall } from "./zones.js";

const DAY_NAMES: Record<string, string> = { MO: "Monday", TU: "Tuesday", WE: "Wednesday", TH: "Thursday", FR: "Friday", SA: "Saturday", SU: "Sunday" };
const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const ORDINALS: Record<number, string> = { 1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", [-1]: "last", [-2]: "second to last" };
const UNITS: Record<string, [string, string]> = {
  SECONDLY: ["second", "seconds"],
  MINUTELY: ["minute", "minutes"],
  HOURLY: ["hour", "hours"],
  DAILY: ["day", "days"],
  WEEKLY: ["week", "weeks"],
  MONTHLY: ["month", "months"],
  YEARLY: ["year", "years"],
};
const DESCRIBED = new Set(["BYDAY", "BYMONTHDAY", "BYMONTH"]);

/**
 * Describes a series' repetition, or returns null when it does not repeat.
 *
 * @param rrule the RRULE value (null when there is none)
 * @param start the series' DTSTART (its weekday, day and month fill in what the rule leaves out)
 * @param extraDates how many RDATEs the series has
 * @param zone the reader's IANA zone (a UTC UNTIL is shown as a date there)
 */
export function describeRecurrence(rrule: string | null, start: EventTime, extraDates: number, zone: string): string | null {
  if (rrule === null) return extraDates > 0 ? `on ${extraDates + 1} dates` : null;
  let recur: ICAL.Recur;
  try {
    recur = ICAL.Recur.fromString(rrule);
  } catch {
    return `repeats (${rrule})`;
  }
  const startDate = startFields(start);
  const interval = Math.max(1, recur.interval || 1);
  const unit = UNITS[recur.freq] ?? ["time", "times"];
  const parts = recur.parts as Record<string, (string | number)[] | undefined>;
  const byDay = (parts.BYDAY ?? []).map(String);
  let text = interval === 1 ? `every ${unit[0]}` : `every ${interval} ${unit[1]}`;
  if (recur.freq === "WEEKLY" || (recur.freq === "DAILY" && byDay.length > 0)) {
    const days = byDay.length > 0 ? byDay : [startDate.weekday];
    if (sameSet(days, ["MO", "TU", "WE", "TH", "FR"]) && interval === 1) text = "every weekday";
    else text += ` on ${list(days.map(dayWords))}`;
  } else if (recur.freq === "MONTHLY") {
    if (byDay.length > 0) text += ` on the ${list(byDay.map(dayWords))}`;
    else text += ` on day ${list((parts.BYMONTHDAY ?? [startDate.day]).map(monthDayWords))}`;
  } else if (recur.freq === "YEARLY") {
    const months = (parts.BYMONTH ?? [startDate.month]).map((m) => MONTH_NAMES[Number(m) - 1] ?? String(m));
    if (byDay.length > 0) text += ` on the ${list(byDay.map(dayWords))} of ${list(months)}`;
    else text += ` on ${list((parts.BYMONTHDAY ?? [startDate.day]).map(monthDayWords))} ${list(months)}`;
  } else if (byDay.length > 0) {
    text += ` on ${list(byDay.map(dayWords))}`;
  }
  if (recur.freq !== "YEARLY" && parts.BYMONTH !== undefined) text += ` in ${list(parts.BYMONTH.map((m) => MONTH_NAMES[Number(m) - 1] ?? String(m)))}`;
  if (recur.count) text += `, ${recur.count} ${recur.count === 1 ? "time" : "times"}`;
  else if (recur.until) text += `, until ${untilWords(recur.until, zone)}`;
  if (extraDates > 0) text += `, and on ${extraDates} more ${extraDates === 1 ? "date" : "dates"}`;
  const rest = Object.keys(parts).filter((k) => !DESCRIBED.has(k));
  if (rest.length > 0 || (recur.freq !== "MONTHLY" && recur.freq !== "YEARLY" && parts.BYMONTHDAY !== undefined)) text += ` (rule: ${rrule})`;
  return text;
}

function startFields(start: EventTime): { weekday: string; day: number; month: number } {
  const text = start.kind === "date" ? start.date : start.kind === "utc" ? start.instant.slice(0, 19) : start.wall;
  const wall = parseWall(text.length === 10 ? text : text.slice(0, 19));
  const weekday = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"][new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay()]!;
  return { weekday, day: wall.day, month: wall.month };
}

function dayWords(code: string): string {
  const m = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(code);
  if (m === null) return code;
  const name = DAY_NAMES[m[2]!]!;
  if (m[1] === undefined) return name;
  const n = Number(m[1]);
  return `${ORDINALS[n] ?? `${n}th`} ${name}`;
}

function monthDayWords(day: string | number): string {
  const n = Number(day);
  if (n === -1) return "the last day";
  if (n < 0) return `${-n} days before the end`;
  return String(n);
}

function untilWords(until: ICAL.Time, zone: string): string {
  if (until.isDate) return DateTime.utc(until.year, until.month, until.day).toFormat("d LLL yyyy");
  const utc = until.zone === ICAL.Timezone.utcTimezone;
  const at = utc ? DateTime.fromMillis(until.toUnixTime() * 1000, { zone }) : DateTime.utc(until.year, until.month, until.day);
  return at.toFormat("d LLL yyyy");
}

function list(items: string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && b.every((x) => a.includes(x));
}
