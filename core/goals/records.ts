/**
 * Goals: what a person hands Familiar to work on for weeks ("plan a baking project every Friday"),
 * with their optional recurring check-in.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { GoalId, MessageId, PersonId } from "../ids.js";
import type { Taint } from "../policy/records.js";

export type GoalStatus = "active" | "paused" | "done" | "abandoned";

/** A recurring check-in: a cron expression evaluated in an IANA time zone. */
export interface CheckInSchedule {
  cron: string;
  timeZone: string;
}

/** A goal the person handed Familiar, worked on over weeks; `checkIn` makes it a recurring check-in task. */
export interface Goal {
  id: GoalId;
  personId: PersonId;
  title: string;
  description: string;
  status: GoalStatus;
  originMessageId: MessageId | null;
  checkIn: CheckInSchedule | null;
  notes: string;
  /** Made in a tainted activation (see {@link Taint}); null when it came from the person's own words. */
  taint: Taint | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewGoal = Pick<Goal, "personId" | "title"> &
  Partial<Pick<Goal, "description" | "originMessageId" | "checkIn" | "notes" | "taint">>;

/** `taint` can be set (a tainted activation changed the goal) but never cleared by a patch (null leaves it). */
export type GoalPatch = Partial<Pick<Goal, "title" | "description" | "status" | "checkIn" | "notes" | "taint">>;
