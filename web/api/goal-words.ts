import cronstrue from "cronstrue";
import type { AuditEvent } from "../../core/audit/index.js";
import type { CheckInSchedule, Goal } from "../../core/goals/index.js";
import type { PersonId } from "../../core/ids.js";
import type { Store } from "../../core/storage/index.js";
import { nextCronTime } from "../../core/time/index.js";

/**
 * What the *Goals* tab says about a goal's check-ins: the schedule in words ("Checks in at 09:00,
 * only on Friday (Europe/Berlin)" — cron described by `cronstrue`, 24-hour clock), the next one, and
 * the past ones as what they led to (sent you…, kept for your digest, nothing worth a message).
 */
export interface CheckInWords {
  schedule: string | null;
  /** ISO-8601 of the next check-in; null without a schedule (or when the goal is not active). */
  next: string | null;
  past: { at: string; words: string }[];
}

/** How many past check-ins the tab lists per goal. */
export const PAST_CHECK_INS_SHOWN = 5;

/** A check-in schedule in words, e.g. "Checks in at 09:00, only on Friday (Europe/Berlin)". */
export function scheduleInWords(checkIn: CheckInSchedule): string {
  let words: string;
  try {
    words = cronstrue.toString(checkIn.cron, { use24HourTimeFormat: true, verbose: false });
  } catch {
    return `Checks in on the schedule “${checkIn.cron}” (${checkIn.timeZone})`;
  }
  return `Checks in ${words.charAt(0).toLowerCase()}${words.slice(1)} (${checkIn.timeZone})`;
}

function decisionWords(e: AuditEvent): string {
  const data = e.data && typeof e.data === "object" && !Array.isArray(e.data) ? e.data : {};
  const preview = typeof data.preview === "string" ? data.preview.replace(/\s+/g, " ").trim() : "";
  const quoted = preview ? `: “${preview.length > 100 ? `${preview.slice(0, 100)}…` : preview}”` : "";
  if (data.decision === "send") return `Told you${quoted}`;
  if (data.decision === "hold") return `Kept for your digest${quoted}`;
  return "Nothing worth a message, so nothing was sent";
}

/** The person's last 200 notification decisions (newest first), which {@link checkInWords} picks each goal's past check-ins from. */
export async function recentDecisions(store: Pick<Store, "audit">, personId: PersonId): Promise<AuditEvent[]> {
  return (await store.audit.listAudit(personId, { kinds: ["notification.decision"], limit: 200 })).items;
}

/** The check-in words of `goal` at `now` (reads its check-in tasks; `decisions` from {@link recentDecisions}). */
export async function checkInWords(store: Pick<Store, "tasks">, goal: Goal, decisions: readonly AuditEvent[], now: Date): Promise<CheckInWords> {
  const schedule = goal.checkIn ? scheduleInWords(goal.checkIn) : null;
  let next: string | null = null;
  if (goal.checkIn && goal.status === "active") {
    try {
      next = nextCronTime(goal.checkIn.cron, goal.checkIn.timeZone, now).toISOString();
    } catch {
      next = null;
    }
  }
  const tasks = new Set((await store.tasks.listTasks({ goalId: goal.id, kind: ["checkin"] }, { limit: 100 })).items.map((t) => t.id as string));
  if (tasks.size === 0) return { schedule, next, past: [] };
  const past = decisions
    .filter((e) => {
      const data = e.data && typeof e.data === "object" && !Array.isArray(e.data) ? e.data : {};
      return typeof data.taskId === "string" && tasks.has(data.taskId);
    })
    .slice(0, PAST_CHECK_INS_SHOWN)
    .map((e) => ({ at: e.at.toISOString(), words: decisionWords(e) }));
  return { schedule, next, past };
}
