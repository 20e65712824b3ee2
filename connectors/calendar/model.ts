/**
 * The calendar's own model: what a parsed iCalendar event series is, once it has left `ical.js`,
 * and what one occurrence of it is. Series are stored as JSON (see {@link seriesSchema}) and
 * expanded into occurrences on every read, within the window asked for (`expand.ts`).
 *
 * Times keep the form the calendar gave them (RFC 5545 §3.3.5): a DATE (all-day) stays a date, a
 * DATE-TIME with a TZID stays a wall time in that zone, a UTC time stays an instant, and a floating
 * time (neither) is read in the person's zone. Nothing is turned into a UTC midnight (field case C2)
 * and repeating times are computed on the wall clock of the event's zone (field case C1).
 */
import { z } from "zod";

/** `YYYY-MM-DD`. */
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
/** `YYYY-MM-DDTHH:mm:ss` without offset: a wall-clock time. */
const wallTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);

/**
 * A DTSTART / DTEND / RECURRENCE-ID / EXDATE / RDATE value:
 * - `date`: an all-day date (VALUE=DATE);
 * - `zoned`: a wall time in the zone named `tzid` (an IANA name, or a VTIMEZONE of the object);
 * - `utc`: an instant (`…Z`), kept as ISO 8601 UTC with milliseconds;
 * - `floating`: a wall time with no zone, read in the person's zone.
 */
export const eventTimeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("date"), date: isoDate }),
  z.object({ kind: z.literal("zoned"), wall: wallTime, tzid: z.string().min(1).max(200) }),
  z.object({ kind: z.literal("utc"), instant: z.string() }),
  z.object({ kind: z.literal("floating"), wall: wallTime }),
]);
export type EventTime = z.infer<typeof eventTimeSchema>;

/** What a person reads about an event (SUMMARY, LOCATION, DESCRIPTION, …). All of it is untrusted content. */
export const eventDetailsSchema = z.object({
  title: z.string(),
  location: z.string().nullable(),
  description: z.string().nullable(),
  /** STATUS (RFC 5545 §3.8.1.11); CONFIRMED when absent. */
  status: z.enum(["CONFIRMED", "TENTATIVE", "CANCELLED"]),
  /** TRANSP: a TRANSPARENT event does not block time (never a conflict). */
  transparent: z.boolean(),
  /** Number of ATTENDEE properties. */
  attendees: z.number().int().nonnegative(),
  /** Attendee addresses (mailto: stripped), for the approval card. */
  attendeeAddresses: z.array(z.string()).default([]),
  sequence: z.number().int().default(0),
});
export type EventDetails = z.infer<typeof eventDetailsSchema>;

/** One VEVENT: its start, its end (DTEND, or DTSTART + DURATION, exclusive) and its details. */
export const eventComponentSchema = z.object({
  start: eventTimeSchema,
  end: eventTimeSchema,
  details: eventDetailsSchema,
});
export type EventComponent = z.infer<typeof eventComponentSchema>;

/** A RECURRENCE-ID override: the occurrence that would have started at `recurrenceId`, changed. */
export const eventOverrideSchema = eventComponentSchema.extend({ recurrenceId: eventTimeSchema });
export type EventOverride = z.infer<typeof eventOverrideSchema>;

/**
 * Every VEVENT of one UID in one calendar object: the master (absent when the server holds only
 * overridden instances, as for an invitation to one occurrence), its RRULE, RDATEs and EXDATEs, and
 * its RECURRENCE-ID overrides. `timezones` keeps the VTIMEZONE text of any TZID that is not an IANA
 * name, so the series can be read back without the original file.
 */
export const seriesSchema = z.object({
  uid: z.string().min(1),
  master: eventComponentSchema.nullable(),
  rrule: z.string().nullable(),
  rdates: z.array(eventTimeSchema),
  exdates: z.array(eventTimeSchema),
  overrides: z.array(eventOverrideSchema),
  timezones: z.record(z.string(), z.string()).default({}),
});
export type CalendarSeries = z.infer<typeof seriesSchema>;

/** One occurrence of a series, expanded for a window. */
export interface Occurrence {
  uid: string;
  /** Identifies this occurrence within its series (see `occurrenceKey`); null for a single event. */
  recurrenceKey: string | null;
  start: EventTime;
  end: EventTime;
  /** Where the series put this occurrence before any override: its RECURRENCE-ID, as the series writes it. */
  originalStart: EventTime;
  /** Instants of start and end (exclusive), ms since the epoch; all-day dates in the reader's zone. */
  startMs: number;
  endMs: number;
  allDay: boolean;
  details: EventDetails;
  /** The series' RRULE when the occurrence belongs to a repeating event (null for a single one). */
  rrule: string | null;
  /** True when the series repeats (RRULE or RDATE), so a change may concern one occurrence or all. */
  repeats: boolean;
  /** True when this occurrence is a RECURRENCE-ID override (moved or changed). */
  overridden: boolean;
}

/** A problem with one item (a VEVENT, a calendar object, a feed): the item is skipped, the rest kept. */
export interface ItemError {
  /** What the item is: its UID when known, else its href or position (`VEVENT #3`). */
  item: string;
  /** A sentence a person can act on. */
  message: string;
}
