/**
 * The notification filter's records: every decision on a proactive candidate (send now / hold for
 * the digest / drop), with what produced it, its urgency and a monitor's structured state.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import { z } from "zod";
import type { NotificationId, PersonId, TaskId } from "../ids.js";

export type NotificationDecision = "send" | "hold" | "drop";

/** What produced a proactive candidate message. */
export type NotificationOrigin = "reminder" | "checkin" | "monitor" | "approval" | "question" | "digest-item" | "heartbeat";

export const notificationOrigins: readonly NotificationOrigin[] = ["reminder", "checkin", "monitor", "approval", "question", "digest-item", "heartbeat"];

/** How urgent a candidate is, set by its producer (never guessed from its wording). */
export type Urgency = "low" | "normal" | "high" | "critical";

export const urgencies: readonly Urgency[] = ["low", "normal", "high", "critical"];

/** A scalar a monitor observed (a price, a status, a count). */
export type MonitorValue = string | number | boolean | null;

/**
 * Structured state a monitor reported: what it watches (`subject`, stable across checks), what it
 * checked this time, and the values it saw. Novelty compares `values` with the state of the last
 * report the person received; `thresholds` (absolute change per numeric field) and `targets` (a
 * level whose crossing always matters) say what counts as a trivial change.
 */
export interface MonitorState {
  subject: string;
  checked: string;
  values: Record<string, MonitorValue>;
  thresholds?: Record<string, number>;
  targets?: Record<string, number>;
}

/** One decision of the notification filter on a proactive candidate message, kept for novelty, the digest and the activity page. */
export interface NotificationRecord {
  id: NotificationId;
  personId: PersonId;
  taskId: TaskId | null;
  text: string;
  decision: NotificationDecision;
  reasons: string[];
  /** For held messages: when they went out in a digest. */
  digestedAt: Date | null;
  at: Date;
  /** What produced the candidate (null on records made before origins existed). */
  origin: NotificationOrigin | null;
  urgency: Urgency | null;
  needsAction: boolean;
  /** `notify: always` counted: it traced to the person's own words and stayed under the hourly cap. */
  askedFor: boolean;
  /** Why a claimed `notify: always` was treated as if_worthwhile (null when it was not demoted). */
  demoted: "provenance" | "cap" | null;
  deadline: Date | null;
  /** The scheduled occurrence of recurring work this message belongs to. */
  occurrenceKey: string | null;
  monitor: MonitorState | null;
  /** The filter rule that decided, e.g. `no-new-content` (null on old records). */
  rule: string | null;
}

export type NewNotificationRecord = Pick<NotificationRecord, "personId" | "taskId" | "text" | "decision" | "reasons"> &
  Partial<Pick<NotificationRecord, "origin" | "urgency" | "needsAction" | "askedFor" | "demoted" | "deadline" | "occurrenceKey" | "monitor" | "rule">> & { at?: Date };

/** zod schemas of these shapes, shared by the tools that produce candidates, the stored-form readers and the eval command. */
export const originSchema = z.enum(notificationOrigins as [NotificationOrigin, ...NotificationOrigin[]]);
export const urgencySchema = z.enum(urgencies as [Urgency, ...Urgency[]]);

const monitorValue = z.union([z.string().max(500), z.number().finite(), z.boolean(), z.null()]);
const fieldName = z.string().min(1).max(64);

/** A monitor's structured report (see `MonitorState`): at most 32 values. */
export const monitorStateSchema: z.ZodType<MonitorState> = z
  .object({
    subject: z.string().trim().min(1).max(200),
    checked: z.string().max(500),
    values: z.record(fieldName, monitorValue).refine((v) => Object.keys(v).length <= 32, "at most 32 values"),
    thresholds: z.record(fieldName, z.number().finite().nonnegative()).optional(),
    targets: z.record(fieldName, z.number().finite()).optional(),
  })
  .strict();
