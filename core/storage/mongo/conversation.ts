/**
 * MongoDB implementation of `ConversationRepository`. `seq` comes from a per-person counter
 * (`counters`, `$inc` with upsert, read after the increment), so concurrent appends get distinct,
 * consecutive numbers; the unique (personId, seq) index backs that up. With transaction support the
 * increment and the insert commit together, so a failed insert leaves no gap.
 */
import type { Clock } from "../../clock.js";
import { DuplicateKeyError, StoreUnavailableError } from "../../errors.js";
import { newId, type MessageId, type PersonId } from "../../ids.js";
import type { ConversationRepository } from "../index.js";
import type { ConversationMessage, ConversationSummary, NewConversationMessage } from "../../conversation/records.js";
import type { CounterDoc, MessageDoc, SummaryDoc } from "./documents.js";
import { toMessage, toSummary } from "./codec.js";
import type { DbLike } from "./driver.js";
import { conversationCounter, counterIncrement, summaryCasFilter } from "./filters.js";
import { openColl, type Coll } from "./session.js";

/** Runs `fn` in a transaction when the store has them (see `MongoStore.transaction`). */
export type Atomically = <T>(fn: () => Promise<T>) => Promise<T>;

/** Takes the next value of the named counter (1 for a new counter). */
export async function nextCounterValue(counters: Coll<CounterDoc>, name: string): Promise<number> {
  const { filter, update } = counterIncrement(name);
  let doc: CounterDoc | null;
  try {
    doc = await counters.findOneAndUpdate(filter, update, { upsert: true });
  } catch (err) {
    // Two first-ever increments racing: servers since 4.4 retry such an upsert themselves (the
    // duplicate key equals the filter); older ones report E11000, and the retry is then an update.
    if (!(err instanceof DuplicateKeyError)) throw err;
    doc = await counters.findOneAndUpdate(filter, update, { upsert: true });
  }
  if (doc === null) throw new StoreUnavailableError(`counter ${name}: upsert returned no document`);
  return doc.value;
}

/** Messages (`conversation_messages`), summaries (`conversation_summaries`) and seq counters. */
export class MongoConversationRepository implements ConversationRepository {
  private readonly messages;
  private readonly summaries;
  private readonly counters;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
    private readonly atomically: Atomically,
  ) {
    this.messages = openColl<MessageDoc>(db, "messages", "conversation message");
    this.summaries = openColl<SummaryDoc>(db, "summaries", "conversation summary");
    this.counters = openColl<CounterDoc>(db, "counters", "counter");
  }

  appendMessage(input: NewConversationMessage): Promise<ConversationMessage> {
    return this.atomically(async () => {
      const seq = await nextCounterValue(this.counters, conversationCounter(input.personId));
      const doc: MessageDoc = {
        _id: newId("message"),
        personId: input.personId,
        seq,
        role: input.role,
        channel: input.channel,
        text: input.text,
        taskId: input.taskId,
        at: input.at ?? this.clock.now(),
        ...(input.attachments?.length ? { attachments: input.attachments } : {}),
      };
      await this.messages.insertOne(doc);
      return toMessage(doc);
    });
  }

  async listRecentMessages(personId: PersonId, limit: number): Promise<ConversationMessage[]> {
    if (limit <= 0) return [];
    const docs = await this.messages.find({ personId }, { sort: { seq: -1 }, limit });
    return docs.reverse().map(toMessage);
  }

  async listMessagesAfter(personId: PersonId, afterSeq: number, limit: number): Promise<ConversationMessage[]> {
    if (limit <= 0) return [];
    const docs = await this.messages.find({ personId, seq: { $gt: afterSeq } }, { sort: { seq: 1 }, limit });
    return docs.map(toMessage);
  }

  async listMessagesBetween(personId: PersonId, fromSeq: number, toSeq: number): Promise<ConversationMessage[]> {
    const docs = await this.messages.find({ personId, seq: { $gte: fromSeq, $lte: toSeq } }, { sort: { seq: 1 } });
    return docs.map(toMessage);
  }

  async getMessage(id: MessageId): Promise<ConversationMessage | null> {
    const doc = await this.messages.findOne({ _id: id });
    return doc === null ? null : toMessage(doc);
  }

  async lastSeq(personId: PersonId): Promise<number> {
    const doc = await this.messages.findOne({ personId }, { sort: { seq: -1 }, projection: { seq: 1 } });
    return doc?.seq ?? 0;
  }

  async getSummary(personId: PersonId): Promise<ConversationSummary | null> {
    const doc = await this.summaries.findOne({ _id: personId });
    return doc === null ? null : toSummary(doc);
  }

  async saveSummary(summary: Omit<ConversationSummary, "updatedAt">, expectedUpToSeq: number | null): Promise<boolean> {
    const updatedAt = this.clock.now();
    if (expectedUpToSeq === null) {
      // "None yet": the insert wins only if no summary exists (the _id is the person id).
      try {
        await this.summaries.insertOne({ _id: summary.personId, upToSeq: summary.upToSeq, text: summary.text, updatedAt });
        return true;
      } catch (err) {
        if (err instanceof DuplicateKeyError) return false;
        throw err;
      }
    }
    const result = await this.summaries.updateOne(summaryCasFilter(summary.personId, expectedUpToSeq), {
      $set: { upToSeq: summary.upToSeq, text: summary.text, updatedAt },
    });
    return result.matchedCount === 1;
  }
}
