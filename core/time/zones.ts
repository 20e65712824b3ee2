import { CronExpressionParser } from "cron-parser";

/** True when `name` is an IANA time zone this runtime knows (e.g. `Asia/Tokyo`, `UTC`). */
export function isValidTimeZone(name: string): boolean {
  if (!name || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The first instant strictly after `after` matching a 5-field cron expression in an IANA time zone
 * (cron-parser handles DST gaps and overlaps). Throws Error with cron-parser's message when the
 * expression is invalid.
 */
export function nextCronTime(cron: string, timeZone: string, after: Date): Date {
  return CronExpressionParser.parse(cron, { currentDate: after, tz: timeZone }).next().toDate();
}

/** Minutes since local midnight of `at` in `timeZone`. */
export function localMinutes(at: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(at);
  const h = Number(parts.find((p) => p.type === "hour")?.value ?? 0);
  const m = Number(parts.find((p) => p.type === "minute")?.value ?? 0);
  return h * 60 + m;
}

/** `at` as local date and time in `timeZone`, e.g. `Tue 01 Dec 2026, 09:30 (GMT+1)`; ISO if the zone is unknown. */
export function formatLocal(at: Date, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat("en-GB", {
      timeZone,
      weekday: "short",
      day: "2-digit",
      month: "short",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "shortOffset",
    }).format(at);
  } catch {
    return at.toISOString();
  }
}

/**
 * A person's typed time zone as its canonical IANA name, or null when it names none or several:
 * an IANA name in any case (`europe/berlin` → `Europe/Berlin`), or a city / last part of one
 * (`berlin` → `Europe/Berlin`, `new york` → `America/New_York`) when exactly one zone has it.
 * Names come from the runtime's ICU data (`Intl.supportedValuesOf("timeZone")`).
 */
export function resolveTimeZone(input: string): string | null {
  const typed = input.trim();
  if (!typed || typed.length > 64) return null;
  if (isValidTimeZone(typed)) return new Intl.DateTimeFormat("en-US", { timeZone: typed }).resolvedOptions().timeZone;
  const key = (s: string) => s.toLowerCase().replace(/[_\s]+/g, " ");
  const wanted = key(typed);
  const matches = Intl.supportedValuesOf("timeZone").filter((zone) => key(zone.split("/").at(-1) ?? zone) === wanted);
  return matches.length === 1 ? matches[0]! : null;
}
