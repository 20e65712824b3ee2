/**
 * The arguments of the calendar's write tools (zod), and how a repetition the model asks for
 * becomes an RRULE: the model names a frequency, weekdays, a count or a last local date — never an
 * RRULE's UTC `UNTIL`, which this module computes in the person's zone.
 */
import { DateTime } from "luxon";
import { z } from "zod";

const localTime = z.string().min(10).max(40);
const weekday = z.enum(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]);

/** How an event repeats, as the model gives it. */
export const repeatSchema = z
  .object({
    frequency: z.enum(["daily", "weekly", "monthly", "yearly"]),
    interval: z.number().int().min(1).max(99).optional().describe("Every n days/weeks/months/years (default 1)"),
    weekdays: z.array(weekday).min(1).max(7).optional().describe("For weekly: the days, e.g. [\"MO\",\"WE\"]"),
    count: z.number().int().min(1).max(1000).optional().describe("Stop after this many occurrences"),
    until: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().describe("Last local date it may occur on (YYYY-MM-DD)"),
  })
  .strict()
  .refine((r) => !(r.count !== undefined && r.until !== undefined), { message: "give count or until, not both" });
export type RepeatArgs = z.infer<typeof repeatSchema>;

const attendees = z.array(z.email().max(254)).max(50);

/** `calendar_create`. */
export const createArgsSchema = z
  .object({
    title: z.string().trim().min(1).max(300),
    start: localTime.describe("Local date YYYY-MM-DD (all-day) or local time YYYY-MM-DDTHH:MM, in the person's time zone"),
    end: localTime.optional().describe("Same form as start; all-day: the last day (inclusive). Default: one hour, or one day"),
    calendar: z.string().min(1).max(200).optional().describe("Calendar name as listed (default: the first writable one)"),
    location: z.string().max(500).optional(),
    description: z.string().max(4000).optional(),
    attendees: attendees.optional().describe("E-mail addresses to invite"),
    repeat: repeatSchema.optional(),
  })
  .strict();
export type CreateArgs = z.infer<typeof createArgsSchema>;

const eventId = z.string().regex(/^ev_[0-9a-f]{12}$/).describe("The event's id from calendar_list");
const occurrence = localTime.optional().describe("For a repeating event: the start of the occurrence as calendar_list shows it");
const scope = z.enum(["occurrence", "series"]).optional().describe("For a repeating event: change only this occurrence, or the whole series");

/** `calendar_update`: only the fields given change. */
export const updateArgsSchema = z
  .object({
    event: eventId,
    occurrence,
    scope,
    title: z.string().trim().min(1).max(300).optional(),
    start: localTime.optional().describe("New start (local); the end moves with it unless end is given"),
    end: localTime.optional(),
    location: z.string().max(500).nullable().optional(),
    description: z.string().max(4000).nullable().optional(),
    attendees: attendees.optional(),
    repeat: repeatSchema.nullable().optional().describe("New repetition for the whole series; null: stop repeating"),
  })
  .strict();
export type UpdateArgs = z.infer<typeof updateArgsSchema>;

/** `calendar_delete`. */
export const deleteArgsSchema = z.object({ event: eventId, occurrence, scope }).strict();
export type DeleteArgs = z.infer<typeof deleteArgsSchema>;

/**
 * The RRULE of a repetition. A last date becomes UNTIL: a date for an all-day event, else the end
 * of that local day in `zone` as UTC (RFC 5545 §3.3.10: UNTIL is UTC when DTSTART has a TZID).
 */
export function rruleOf(repeat: RepeatArgs, allDay: boolean, zone: string): string {
  const parts = [`FREQ=${repeat.frequency.toUpperCase()}`];
  if (repeat.interval !== undefined && repeat.interval > 1) parts.push(`INTERVAL=${repeat.interval}`);
  if (repeat.weekdays !== undefined && repeat.frequency === "weekly") parts.push(`BYDAY=${[...new Set(repeat.weekdays)].join(",")}`);
  if (repeat.count !== undefined) parts.push(`COUNT=${repeat.count}`);
  if (repeat.until !== undefined) {
    if (allDay) parts.push(`UNTIL=${repeat.until.replace(/-/g, "")}`);
    else {
      const end = DateTime.fromISO(repeat.until, { zone }).endOf("day").toUTC();
      parts.push(`UNTIL=${end.toFormat("yyyyLLdd'T'HHmmss'Z'")}`);
    }
  }
  return parts.join(";");
}
