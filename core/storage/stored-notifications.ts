/**
 * The stored forms of the notification records' enumerations and monitor state, read by both
 * adapters: an old or damaged value reads as null rather than breaking the filter.
 */
import { monitorStateSchema, originSchema, urgencySchema, type MonitorState, type NotificationOrigin, type Urgency } from "../notify/records.js";
import { z } from "zod";

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
