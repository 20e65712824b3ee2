import { z } from "zod";
import {
  notificationOrigins,
  urgencies,
  type MonitorState,
  type NotificationOrigin,
  type Urgency,
} from "../storage/index.js";

/**
 * zod schemas of the notification filter's shapes, shared by the tools that produce candidates,
 * the store adapters that read them back, and the eval command.
 */

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

/** Reads a stored monitor state (null when absent or unreadable: an old or damaged row never breaks the filter). */
export function parseStoredMonitor(value: unknown): MonitorState | null {
  if (value === null || value === undefined) return null;
  const raw = typeof value === "string" ? safeJson(value) : value;
  const parsed = monitorStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** Reads a stored origin / urgency / demotion (null when absent or unknown). */
export const parseStoredOrigin = (v: unknown): NotificationOrigin | null => originSchema.safeParse(v).data ?? null;
export const parseStoredUrgency = (v: unknown): Urgency | null => urgencySchema.safeParse(v).data ?? null;
export const parseStoredDemotion = (v: unknown): "provenance" | "cap" | null => z.enum(["provenance", "cap"]).safeParse(v).data ?? null;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
