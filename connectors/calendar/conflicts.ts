/**
 * Conflicts: two occurrences in the person's own calendars (CalDAV, not followed feeds) whose times
 * overlap. Found deterministically, by a sweep over the agenda in start order. All-day, cancelled
 * and free (TRANSP:TRANSPARENT) events never conflict.
 *
 * A conflict's key names both occurrences and their times, so the same overlap is announced once
 * (the store records keys), and an overlap that changes (one event moved) is a new one.
 */
import { createHash } from "node:crypto";
import type { AgendaEntry } from "./agenda.js";

/** Two overlapping occurrences, `first` starting no later than `second`. */
export interface Conflict {
  key: string;
  first: AgendaEntry;
  second: AgendaEntry;
  /** The overlap, ms. */
  overlapStartMs: number;
  overlapEndMs: number;
}

/** Whether an occurrence blocks time (a candidate for a conflict). */
export function blocksTime(entry: AgendaEntry): boolean {
  return entry.calendarKind === "caldav" && !entry.allDay && !entry.details.transparent && entry.details.status !== "CANCELLED" && entry.endMs > entry.startMs;
}

/**
 * Every overlapping pair among `entries` that block time, in start order, at most `limit` (200).
 * The same event in two calendars (same UID and times, e.g. an invitation copied) is not a conflict.
 */
export function findConflicts(entries: readonly AgendaEntry[], limit = 200): Conflict[] {
  const busy = entries.filter(blocksTime).sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs);
  const out: Conflict[] = [];
  const open: AgendaEntry[] = [];
  for (const entry of busy) {
    for (let i = open.length - 1; i >= 0; i--) if (open[i]!.endMs <= entry.startMs) open.splice(i, 1);
    for (const earlier of open) {
      if (earlier.uid === entry.uid && earlier.startMs === entry.startMs && earlier.endMs === entry.endMs) continue;
      out.push({ key: conflictKey(earlier, entry), first: earlier, second: entry, overlapStartMs: entry.startMs, overlapEndMs: Math.min(earlier.endMs, entry.endMs) });
      if (out.length >= limit) return out;
    }
    open.push(entry);
  }
  return out;
}

/** The key of an overlap: both occurrences (calendar, UID, occurrence) and their times, order-free. */
export function conflictKey(a: AgendaEntry, b: AgendaEntry): string {
  const side = (e: AgendaEntry) => [e.calendarId, e.uid, e.recurrenceKey ?? "", e.startMs, e.endMs].join("|");
  const [x, y] = [side(a), side(b)].sort();
  return `cfl_${createHash("sha256").update(`${x}\n${y}`).digest("hex").slice(0, 24)}`;
}
