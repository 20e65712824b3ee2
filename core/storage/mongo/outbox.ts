/**
 * MongoDB implementation of `OutboxRepository` (`outbox`, unique on deliveryKey). A claim first
 * picks candidates (each person's oldest undelivered message, if claimable) with an aggregation,
 * then takes one with a conditional `findOneAndUpdate`; a concurrent claimer that lost the race
 * moves on to the next candidate.
 */
import type { Clock } from "../../clock.js";
import { ConflictError, DuplicateKeyError, NotFoundError, StoreUnavailableError } from "../../errors.js";
import { newId, type OutboxId, type PersonId } from "../../ids.js";
import { type OutboxRepository } from "../index.js";
import { emptyProgress, type DeliveryProgress, type NewOutboxMessage, type OutboxMessage } from "../../outbox/records.js";
import { type ChannelName } from "../../channels/records.js";
import { type Page, type PageRequest } from "../index.js";
import type { OutboxDoc } from "./documents.js";
import { encodeJson, toOutbox } from "./codec.js";
import type { DbLike } from "./driver.js";
import {
  claimOutboxFilter,
  claimOutboxUpdate,
  deliveredUpdate,
  deliveryFailedUpdate,
  enqueueOutbox,
  listOutboundFilter,
  outboxHeadsPipeline,
  outboxLeaseFilter,
  rerouteOutboxUpdate,
  routeOutboxUpdate,
  unroutedOutboxFilter,
  wakeLaneFilter,
} from "./outbox-filters.js";
import { idAfter, pageLimit, toPage } from "./paging.js";
import { openColl } from "./session.js";

/** How many candidates one claim tries before reporting that nothing was claimable. */
const claimCandidates = 8;

/** The durable outbox with per-person order and leases (`outbox`). */
export class MongoOutboxRepository implements OutboxRepository {
  private readonly outbox;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.outbox = openColl<OutboxDoc>(db, "outbox", "outbox message");
  }

  async enqueueOutbound(input: NewOutboxMessage, now: Date): Promise<OutboxMessage> {
    const doc: OutboxDoc = {
      _id: newId("outbox"),
      personId: input.personId,
      deliveryKey: input.deliveryKey,
      channel: input.channel ?? null,
      lane: input.channel ?? null,
      text: input.text,
      buttons: (input.buttons ?? []).map((b) => ({ id: b.id, label: b.label })),
      editOf: input.editOf ?? null,
      card: input.card === undefined || input.card === null ? null : encodeJson(input.card),
      attachments: [...(input.attachments ?? [])],
      status: "queued",
      attempts: 0,
      nextAttemptAt: now,
      lease: null,
      lastError: null,
      delivered: null,
      progress: emptyProgress(),
      createdAt: now,
    };
    const { filter, update } = enqueueOutbox(doc);
    try {
      const stored = await this.outbox.findOneAndUpdate(filter, update, { upsert: true });
      if (stored === null) throw new StoreUnavailableError(`outbox ${input.deliveryKey}: upsert returned no document`);
      return toOutbox(stored);
    } catch (err) {
      // Two concurrent upserts of one new key: the loser gets E11000; the winner's row is the answer.
      if (!(err instanceof DuplicateKeyError)) throw err;
      const existing = await this.outbox.findOne({ deliveryKey: input.deliveryKey });
      if (existing === null) throw err;
      return toOutbox(existing);
    }
  }

  async getOutbound(id: OutboxId): Promise<OutboxMessage | null> {
    const doc = await this.outbox.findOne({ _id: id });
    return doc === null ? null : toOutbox(doc);
  }

  async claimNextOutbound(input: { owner: string; now: Date; leaseMs: number; personId?: PersonId }): Promise<OutboxMessage | null> {
    const candidates = await this.outbox.aggregate<{ _id: string }>(outboxHeadsPipeline(input.now, input.personId, claimCandidates));
    for (const { _id } of candidates) {
      const doc = await this.outbox.findOneAndUpdate(
        claimOutboxFilter(_id, input.now),
        claimOutboxUpdate(input.owner, input.now, input.leaseMs),
      );
      if (doc !== null) return toOutbox(doc);
    }
    return null;
  }

  async saveProgress(input: { id: OutboxId; owner: string; progress: DeliveryProgress; now: Date; leaseMs: number }): Promise<OutboxMessage> {
    const until = new Date(input.now.getTime() + input.leaseMs);
    const doc = await this.outbox.findOneAndUpdate(outboxLeaseFilter(input.id, input.owner), {
      $set: { progress: input.progress, "lease.until": until },
    });
    if (doc !== null) return toOutbox(doc);
    throw await this.whyNoLease(input.id, input.owner, "saveProgress");
  }

  async renewLeases(input: { owner: string; now: Date; leaseMs: number }): Promise<number> {
    const until = new Date(input.now.getTime() + input.leaseMs);
    return (await this.outbox.updateMany({ status: "sending", "lease.owner": input.owner }, { $set: { "lease.until": until } })).modifiedCount;
  }

  async expireForeignLeases(input: { owner: string; now: Date }): Promise<number> {
    const filter = { status: "sending", "lease.owner": { $ne: input.owner }, "lease.until": { $gt: input.now } };
    return (await this.outbox.updateMany(filter, { $set: { "lease.until": input.now } })).modifiedCount;
  }

  /** The earliest retry time of a queued message or lease end of a sending one. */
  async nextDueAt(): Promise<Date | null> {
    const [queued] = await this.outbox.find({ status: "queued" }, { sort: { nextAttemptAt: 1 }, limit: 1, projection: { nextAttemptAt: 1 } });
    const [sending] = await this.outbox.find({ status: "sending" }, { sort: { "lease.until": 1 }, limit: 1, projection: { lease: 1, nextAttemptAt: 1 } });
    const times = [queued?.nextAttemptAt, sending ? (sending.lease?.until ?? sending.nextAttemptAt) : undefined].filter((t): t is Date => t instanceof Date);
    return times.length ? new Date(Math.min(...times.map((t) => t.getTime()))) : null;
  }

  async listUnroutedOutbound(limit: number): Promise<OutboxMessage[]> {
    return (await this.outbox.find(unroutedOutboxFilter, { sort: { _id: 1 }, limit })).map(toOutbox);
  }

  async routeOutbound(input: { id: OutboxId; lane: ChannelName | null; error?: string; now: Date }): Promise<boolean> {
    const { filter, update } = routeOutboxUpdate(input.id, input.lane, input.error ?? "nowhere to reach the person");
    return (await this.outbox.updateOne(filter, update)).matchedCount === 1;
  }

  async rerouteOutbound(input: { id: OutboxId; owner: string; progress: DeliveryProgress; error: string; now: Date }): Promise<OutboxMessage> {
    const doc = await this.outbox.findOneAndUpdate(outboxLeaseFilter(input.id, input.owner), rerouteOutboxUpdate(input.progress, input.error, input.now));
    if (doc !== null) return toOutbox(doc);
    throw await this.whyNoLease(input.id, input.owner, "rerouteOutbound");
  }

  async wakeLane(input: { personId: PersonId; lane: ChannelName; now: Date }): Promise<number> {
    return (await this.outbox.updateMany(wakeLaneFilter(input.personId, input.lane, input.now), { $set: { nextAttemptAt: input.now } })).modifiedCount;
  }

  async markDelivered(input: {
    id: OutboxId;
    owner: string;
    channel: ChannelName;
    address: string;
    platformIds: string[];
    now: Date;
  }): Promise<OutboxMessage> {
    const doc = await this.outbox.findOneAndUpdate(outboxLeaseFilter(input.id, input.owner), deliveredUpdate(input));
    if (doc !== null) return toOutbox(doc);
    throw await this.whyNoLease(input.id, input.owner, "markDelivered");
  }

  async markDeliveryFailed(input: { id: OutboxId; owner: string; error: string; retryAt: Date | null; now: Date }): Promise<OutboxMessage> {
    const doc = await this.outbox.findOneAndUpdate(outboxLeaseFilter(input.id, input.owner), deliveryFailedUpdate(input.error, input.retryAt));
    if (doc !== null) return toOutbox(doc);
    throw await this.whyNoLease(input.id, input.owner, "markDeliveryFailed");
  }

  async listOutbound(personId: PersonId, page?: PageRequest & { status?: OutboxMessage["status"][] }): Promise<Page<OutboxMessage>> {
    const limit = pageLimit(page);
    const filter = { ...listOutboundFilter(personId, page?.status), ...idAfter(page?.after, 1) };
    const docs = await this.outbox.find(filter, { sort: { _id: 1 }, limit: limit + 1 });
    return toPage(docs, limit, toOutbox);
  }

  private async whyNoLease(id: OutboxId, owner: string, op: string): Promise<Error> {
    const current = await this.outbox.findOne({ _id: id }, { projection: { status: 1, lease: 1 } });
    if (current === null) return new NotFoundError("outbox message", id);
    return new ConflictError(
      `outbox message ${id}: ${op} refused, ${owner} does not hold its lease (status ${current.status}, lease ${current.lease?.owner ?? "none"})`,
    );
  }
}
