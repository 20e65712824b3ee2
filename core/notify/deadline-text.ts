import { DateTime } from "luxon";
import { fold } from "./text.js";

/**
 * A deadline a candidate states only in words ("due today", "by 17:00", "bis morgen 8:00"), for
 * candidates that need action but were proposed without a `deadline` (issue 12: "a bill due today
 * and a permission slip due tomorrow, found by a monitor, were held"). It reads only explicit
 * relative days — today, tonight, tomorrow — with an optional clock time, in English, German,
 * Spanish, French, Portuguese and Italian; weekdays and calendar dates are left to the producer.
 * It never raises urgency: rule 4 still holds such an item in quiet hours unless the deadline falls
 * before they end.
 */

/** A date-only "tomorrow" is taken as tomorrow at this local time: the person should hear of it the day before. */
export const tomorrowDefaultTime = "09:00";

/** Words that tie a day to the action ("due", "pay by", "until") — "arrives tomorrow" alone is not a deadline. */
const deadlineCue =
  /\b(due|deadline|expires?|closes?|by|before|until|till|no later than|last day|pay|sign|submit|return|renew|confirm|fallig|frist|bis|spatestens|lauft ab|vence|vencimiento|plazo|antes d[eo]|hasta|caduca|a payer|a rendre|echeance|date limite|avant|jusqu'a|expire|prazo|ate|vencimento|scade|scadenza|entro|prima d[ei])\b/;

const today = /\b(today|tonight|this evening|before midnight|end of (the )?day|heute|heute abend|heute nacht|hoy|esta noche|aujourd'?hui|ce soir|hoje|esta noite|oggi|stasera|stanotte)\b/;
const tomorrow = /\b(tomorrow|morgen|manana|demain|amanha|domani)\b/;
/** "heute Morgen" / "this morning" name a time of today, not tomorrow. */
const morningOfToday = /\b(heute|this) (morgen|morning)\b/;
const clockTime = /\b(\d{1,2})(?:[:h](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|uhr|h\b)?/g;

/**
 * The deadline stated in `text`, as an instant, or null when the text names none (or only one that
 * has passed). Local days and clock times are read in `timeZone` (IANA), so DST days are handled
 * by luxon. "Today"/"tonight" without a time → end of the local day; "tomorrow" without a time →
 * tomorrow at `tomorrowDefaultTime`; a time alone with a deadline cue ("by 17:00") → that time today.
 */
export function impliedDeadline(text: string, now: Date, timeZone: string): Date | null {
  const f = fold(text).replace(morningOfToday, "today morning");
  if (!deadlineCue.test(f)) return null;
  const local = DateTime.fromJSDate(now, { zone: timeZone });
  const isTomorrow = tomorrow.test(f.replace(/\btoday morning\b/, ""));
  const isToday = today.test(f) || /\btoday morning\b/.test(f);
  const time = clockOf(f);
  let at: DateTime | null = null;
  if (isTomorrow) {
    const [h, m] = time ?? tomorrowDefaultTime.split(":").map(Number);
    at = local.plus({ days: 1 }).set({ hour: h!, minute: m!, second: 0, millisecond: 0 });
  } else if (isToday) {
    at = time ? local.set({ hour: time[0], minute: time[1], second: 0, millisecond: 0 }) : local.endOf("day");
  } else if (time && /\b(by|before|until|till|bis|hasta|avant|jusqu'a|ate|entro|antes d[eo]|prima d[ei]|closes?|expires?)\s*(\d|at\b|um\b|a las\b|as\b|alle\b)/.test(f)) {
    at = local.set({ hour: time[0], minute: time[1], second: 0, millisecond: 0 });
  }
  if (!at || !at.isValid || at.toMillis() <= now.getTime()) return null;
  return at.toJSDate();
}

/** The first plausible clock time in folded text (17:00, 5pm, 8 Uhr, 14h30), as [hour, minute]. */
function clockOf(f: string): [number, number] | null {
  for (const m of f.matchAll(clockTime)) {
    const hasMinutes = m[2] !== undefined;
    const meridiem = m[3];
    if (!hasMinutes && !meridiem) continue;
    let h = Number(m[1]);
    const min = hasMinutes ? Number(m[2]) : 0;
    if (meridiem?.startsWith("p") && h < 12) h += 12;
    if (meridiem?.startsWith("a") && h === 12) h = 0;
    if (h > 23 || min > 59) continue;
    return [h, min];
  }
  return null;
}
