/**
 * MongoDB implementation of `LocalMailboxRepository` (`local_mailbox`). `seq` comes from one
 * store-wide counter, so a poller that remembers the highest seq it saw never misses a message or
 * an edit (an edit takes a new seq).
 */
import type { Button, LocalMessage, NewLocalMessage } from "../../channels/records.js";
import type { Json } from "../../json.js";
import type { LocalMailboxRepository } from "../index.js";
import type { CounterDoc, LocalMailboxDoc } from "./documents.js";
import { encodeJson, toLocalMessage } from "./codec.js";
import { nextCounterValue, type Atomically } from "./conversation.js";
import type { DbLike } from "./driver.js";
import { localMailboxCounter } from "./filters.js";
import { openColl } from "./session.js";

const cardText = (card: Json | null | undefined): string | null => (card === undefined || card === null ? null : encodeJson(card));
const copyButtons = (buttons: Button[]) => buttons.map((b) => ({ id: b.id, label: b.label }));

/** The local web chat mailbox with a store-wide seq (`local_mailbox`). */
export class MongoLocalMailboxRepository implements LocalMailboxRepository {
  private readonly messages;
  private readonly counters;

  constructor(
    db: DbLike,
    private readonly atomically: Atomically,
  ) {
    this.messages = openColl<LocalMailboxDoc>(db, "localMailbox", "local message");
    this.counters = openColl<CounterDoc>(db, "counters", "counter");
  }

  putLocalMessage(input: NewLocalMessage): Promise<LocalMessage> {
    return this.atomically(async () => {
      const seq = await nextCounterValue(this.counters, localMailboxCounter);
      const doc: LocalMailboxDoc = {
        _id: input.id,
        seq,
        user: input.user,
        text: input.text,
        buttons: copyButtons(input.buttons),
        card: cardText(input.card),
        attachments: (input.attachments ?? []).map((a) => ({ id: a.id, name: a.name, mimeType: a.mimeType, size: a.size })),
        at: input.at,
        role: input.role ?? "assistant",
        channel: input.channel ?? "local",
      };
      await this.messages.insertOne(doc);
      return toLocalMessage(doc);
    });
  }

  editLocalMessage(id: string, patch: { text: string; buttons: Button[]; card?: Json | null }, _now: Date): Promise<LocalMessage | null> {
    return this.atomically(async () => {
      if ((await this.messages.findOne({ _id: id }, { projection: { _id: 1 } })) === null) return null;
      const seq = await nextCounterValue(this.counters, localMailboxCounter);
      const doc = await this.messages.findOneAndUpdate(
        { _id: id },
        // `at` stays the time the message was first said; only its place in the feed moves.
        { $set: { text: patch.text, buttons: copyButtons(patch.buttons), card: cardText(patch.card), seq } },
      );
      return doc === null ? null : toLocalMessage(doc);
    });
  }

  async getLocalMessage(id: string): Promise<LocalMessage | null> {
    const doc = await this.messages.findOne({ _id: id });
    return doc === null ? null : toLocalMessage(doc);
  }

  async listLocalMessages(user: string, afterSeq: number, limit: number): Promise<LocalMessage[]> {
    if (limit <= 0) return [];
    const docs = await this.messages.find({ user, seq: { $gt: afterSeq } }, { sort: { seq: 1 }, limit });
    return docs.map(toLocalMessage);
  }

  async listLocalMessagesBefore(user: string, beforeSeq: number, limit: number): Promise<LocalMessage[]> {
    if (limit <= 0) return [];
    const docs = await this.messages.find({ user, seq: { $lt: beforeSeq } }, { sort: { seq: -1 }, limit });
    return docs.map(toLocalMessage).reverse();
  }
}
