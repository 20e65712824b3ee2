/**
 * The outbox: every message to a person as a durable row, delivered part by part with its progress
 * saved.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { ArtifactId, OutboxId, PersonId } from "../ids.js";
import type { Button, ChannelName } from "../channels/records.js";
import type { Json } from "../json.js";
import type { Lease } from "../tasks/records.js";

export type OutboxStatus = "queued" | "sending" | "delivered" | "failed";

/** One message to a person in the outbox: queued under a unique delivery key (so nothing is sent twice), then claimed and delivered part by part. */
export interface OutboxMessage {
  id: OutboxId;
  personId: PersonId;
  /** Unique; enqueueing the same key twice returns the first row. */
  deliveryKey: string;
  /** Target channel, or null for wherever the person is (their `ReachPreference`). */
  channel: ChannelName | null;
  lane: ChannelName | null; // the channel it is queued on (routed; null until then): order is per person and lane
  text: string;
  buttons: Button[];
  /** Set when this message edits an earlier one (an approval card showing its decision). */
  editOf: OutboxId | null;
  /**
   * A structured card (Sentinel's `CardView` as JSON) that surfaces able to draw it render instead of
   * `text`; `text` is always its complete markdown rendering. Null for plain messages.
   */
  card: Json | null;
  /** Artifacts sent with the message as real attachments (photo, document), in order. */
  attachments: ArtifactId[];
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: Date;
  lease: Lease | null;
  lastError: string | null;
  /** Platform ids of the delivered parts (a long message is split). */
  delivered: { channel: ChannelName; address: string; platformIds: string[]; at: Date } | null;
  /** Which parts went out so far (survives a crash mid-message). */
  progress: DeliveryProgress;
  createdAt: Date;
}

/**
 * How far the delivery of one outbox row got, saved before and after each part so a restarted
 * process neither repeats a part nor loses one: `target` (where the first attempt went; later parts
 * follow it); `sent` (part key `"0"`, `"2-1"` for a re-rendered part → platform id); `inflight` (the
 * part being sent at the last save: a crash leaves it set, outcome unknown); `fallback` (part index →
 * rendering level or file form after a refusal); `uncertain` (parts that may or may not have
 * arrived); `failingSince`, `refusals`, `textParts` (the give-up clock: core/outbox/handoff.ts, files.ts).
 */
export interface DeliveryProgress {
  target: { channel: ChannelName; address: string; accountId: string } | null;
  sent: Record<string, string>;
  inflight: string | null;
  fallback: Record<string, number>;
  uncertain: string[];
  failingSince?: string | null; refusals?: Record<string, number>; textParts?: number;
}

export const emptyProgress = (): DeliveryProgress => ({ target: null, sent: {}, inflight: null, fallback: {}, uncertain: [] });

export type NewOutboxMessage = Pick<OutboxMessage, "personId" | "deliveryKey" | "text"> &
  Partial<Pick<OutboxMessage, "channel" | "buttons" | "editOf" | "card" | "attachments">>;
