import type { OutboxId, PersonId } from "../ids.js";
import type { ChannelName } from "../channels/records.js";
import type { DeliveryProgress, OutboxMessage } from "../outbox/records.js";

/**
 * The outbox's routing side (part of `OutboxRepository`): messages meant for wherever the person
 * is get a lane (the channel they are queued on) before they are claimed; a message taken off its
 * channel is routed afresh; a channel's queue is woken when the channel is unlinked.
 */
export interface OutboxRouting {
  /** Queued messages for wherever the person is with no channel (lane) chosen yet, oldest first. */
  listUnroutedOutbound(limit: number): Promise<OutboxMessage[]>;
  /** Puts a queued unrouted message on `lane` (true), or (`lane` null) fails it with `error`; false if routed or claimed meanwhile. */
  routeOutbound(input: { id: OutboxId; lane: ChannelName | null; error?: string; now: Date }): Promise<boolean>;
  /** Requires the lease. Takes the message off its channel (it becomes "wherever the person is"), with `progress`, queued, due at `now`. */
  rerouteOutbound(input: { id: OutboxId; owner: string; progress: DeliveryProgress; error: string; now: Date }): Promise<OutboxMessage>;
  /** Makes the person's queued messages on `lane` due at `now` (a channel was unlinked). Returns how many. */
  wakeLane(input: { personId: PersonId; lane: ChannelName; now: Date }): Promise<number>;
}
