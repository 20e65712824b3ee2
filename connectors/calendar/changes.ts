/**
 * Calendar changes as events: what a sync changed, per event series, in the terms a waiting task
 * filters on — `added`, `moved` (its time or repetition changed), `cancelled` (the event, or one
 * of its occurrences), `changed` (title, place, description or attendees), `removed`.
 */
import type { CalendarSeries, EventComponent } from "./model.js";
import type { CalendarSourceKind } from "./store.js";

/** The kinds of change. */
export type CalendarChangeKind = "added" | "moved" | "cancelled" | "changed" | "removed";

/** One change of one event series in one calendar. Titles are untrusted content (they come from outside). */
export interface CalendarChange {
  kind: CalendarChangeKind;
  calendarId: string;
  calendarName: string;
  sourceKind: CalendarSourceKind;
  uid: string;
  title: string;
  /** The series as it is now (null when removed). */
  after: CalendarSeries | null;
  /** The series as it was (null when added). */
  before: CalendarSeries | null;
}

/** The changes between two versions of a calendar's series (by UID). */
export function diffSeries(before: readonly CalendarSeries[], after: readonly CalendarSeries[]): { kind: CalendarChangeKind; uid: string; before: CalendarSeries | null; after: CalendarSeries | null }[] {
  const old = new Map(before.map((s) => [s.uid, s]));
  const now = new Map(after.map((s) => [s.uid, s]));
  const out: { kind: CalendarChangeKind; uid: string; before: CalendarSeries | null; after: CalendarSeries | null }[] = [];
  for (const [uid, series] of now) {
    const prior = old.get(uid);
    if (prior === undefined) out.push({ kind: "added", uid, before: null, after: series });
    else {
      const kind = classify(prior, series);
      if (kind !== null) out.push({ kind, uid, before: prior, after: series });
    }
  }
  for (const [uid, series] of old) if (!now.has(uid)) out.push({ kind: "removed", uid, before: series, after: null });
  return out;
}

/** How a series changed, or null when it did not (in anything a person would notice). */
function classify(before: CalendarSeries, after: CalendarSeries): CalendarChangeKind | null {
  const wasCancelled = before.master?.details.status === "CANCELLED";
  if (!wasCancelled && after.master?.details.status === "CANCELLED") return "cancelled";
  const newExdate = after.exdates.some((x) => !before.exdates.some((y) => same(x, y)));
  const newCancelledOverride = after.overrides.some((o) => o.details.status === "CANCELLED" && !before.overrides.some((p) => same(p.recurrenceId, o.recurrenceId) && p.details.status === "CANCELLED"));
  if (newExdate || newCancelledOverride) return "cancelled";
  if (!same(timing(before), timing(after))) return "moved";
  if (!same(details(before), details(after))) return "changed";
  return null;
}

function timing(series: CalendarSeries): unknown {
  return {
    master: series.master === null ? null : [series.master.start, series.master.end],
    rrule: series.rrule,
    rdates: series.rdates,
    exdates: series.exdates,
    overrides: series.overrides.map((o) => [o.recurrenceId, o.start, o.end, o.details.status]),
  };
}

function details(series: CalendarSeries): unknown {
  const pick = (c: EventComponent | null) => (c === null ? null : { ...c.details, sequence: 0 });
  return { master: pick(series.master), overrides: series.overrides.map(pick) };
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The title a person knows a series by. */
export function titleOf(series: CalendarSeries): string {
  return series.master?.details.title ?? series.overrides[0]?.details.title ?? "(no title)";
}
