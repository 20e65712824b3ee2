/**
 * The audit trail: what was done, by what, for whom (a tool call, a Sentinel decision, a message sent).
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { AuditId, PersonId } from "../ids.js";
import type { Json } from "../json.js";

/** One entry of the audit trail. */
export interface AuditEvent {
  id: AuditId;
  personId: PersonId | null;
  /** Dotted kind, e.g. `tool.call`, `sentinel.decision`, `approval.decided`, `outbound.sent`. */
  kind: string;
  summary: string;
  data: Json;
  at: Date;
}

export type NewAuditEvent = Omit<AuditEvent, "id" | "at"> & { at?: Date };
