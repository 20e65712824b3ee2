/**
 * Time zones of calendar data: a TZID becomes a zone, and a wall-clock time in that zone becomes an
 * instant (and back).
 *
 * A TZID is read, in order, as an IANA name (`Europe/Berlin`, also behind a vendor prefix such as
 * `/mozilla.org/20050126_1/Europe/Berlin`), then through the object's own VTIMEZONE (Outlook's
 * `W. Europe Standard Time`, parsed by ical.js). The IANA database wins when both exist: a VTIMEZONE
 * often carries only the rules of the year it was written. Anything else is an unknown zone, and
 * the event using it is reported as an error rather than guessed.
 *
 * RFC 5545 §3.3.5: a wall time that does not exist (the hour skipped in spring) is read with the
 * offset before the gap; one that exists twice (the hour repeated in autumn) is the first of the two.
 */
import ICAL from "ical.js";
import { DateTime, IANAZone } from "luxon";

/** A zone an event time can be read in. */
export type Zone = { kind: "iana"; name: string } | { kind: "vtimezone"; tzid: string; timezone: ICAL.Timezone };

/** Wall-clock fields (month 1–12). */
export interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const DAY_MS = 86_400_000;
const ianaCache = new Map<string, string | null>();

/** The canonical IANA name `tzid` stands for (directly or behind a `/vendor/version/` prefix), or null. */
export function ianaName(tzid: string): string | null {
  const cached = ianaCache.get(tzid);
  if (cached !== undefined) return cached;
  let found: string | null = null;
  const trimmed = tzid.trim().replace(/^"|"$/g, "");
  const parts = trimmed.split("/").filter((p) => p !== "");
  // Longest suffix first: "America/Argentina/Buenos_Aires" before "Argentina/Buenos_Aires".
  for (let take = Math.min(parts.length, 3); take >= 1 && found === null; take--) {
    const candidate = parts.slice(parts.length - take).join("/");
    if (take === 1 && trimmed.includes("/") && !/^(UTC|GMT|Etc)$/i.test(candidate)) continue;
    if (IANAZone.isValidZone(candidate)) found = new Intl.DateTimeFormat("en-US", { timeZone: candidate }).resolvedOptions().timeZone;
  }
  ianaCache.set(tzid, found);
  return found;
}

/**
 * The zone of a TZID, or null when neither the IANA database nor `vtimezones` (this object's
 * VTIMEZONE components, by TZID) knows it.
 */
export function zoneOf(tzid: string, vtimezones: ReadonlyMap<string, ICAL.Timezone>): Zone | null {
  const name = ianaName(tzid);
  if (name !== null) return { kind: "iana", name };
  const timezone = vtimezones.get(tzid);
  return timezone === undefined ? null : { kind: "vtimezone", tzid, timezone };
}

const QUARTER_MS = 15 * 60_000;
/** Per zone: offset by UTC day when the whole day has one offset; `null` marks a day with a change. */
const dayOffsets = new Map<string, Map<number, number | null>>();
/** Per zone: offset by quarter hour, for days with a change. */
const quarterOffsets = new Map<string, Map<number, number>>();
const CACHE_LIMIT = 100_000;

/**
 * Offset of `zone` from UTC at instant `ms`, in minutes (east positive). Asking Intl costs tens of
 * microseconds, so answers are kept: per UTC day when the day's first and last minute agree, else
 * per quarter hour — exact for every offset change since 1970, as all of them fall on a quarter hour
 * in UTC (offsets in use are multiples of 15 minutes). Earlier instants are asked directly.
 */
function ianaOffset(name: string, ms: number): number {
  if (ms < 0) return IANAZone.create(name).offset(ms);
  const zone = IANAZone.create(name);
  const days = cacheFor(dayOffsets, name);
  const day = Math.floor(ms / DAY_MS);
  let whole = days.get(day);
  if (whole === undefined) {
    const first = zone.offset(day * DAY_MS);
    whole = first === zone.offset((day + 1) * DAY_MS - 60_000) ? first : null;
    days.set(day, whole);
  }
  if (whole !== null) return whole;
  const quarters = cacheFor(quarterOffsets, name);
  const quarter = Math.floor(ms / QUARTER_MS);
  let offset = quarters.get(quarter);
  if (offset === undefined) {
    offset = zone.offset(quarter * QUARTER_MS);
    quarters.set(quarter, offset);
  }
  return offset;
}

function cacheFor<V>(caches: Map<string, Map<number, V>>, name: string): Map<number, V> {
  let cache = caches.get(name);
  if (cache === undefined || cache.size > CACHE_LIMIT) {
    cache = new Map();
    caches.set(name, cache);
  }
  return cache;
}

/** Milliseconds of `wall` read as if it were UTC (a number to do arithmetic on wall times). */
export function wallAsUtcMs(wall: Wall): number {
  return Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
}

/** The wall fields of a "wall as UTC" number (inverse of {@link wallAsUtcMs}). */
export function wallFromUtcMs(ms: number): Wall {
  const d = new Date(ms);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
}

/**
 * The instant (ms since the epoch) of a wall time in `zone`, by RFC 5545's rules for the skipped
 * and the repeated hour (see the file comment).
 */
export function wallToInstant(wall: Wall, zone: Zone): number {
  if (zone.kind === "vtimezone") {
    const time = ICAL.Time.fromData({ ...wall, isDate: false }, zone.timezone);
    return time.toUnixTime() * 1000;
  }
  const base = wallAsUtcMs(wall);
  const before = ianaOffset(zone.name, base - DAY_MS);
  let best: number | null = null;
  for (const offset of new Set([before, ianaOffset(zone.name, base), ianaOffset(zone.name, base + DAY_MS)])) {
    const candidate = base - offset * 60_000;
    if (ianaOffset(zone.name, candidate) === offset && (best === null || candidate < best)) best = candidate;
  }
  return best ?? base - before * 60_000;
}

/** The wall time in `zone` at instant `ms`. */
export function instantToWall(ms: number, zone: Zone): Wall {
  if (zone.kind === "vtimezone") {
    const local = ICAL.Time.fromJSDate(new Date(ms), true).convertToZone(zone.timezone);
    return { year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute, second: local.second };
  }
  return wallFromUtcMs(ms + ianaOffset(zone.name, ms) * 60_000);
}

/** `YYYY-MM-DDTHH:mm:ss` of a wall time. */
export function formatWall(wall: Wall): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(wall.year, 4)}-${p(wall.month)}-${p(wall.day)}T${p(wall.hour)}:${p(wall.minute)}:${p(wall.second)}`;
}

/** Parses `YYYY-MM-DDTHH:mm:ss` or `YYYY-MM-DD` (midnight). */
export function parseWall(text: string): Wall {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}))?$/.exec(text);
  if (m === null) throw new Error(`not a wall time: ${text}`);
  return { year: +m[1]!, month: +m[2]!, day: +m[3]!, hour: +(m[4] ?? 0), minute: +(m[5] ?? 0), second: +(m[6] ?? 0) };
}

/** Midnight starting `date` (`YYYY-MM-DD`) in the IANA zone `zoneName`, as an instant. */
export function startOfDate(date: string, zoneName: string): number {
  return wallToInstant(parseWall(date), { kind: "iana", name: zoneName });
}

/** `date` plus `days` (may be negative), as `YYYY-MM-DD`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (`YYYY-MM-DD` each). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** ISO 8601 with the offset of `zoneName` at that instant, seconds kept: `2026-03-30T09:00:00+02:00`. */
export function isoInZone(ms: number, zoneName: string): string {
  return DateTime.fromMillis(ms, { zone: zoneName }).toISO({ suppressMilliseconds: true, includeOffset: true }) ?? new Date(ms).toISOString();
}
