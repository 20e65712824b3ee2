/**
 * The calendar's read tools, offered when the person granted *read* on a calendar connection:
 *
 * - `calendar_list {from, to, calendar?}`: every occurrence in the window, expanded by Familiar, with
 *   start and end as ISO 8601 local times with the offset in the person's zone (all-day events as a
 *   date, a multi-day one as its first and last date), title, location, calendar, repetition in
 *   words, attendee count, and an event id for the write tools;
 * - `calendar_conflicts {from, to}`: overlapping events of the person's own calendars.
 *
 * They read Familiar's synced copy (no network), so Sentinel treats them as internal reads (allowed,
 * audited). Titles, places and descriptions come from outside: a result with events in it is
 * untrusted content and taints the activation.
 */
import { z } from "zod";
import type { PersonId } from "../../core/ids.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../../core/tools/index.js";
import { agendaFor, type AgendaEntry } from "./agenda.js";
import { findConflicts } from "./conflicts.js";
import type { CalendarConnections } from "./connections.js";
import { occurrenceLine, occurrenceTimes, quote, readWindow, repeatWords } from "./present.js";
import { eventIdOf, type CalendarStore, type StoredCalendar } from "./store.js";

/** What the read tools need. */
export interface CalendarReadDeps {
  store: CalendarStore;
  connections: Pick<CalendarConnections, "list" | "granted">;
  /** The person's IANA zone and locale (the one `/timezone` sets). */
  personZone(personId: PersonId): Promise<string>;
}

/** Occurrences `calendar_list` shows at most (the rest is counted, and a shorter window suggested). */
export const MAX_LISTED = 200;

const windowArgs = {
  from: z.string().min(10).max(40).describe("Start: a local date YYYY-MM-DD or local time YYYY-MM-DDTHH:MM in the person's time zone"),
  to: z.string().min(10).max(40).describe("End: a local date (that whole day is included) or local time YYYY-MM-DDTHH:MM"),
};

/** `calendar_list` and `calendar_conflicts`. */
export function calendarReadTools(deps: CalendarReadDeps): ToolDefinition[] {
  const offered = (personId: PersonId) => deps.connections.granted(personId, "read");
  const list = defineTool({
    name: "calendar_list",
    description:
      "List every event occurrence in a time window from the person's calendars and followed calendar feeds, with local start and end times (the person's time zone), location, calendar, repetition and attendee count. Give dates or local times; never compute offsets.",
    parameters: z.object({ ...windowArgs, calendar: z.string().min(1).max(200).optional().describe("Only this calendar (its name as listed)") }),
    sideEffect: false,
    capability: "calendar.read",
    offered,
    async execute(args, context) {
      const scope = await readableCalendars(deps, context.personId, args.calendar);
      if ("error" in scope) return scope.error;
      const zone = await deps.personZone(context.personId);
      let window: { fromMs: number; toMs: number };
      try {
        window = readWindow(args.from, args.to, zone);
      } catch (error) {
        return { ok: false, code: "invalid_arguments", error: (error as Error).message };
      }
      const agenda = await agendaFor(deps.store, context.personId, window, zone, { calendarIds: scope.calendars.map((c) => c.calendarId), maxPerSeries: MAX_LISTED + 1 });
      const shown = agenda.entries.slice(0, MAX_LISTED);
      const lines = [`${agenda.entries.length} ${agenda.entries.length === 1 ? "occurrence" : "occurrences"} from ${args.from} to ${args.to} (times in ${zone}):`];
      for (const entry of shown) lines.push(occurrenceLine(entry, zone, eventIdOf(entry.calendarId, entry.uid)) + descriptionNote(entry));
      if (agenda.entries.length > shown.length) lines.push(`… and ${agenda.entries.length - shown.length} more: ask for a shorter window to see them.`);
      for (const t of agenda.truncated) lines.push(`Note: ${quote(t.title)} (${t.calendarName}) repeats more often than can be listed here; only its first occurrences are shown.`);
      lines.push(...syncNotes(scope.calendars));
      return {
        ok: true,
        content: lines.join("\n"),
        data: { zone, occurrences: shown.map((e) => entryData(e, zone)), more: agenda.entries.length - shown.length },
        ...(shown.length > 0 ? { untrusted: { source: `calendar (${[...new Set(shown.map((e) => e.calendarName))].join(", ")})` } } : {}),
      };
    },
  });
  const conflicts = defineTool({
    name: "calendar_conflicts",
    description: "Find overlapping events in the person's own calendars (not followed feeds) within a time window. Give dates or local times.",
    parameters: z.object(windowArgs),
    sideEffect: false,
    capability: "calendar.read",
    offered,
    async execute(args, context) {
      const scope = await readableCalendars(deps, context.personId, undefined);
      if ("error" in scope) return scope.error;
      const zone = await deps.personZone(context.personId);
      let window: { fromMs: number; toMs: number };
      try {
        window = readWindow(args.from, args.to, zone);
      } catch (error) {
        return { ok: false, code: "invalid_arguments", error: (error as Error).message };
      }
      const own = scope.calendars.filter((c) => c.kind === "caldav").map((c) => c.calendarId);
      const agenda = await agendaFor(deps.store, context.personId, window, zone, { calendarIds: own });
      const found = findConflicts(agenda.entries);
      if (found.length === 0) return { ok: true, content: `No overlapping events from ${args.from} to ${args.to} (times in ${zone}).` };
      const side = (e: AgendaEntry) => {
        const t = occurrenceTimes(e, zone);
        return `${quote(e.details.title)} ${t.start} to ${t.end} (calendar ${quote(e.calendarName)}, id ${eventIdOf(e.calendarId, e.uid)})`;
      };
      const lines = [`${found.length} ${found.length === 1 ? "conflict" : "conflicts"} from ${args.from} to ${args.to} (times in ${zone}):`, ...found.map((c) => `- ${side(c.first)} overlaps ${side(c.second)}`)];
      return { ok: true, content: lines.join("\n"), data: { zone, conflicts: found.map((c) => ({ first: entryData(c.first, zone), second: entryData(c.second, zone) })) }, untrusted: { source: "calendar" } };
    },
  });
  return [list, conflicts];
}

/** The calendars the person may read now (their connection has *read*), optionally one by name. */
async function readableCalendars(deps: CalendarReadDeps, personId: PersonId, name: string | undefined): Promise<{ calendars: StoredCalendar[] } | { error: ToolResult }> {
  const readable = new Set((await deps.connections.list(personId)).filter((c) => c.capabilities.read).map((c) => c.id));
  if (readable.size === 0) return { error: { ok: false, code: "denied", error: "No calendar is connected with read access. The person can connect one with /connect calendar or in the web app's Connections section." } };
  const calendars = (await deps.store.listCalendars(personId)).filter((c) => readable.has(c.sourceId));
  if (name === undefined) return { calendars };
  const wanted = name.trim().toLowerCase();
  const match = calendars.filter((c) => c.name.toLowerCase() === wanted || c.calendarId === name.trim());
  if (match.length === 0) return { error: { ok: false, code: "invalid_arguments", error: `There is no calendar named ${quote(name)}. Calendars: ${calendars.map((c) => quote(c.name)).join(", ") || "none synced yet"}.` } };
  return { calendars: match };
}

function descriptionNote(entry: AgendaEntry): string {
  const description = entry.details.description;
  return description ? ` · notes ${quote(description, 200)}` : "";
}

function syncNotes(calendars: StoredCalendar[]): string[] {
  return calendars.flatMap((c) => {
    if (c.syncedAt === null) return [`Note: calendar ${quote(c.name)} has not been synced yet${c.error ? ` (${c.error})` : ""}.`];
    if (c.error !== null) return [`Note: calendar ${quote(c.name)} could not be synced lately (${c.error}); it shows its copy from ${c.syncedAt}.`];
    return [];
  });
}

function entryData(entry: AgendaEntry, zone: string) {
  const t = occurrenceTimes(entry, zone);
  return {
    id: eventIdOf(entry.calendarId, entry.uid),
    title: entry.details.title,
    start: t.start,
    end: t.end,
    allDay: t.allDay,
    location: entry.details.location,
    calendar: entry.calendarName,
    repeats: repeatWords(entry, zone),
    attendees: entry.details.attendees,
  };
}
