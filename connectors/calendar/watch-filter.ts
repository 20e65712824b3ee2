/**
 * Calendar changes as events: the structured filter a task waits on ("tell me when the club adds a
 * fixture", "when my dentist appointment moves") and its deterministic match against a change a sync
 * found — no model involved, so a change that matches nothing wakes nothing and costs nothing.
 *
 * Every field given must match (AND); within a list, any entry (OR) — except `titleContains`, whose
 * words must all appear. Text comparisons ignore case and accents.
 */
import { z } from "zod";
import type { CalendarChange, CalendarChangeKind } from "./changes.js";
import { quote } from "./present.js";

const term = z.string().trim().min(1).max(200);

/** A calendar filter. */
export const calendarFilterSchema = z
  .object({
    /** Calendar names (as listed), any of them. */
    calendars: z.array(term).max(20).optional(),
    /** Kinds of change, any of them (default: any kind). */
    kinds: z.array(z.enum(["added", "moved", "cancelled", "changed", "removed"])).min(1).max(5).optional(),
    /** Every one of these words or phrases appears in the event's title. */
    titleContains: z.array(term).max(10).optional(),
    /** Only followed feeds (`feed`) or only the person's own calendars (`own`). */
    source: z.enum(["feed", "own"]).optional(),
  })
  .strict();
export type CalendarFilter = z.infer<typeof calendarFilterSchema>;

const fold = (s: string) => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();

/** Whether `change` matches `filter`. Pure and deterministic. */
export function matchesChange(filter: CalendarFilter, change: Pick<CalendarChange, "kind" | "calendarName" | "sourceKind" | "title">): boolean {
  if (filter.calendars && !filter.calendars.some((c) => fold(c) === fold(change.calendarName))) return false;
  if (filter.kinds && !filter.kinds.includes(change.kind)) return false;
  if (filter.titleContains) {
    const title = fold(change.title);
    if (!filter.titleContains.every((w) => title.includes(fold(w)))) return false;
  }
  if (filter.source === "feed" && change.sourceKind !== "ics") return false;
  if (filter.source === "own" && change.sourceKind !== "caldav") return false;
  return true;
}

const KIND_WORDS: Record<CalendarChangeKind, string> = { added: "added", moved: "moved or re-timed", cancelled: "cancelled", changed: "changed", removed: "removed" };

/** The filter in words (for the task's wait state and its card). */
export function filterWords(filter: CalendarFilter): string {
  const what = filter.kinds ? filter.kinds.map((k) => KIND_WORDS[k]).join(" or ") : "added, changed, moved, cancelled or removed";
  const parts = [`an event is ${what}`];
  if (filter.titleContains) parts.push(`with ${filter.titleContains.map((w) => quote(w, 60)).join(" and ")} in its title`);
  if (filter.calendars) parts.push(`in ${filter.calendars.map((c) => quote(c, 60)).join(" or ")}`);
  if (filter.source === "feed") parts.push("in a followed feed");
  if (filter.source === "own") parts.push("in the person's own calendars");
  return parts.join(" ");
}
