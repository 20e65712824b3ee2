/**
 * A VTIMEZONE component for an IANA zone, written from the zone database (luxon / Intl), so events
 * Familiar writes carry the definition RFC 5545 §3.6.5 asks for with every TZID.
 *
 * The zone's transitions around the event's year are found by scanning offsets; when each kind
 * (daylight, standard) falls on the same weekday rule every year (`last Sunday of March at 02:00`)
 * it is written as one observance with a yearly RRULE, else every transition of the years covered
 * is written out. A zone without transitions gets one STANDARD observance.
 */
import { DateTime, IANAZone } from "luxon";

interface Transition {
  /** Instant of the change, ms. */
  at: number;
  fromMinutes: number;
  toMinutes: number;
  daylight: boolean;
  name: string;
  /** Local onset in the old offset (the observance's DTSTART). */
  local: DateTime;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The VTIMEZONE text (BEGIN:VTIMEZONE … END:VTIMEZONE, CRLF lines) for `zone` around `year`.
 * @throws Error when `zone` is not an IANA zone
 */
export function vtimezoneFor(zone: string, year: number): string {
  if (!IANAZone.isValidZone(zone)) throw new Error(`not an IANA time zone: ${zone}`);
  const tz = IANAZone.create(zone);
  const transitions = transitionsBetween(tz, Date.UTC(year - 1, 0, 1), Date.UTC(year + 2, 0, 1), zone);
  const lines = ["BEGIN:VTIMEZONE", `TZID:${zone}`];
  if (transitions.length === 0) {
    const offset = tz.offset(Date.UTC(year, 0, 1));
    const name = DateTime.fromMillis(Date.UTC(year, 0, 1), { zone }).offsetNameShort ?? formatOffset(offset);
    lines.push(...observance("STANDARD", "19700101T000000", offset, offset, name, null));
  } else {
    const rules = yearlyRules(transitions);
    if (rules !== null) {
      for (const rule of rules) lines.push(...observance(rule.first.daylight ? "DAYLIGHT" : "STANDARD", localStamp(rule.first.local), rule.first.fromMinutes, rule.first.toMinutes, rule.first.name, rule.rrule));
    } else {
      for (const t of transitionsBetween(tz, Date.UTC(year - 1, 0, 1), Date.UTC(year + 11, 0, 1), zone)) {
        lines.push(...observance(t.daylight ? "DAYLIGHT" : "STANDARD", localStamp(t.local), t.fromMinutes, t.toMinutes, t.name, null));
      }
    }
  }
  lines.push("END:VTIMEZONE");
  return lines.join("\r\n");
}

function observance(kind: string, dtstart: string, from: number, to: number, name: string, rrule: string | null): string[] {
  return [`BEGIN:${kind}`, `DTSTART:${dtstart}`, `TZOFFSETFROM:${formatOffset(from)}`, `TZOFFSETTO:${formatOffset(to)}`, ...(rrule ? [`RRULE:${rrule}`] : []), `TZNAME:${name}`, `END:${kind}`];
}

/** Every offset change in `[fromMs, toMs)`, to the minute (days scanned, then bisected). */
function transitionsBetween(tz: IANAZone, fromMs: number, toMs: number, zone: string): Transition[] {
  const out: Transition[] = [];
  let previous = tz.offset(fromMs);
  for (let day = fromMs + DAY; day <= toMs; day += DAY) {
    const offset = tz.offset(day);
    if (offset === previous) continue;
    let lo = day - DAY;
    let hi = day;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (mid <= lo) break;
      if (tz.offset(mid) === previous) lo = mid;
      else hi = mid;
    }
    const after = DateTime.fromMillis(hi, { zone });
    out.push({
      at: hi,
      fromMinutes: previous,
      toMinutes: offset,
      daylight: after.isInDST,
      name: after.offsetNameShort ?? formatOffset(offset),
      local: DateTime.fromMillis(hi + previous * 60_000, { zone: "UTC" }),
    });
    previous = offset;
  }
  return out;
}

/** One yearly RRULE per kind of transition, when every year follows it; else null. */
function yearlyRules(transitions: Transition[]): { first: Transition; rrule: string }[] | null {
  const rules: { first: Transition; rrule: string }[] = [];
  for (const daylight of [true, false]) {
    const kind = transitions.filter((t) => t.daylight === daylight);
    if (kind.length === 0) continue;
    const shapes = kind.map((t) => {
      const { month, weekday, day, daysInMonth, hour, minute } = t.local;
      const last = day + 7 > daysInMonth!;
      return { month, weekday, ordinal: last ? -1 : Math.ceil(day / 7), hour, minute, offsets: `${t.fromMinutes}/${t.toMinutes}` };
    });
    const first = shapes[0]!;
    const same = shapes.every((s) => s.month === first.month && s.weekday === first.weekday && s.hour === first.hour && s.minute === first.minute && s.offsets === first.offsets && s.ordinal === first.ordinal);
    if (!same || kind.length < 3) return null;
    const day = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][first.weekday - 1]!;
    rules.push({ first: kind[0]!, rrule: `FREQ=YEARLY;BYMONTH=${first.month};BYDAY=${first.ordinal}${day}` });
  }
  return rules;
}

function localStamp(local: DateTime): string {
  return local.toFormat("yyyyLLdd'T'HHmmss");
}

/** `+0130` / `-0500` for minutes east of UTC. */
function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}${String(abs % 60).padStart(2, "0")}`;
}
