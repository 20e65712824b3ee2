/**
 * Memory: what Familiar learned about a person (facts, preferences, relationships, decisions), with
 * provenance and confidence.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { MemoryId, MessageId, PersonId } from "../ids.js";
import type { ChannelName } from "../channels/records.js";
import type { Taint } from "../policy/records.js";

export type MemoryKind = "fact" | "preference" | "relationship" | "decision";

/** One thing Familiar remembers about a person, with where it learned it and how sure it is. */
export interface MemoryItem {
  id: MemoryId;
  personId: PersonId;
  kind: MemoryKind;
  text: string;
  /** Where the item came from: the conversation message it was learned from. */
  provenance: { messageId: MessageId | null; channel: ChannelName | null; note: string | null };
  /** 0–1: how sure Familiar is. */
  confidence: number;
  expiresAt: Date | null;
  /** Learned in a tainted activation (see {@link Taint}): shown to the model marked, and taints the activation. */
  taint: Taint | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewMemoryItem = Pick<MemoryItem, "personId" | "kind" | "text"> &
  Partial<Pick<MemoryItem, "provenance" | "confidence" | "expiresAt" | "taint">>;

export type MemoryPatch = Partial<Pick<MemoryItem, "kind" | "text" | "confidence" | "expiresAt">>;
