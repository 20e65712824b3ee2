/**
 * Filter, update and pipeline documents of the outbox repository (pure, checked offline with mingo).
 * Order per person: only the oldest undelivered (queued or sending) message of a person can be
 * claimed, so a person's messages go out in the order they were enqueued.
 */
import type { Document } from "mongodb";
import type { ChannelName } from "../../channels/records.js";
import type { OutboxStatus } from "../../outbox/records.js";
import type { OutboxDoc } from "./documents.js";

/** Statuses of messages not yet delivered nor given up on. */
export const undeliveredStatuses: readonly OutboxStatus[] = ["queued", "sending"];

/** Messages claimable at `now`: due, and queued or sending under a lease that has ended. */
export function claimableOutboxFilter(now: Date): Document {
  return {
    nextAttemptAt: { $lte: now },
    $or: [{ status: "queued" }, { status: "sending", $or: [{ lease: null }, { "lease.until": { $lte: now } }] }],
  };
}

/**
 * Aggregation picking claim candidates: the oldest undelivered message of each person and lane
 * (optionally one person), kept only if claimable at `now`, oldest first. Returns `{ _id }` documents.
 * Unrouted messages (no lane) are a lane of their own.
 */
export function outboxHeadsPipeline(now: Date, personId: string | undefined, limit: number): Document[] {
  const match: Document = { status: { $in: [...undeliveredStatuses] } };
  if (personId !== undefined) match.personId = personId;
  return [
    { $match: match },
    { $sort: { personId: 1, _id: 1 } },
    { $group: { _id: { person: "$personId", lane: { $ifNull: ["$lane", null] } }, head: { $first: "$$ROOT" } } },
    { $replaceRoot: { newRoot: "$head" } },
    { $match: claimableOutboxFilter(now) },
    { $sort: { _id: 1 } },
    { $limit: limit },
    { $project: { _id: 1 } },
  ];
}

/** Filter of the claim itself: the chosen message, still claimable (a concurrent claim loses here). */
export function claimOutboxFilter(id: string, now: Date): Document {
  return { _id: id, ...claimableOutboxFilter(now) };
}

/** Update of a claim: sending under `owner`'s lease until `now + leaseMs`, one more attempt. */
export function claimOutboxUpdate(owner: string, now: Date, leaseMs: number): Document {
  return {
    $set: { status: "sending", lease: { owner, until: new Date(now.getTime() + leaseMs) } },
    $inc: { attempts: 1 },
  };
}

/** A message being sent by `owner` (the lease holder). */
export function outboxLeaseFilter(id: string, owner: string): Document {
  return { _id: id, status: "sending", "lease.owner": owner };
}

/** Update of `markDelivered`. */
export function deliveredUpdate(input: { channel: ChannelName; address: string; platformIds: string[]; now: Date }): Document {
  return {
    $set: {
      status: "delivered",
      lease: null,
      lastError: null,
      delivered: { channel: input.channel, address: input.address, platformIds: input.platformIds, at: input.now },
    },
  };
}

/** Update of `markDeliveryFailed`: permanent (`retryAt` null) or requeued for `retryAt`. */
export function deliveryFailedUpdate(error: string, retryAt: Date | null): Document {
  return retryAt === null
    ? { $set: { status: "failed", lease: null, lastError: error } }
    : { $set: { status: "queued", lease: null, lastError: error, nextAttemptAt: retryAt } };
}

/**
 * Enqueue as one atomic upsert: inserts `doc` unless its delivery key exists, in which case the
 * existing message is left unchanged (and returned by findOneAndUpdate).
 */
export function enqueueOutbox(doc: OutboxDoc): { filter: Document; update: Document } {
  const { deliveryKey, ...rest } = doc;
  return { filter: { deliveryKey }, update: { $setOnInsert: rest } };
}

/** Queued messages no channel was chosen for yet (absent lane: a document from before lanes). */
export const unroutedOutboxFilter: Document = { status: "queued", lane: null };

/** Filter and update of `routeOutbound`: onto `lane`, or failed when there is nowhere to go. */
export function routeOutboxUpdate(id: string, lane: ChannelName | null, error: string): { filter: Document; update: Document } {
  return { filter: { _id: id, ...unroutedOutboxFilter }, update: lane === null ? { $set: { status: "failed", lastError: error } } : { $set: { lane } } };
}

/** Update of `rerouteOutbound`: off its channel, queued and due at `now`. */
export function rerouteOutboxUpdate(progress: unknown, error: string, now: Date): Document {
  return { $set: { status: "queued", lane: null, channel: null, progress, lastError: error, nextAttemptAt: now, lease: null } };
}

/** Filter of `wakeLane`: the person's queued messages on `lane` not due yet. */
export function wakeLaneFilter(personId: string, lane: ChannelName, now: Date): Document {
  return { personId, lane, status: "queued", nextAttemptAt: { $gt: now } };
}

/** Filter of `listOutbound`. */
export function listOutboundFilter(personId: string, status: OutboxStatus[] | undefined): Document {
  return status === undefined ? { personId } : { personId, status: { $in: status } };
}
