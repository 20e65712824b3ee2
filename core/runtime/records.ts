/**
 * Inbound webhooks: the event triggers outside services call to resume tasks waiting for them.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { HookId, PersonId } from "../ids.js";

/** A webhook an outside service calls to resume tasks waiting for it. The secret is stored hashed. */
export interface Hook {
  id: HookId;
  personId: PersonId;
  /** What the event is, in the person's words (shown on /activity). */
  description: string;
  /** SHA-256 (hex) of the secret the caller sends in `X-Familiar-Hook-Secret`. */
  secretHash: string;
  createdAt: Date;
  /** When the hook last received an event (null: never). */
  lastEventAt: Date | null;
}

export type NewHook = Pick<Hook, "personId" | "description" | "secretHash">;
