/**
 * A person's agenda: every occurrence of every stored event in a window, across their calendars,
 * expanded here (`expand.ts`) in the person's zone, in start order. Used by `calendar_list`,
 * conflict detection and the change events.
 */
import type { PersonId } from "../../core/ids.js";
import { expandSeries } from "./ical/expand.js";
import type { CalendarSeries, Occurrence } from "./model.js";
import type { CalendarSourceKind, CalendarStore, StoredCalendar } from "./store.js";

/** An occurrence with the calendar it is in. */
export interface AgendaEntry extends Occurrence {
  calendarId: string;
  calendarName: string;
  calendarKind: CalendarSourceKind;
  /** The stored item (CalDAV object URL, or `<feed>#<uid>`). */
  href: string;
  /** The series it comes from (for the tools: recurrence, RDATE count). */
  series: CalendarSeries;
}

/** The occurrences of a window. */
export interface Agenda {
  entries: AgendaEntry[];
  /** Series that had more occurrences in the window than were kept. */
  truncated: { uid: string; title: string; calendarName: string }[];
}

/**
 * Every occurrence in `[fromMs, toMs)` of the person's calendars (or of `calendarIds`), in the
 * person's IANA `zone`. `maxPerSeries` bounds each series (default 1,000).
 */
export async function agendaFor(
  store: Pick<CalendarStore, "listCalendars" | "itemsInWindow">,
  personId: PersonId,
  window: { fromMs: number; toMs: number },
  zone: string,
  options: { calendarIds?: readonly string[]; maxPerSeries?: number } = {},
): Promise<Agenda> {
  const calendars = new Map<string, StoredCalendar>((await store.listCalendars(personId)).map((c) => [c.calendarId, c]));
  const items = await store.itemsInWindow(personId, window.fromMs, window.toMs, options.calendarIds);
  const entries: AgendaEntry[] = [];
  const truncated: Agenda["truncated"] = [];
  for (const item of items) {
    const calendar = calendars.get(item.calendarId);
    if (calendar === undefined) continue;
    for (const series of item.series) {
      const expansion = expandSeries(series, { fromMs: window.fromMs, toMs: window.toMs, zone, maxOccurrences: options.maxPerSeries });
      if (expansion.truncated) truncated.push({ uid: series.uid, title: series.master?.details.title ?? series.overrides[0]?.details.title ?? series.uid, calendarName: calendar.name });
      for (const occurrence of expansion.occurrences) {
        entries.push({ ...occurrence, calendarId: calendar.calendarId, calendarName: calendar.name, calendarKind: calendar.kind, href: item.href, series });
      }
    }
  }
  entries.sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs || a.details.title.localeCompare(b.details.title) || a.uid.localeCompare(b.uid));
  return { entries, truncated };
}
