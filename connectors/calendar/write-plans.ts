/**
 * What a calendar write would do, described exactly for Sentinel's card before it happens, and how
 * it is done after the person (or a grant) allows it.
 *
 * A plan is built twice — when Sentinel judges the call (`describe`) and again when it runs — and
 * runs only if both have the same digest: what shapes the effect (calendar, event version by ETag,
 * occurrence, every changed field) is in it, so an approval never covers a different change, and a
 * change made on the server since the card was shown is refused instead of overwritten. In an
 * activation tainted by outside content (an event description, a feed) only "Approve once" is
 * offered, so no standing grant lets outside text change the calendar.
 *
 * The card says the title, weekday, date and local time range with the zone, attendees, the
 * repetition in words, and for a repeating event whether one occurrence or the whole series changes.
 */
import { createHash } from "node:crypto";
import type { Clock } from "../../core/clock.js";
import type { PersonId } from "../../core/ids.js";
import { actionDigest, ActionUnavailableError, type ActionDescription, type ToolContext, type ToolResult } from "../../core/tools/index.js";
import { CaldavClient, type CaldavOptions } from "./caldav.js";
import type { CalendarConnections } from "./connections.js";
import { CalendarError } from "./errors.js";
import type { CalendarHttp } from "./http.js";
import { describeRecurrence } from "./ical/describe.js";
import { parseICalendar } from "./ical/parse.js";
import { newEventIcs, type EventDraft } from "./ical/write.js";
import type { EventTime } from "./model.js";
import { quote, readLocal, whenWords, type LocalInput } from "./present.js";
import { eventIdOf, storedItem, type CalendarStore, type StoredCalendar } from "./store.js";
import { rruleOf, type CreateArgs } from "./write-args.js";

/** What the write tools need. */
export interface CalendarWriteDeps {
  store: CalendarStore;
  connections: CalendarConnections;
  /** The egress path for requests that carry `credential` (the connection's own password) on purpose to its server. */
  httpFor(credential: string): CalendarHttp;
  clock: Clock;
  /** The person's IANA zone (the one `/timezone` sets). */
  personZone(personId: PersonId): Promise<string>;
  caldav?: CaldavOptions;
}

/** A described write and how to perform it. */
export interface WritePlan {
  description: ActionDescription;
  perform(context: ToolContext): Promise<ToolResult>;
}

/** The card's facts, in order. */
export type PlanFields = { name: string; value: string }[];

/** Refuses to describe a write: the model is told why, and nothing is asked or done. */
export function refuse(code: "not_found" | "calendar_read_only" | "invalid_arguments" | "calendar_unavailable", message: string): never {
  throw new ActionUnavailableError(code, message);
}

/** The person's calendars they may write now (CalDAV, with the connection's *write* capability). */
export async function writableCalendars(deps: Pick<CalendarWriteDeps, "store" | "connections">, personId: PersonId): Promise<StoredCalendar[]> {
  const writable = new Set((await deps.connections.list(personId)).filter((c) => c.kind === "caldav" && c.capabilities.write).map((c) => c.id));
  return (await deps.store.listCalendars(personId)).filter((c) => c.kind === "caldav" && c.writable && writable.has(c.sourceId));
}

/** A CalDAV client for a calendar's connection, with its credentials read from the vault now. */
export async function clientFor(deps: CalendarWriteDeps, personId: PersonId, calendar: StoredCalendar): Promise<CaldavClient> {
  const credentials = await deps.connections.credentials(personId, calendar.sourceId);
  return new CaldavClient(credentials, deps.httpFor(credentials.password), deps.caldav);
}

/** The action description of a write (see the file comment). */
export function describeWrite(input: {
  method: "WRITE" | "DELETE";
  calendar: StoredCalendar;
  summary: string;
  fields: PlanFields;
  digestOf: Record<string, unknown>;
  hardToUndo: boolean;
  context: ToolContext;
}): ActionDescription {
  return {
    capability: "calendar.write",
    access: "write",
    hardToUndo: input.hardToUndo,
    method: input.method,
    destinations: [input.calendar.url],
    carriesData: true,
    summary: input.summary,
    page: null,
    fields: input.fields,
    purchase: null,
    onceOnly: input.context.tainted === true,
    digest: actionDigest(JSON.parse(JSON.stringify(input.digestOf)) as never),
  };
}

/** A local input as an event time in `zone` (a date stays a date). */
export function eventTimeOf(input: LocalInput, zone: string): EventTime {
  return input.kind === "date" ? { kind: "date", date: input.date } : { kind: "zoned", wall: input.wall, tzid: zone };
}

/**
 * Reads a start and an optional end the model gave: all-day (an inclusive last date) or timed
 * (default one hour). Returns the end as exclusive.
 */
export function readSpan(startText: string, endText: string | undefined, zone: string): { start: LocalInput; end: LocalInput } {
  let start: LocalInput;
  let end: LocalInput | null = null;
  try {
    start = readLocal(startText, zone);
    if (endText !== undefined) end = readLocal(endText, zone);
  } catch (error) {
    return refuse("invalid_arguments", (error as Error).message);
  }
  if (start.kind === "date") {
    if (end !== null && end.kind !== "date") refuse("invalid_arguments", "an all-day event (start is a date) needs an end date too");
    const last = end?.kind === "date" ? end.date : start.date;
    if (last < start.date) refuse("invalid_arguments", `the last day (${last}) is before the first (${start.date})`);
    const next = new Date(Date.parse(`${last}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    return { start, end: { kind: "date", date: next } };
  }
  if (end !== null && end.kind !== "wall") refuse("invalid_arguments", "a timed event (start has a time) needs an end time too, YYYY-MM-DDTHH:MM");
  const finish = end ?? readLocal(new Date(start.ms + 3_600_000).toISOString(), zone);
  if (finish.kind !== "wall" || finish.ms <= start.ms) refuse("invalid_arguments", `the end (${endText}) must be after the start (${startText})`);
  return { start, end: finish };
}

/** The card facts of an event draft. */
export function draftFields(calendar: StoredCalendar, draft: Pick<EventDraft, "title" | "location" | "description" | "attendees" | "rrule">, when: string, repeats: string | null): PlanFields {
  const fields: PlanFields = [
    { name: "Calendar", value: calendar.name },
    { name: "Title", value: draft.title },
    { name: "When", value: when },
    { name: "Repeats", value: repeats ?? "no (a single event)" },
    { name: "Attendees", value: draft.attendees && draft.attendees.length > 0 ? `${draft.attendees.join(", ")} (they may receive an invitation)` : "none" },
  ];
  if (draft.location) fields.push({ name: "Location", value: draft.location });
  if (draft.description) fields.push({ name: "Notes", value: draft.description.length > 300 ? `${draft.description.slice(0, 299)}…` : draft.description });
  return fields;
}

/** The plan of `calendar_create`. */
export async function planCreate(deps: CalendarWriteDeps, args: CreateArgs, context: ToolContext): Promise<WritePlan> {
  const zone = await deps.personZone(context.personId);
  const calendars = await writableCalendars(deps, context.personId);
  if (calendars.length === 0) refuse("calendar_read_only", "No calendar is connected with write access. The person can allow writing for a CalDAV connection in the web app's Connections section.");
  const calendar = args.calendar === undefined ? calendars[0]! : calendars.find((c) => c.name.toLowerCase() === args.calendar!.trim().toLowerCase());
  if (calendar === undefined) refuse("not_found", `There is no writable calendar named ${quote(args.calendar!)}. Writable calendars: ${calendars.map((c) => quote(c.name)).join(", ")}.`);
  const span = readSpan(args.start, args.end, zone);
  const start = eventTimeOf(span.start, zone);
  const rrule = args.repeat ? rruleOf(args.repeat, start.kind === "date", zone) : null;
  const draft: EventDraft = {
    title: args.title,
    start,
    end: eventTimeOf(span.end, zone),
    location: args.location ?? null,
    description: args.description ?? null,
    attendees: args.attendees ?? [],
    rrule,
  };
  const when = whenWords(span.start, span.end, zone);
  const repeats = describeRecurrence(rrule, start, 0, zone);
  const description = describeWrite({
    method: "WRITE",
    calendar,
    summary: `Add ${quote(args.title)} to the calendar ${quote(calendar.name)}: ${when}${repeats ? `, repeating ${repeats}` : ""}`,
    fields: draftFields(calendar, draft, when, repeats),
    digestOf: { tool: "calendar_create", calendar: calendar.url, draft },
    hardToUndo: (draft.attendees?.length ?? 0) > 0,
    context,
  });
  return {
    description,
    async perform(run) {
      // The same call run again (a retry after a crash) makes the same UID and finds it created.
      const uid = `familiar-${createHash("sha256").update(run.idempotencyKey).digest("hex").slice(0, 24)}@familiar`;
      const ics = newEventIcs(draft, { uid, now: deps.clock.now() });
      const client = await clientFor(deps, run.personId, calendar);
      let written: { href: string; etag: string | null };
      try {
        written = await client.create(calendar.url, uid, ics);
      } catch (error) {
        if (!(error instanceof CalendarError && error.code === "conflict")) throw error;
        written = { href: new URL(`${encodeURIComponent(uid)}.ics`, calendar.url).href, etag: null };
      }
      await deps.store.applySync(run.personId, calendar.calendarId, { upserts: [storedItem(written.href, written.etag, ics, parseICalendar(ics).series)], deletes: [] });
      return { ok: true, content: `Created ${quote(args.title)} in the calendar ${quote(calendar.name)}: ${when}${repeats ? `, repeating ${repeats}` : ""}. Event id ${eventIdOf(calendar.calendarId, uid)}.` };
    },
  };
}
