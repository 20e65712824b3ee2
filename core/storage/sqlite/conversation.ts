import { asId, newId, type MessageId, type PersonId } from "../../ids.js";
import { type ConversationRepository, readAttachments } from "../index.js";
import { type ChannelName } from "../../channels/records.js";
import { type ConversationMessage, type ConversationSummary, type NewConversationMessage } from "../../conversation/records.js";
import { type Row, type SqliteContext, ms, toDate } from "./context.js";
import { DuplicateKeyError } from "../../errors.js";

function toMessage(row: Row): ConversationMessage {
  return {
    id: asId("message", row.id as string),
    personId: asId("person", row.person_id as string),
    seq: row.seq as number,
    role: row.role as ConversationMessage["role"],
    channel: row.channel as ChannelName,
    text: row.text as string,
    taskId: row.task_id === null ? null : asId("task", row.task_id as string),
    at: toDate(row.at),
    attachments: row.attachments === null || row.attachments === undefined ? [] : readAttachments(JSON.parse(row.attachments as string)),
  };
}

function toSummary(row: Row): ConversationSummary {
  return {
    personId: asId("person", row.person_id as string),
    upToSeq: row.up_to_seq as number,
    text: row.text as string,
    updatedAt: toDate(row.updated_at),
  };
}

/** The person's one conversation; `seq` is assigned inside the INSERT, so it is gap-free and race-free. */
export class SqliteConversationRepository implements ConversationRepository {
  constructor(private readonly ctx: SqliteContext) {}

  appendMessage(input: NewConversationMessage): Promise<ConversationMessage> {
    const id = newId("message");
    return this.ctx.run(
      () =>
        toMessage(
          this.ctx
            .stmt(
              `INSERT INTO messages (id, person_id, seq, role, channel, text, task_id, at, attachments)
               VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE person_id = ?), ?, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(
              id,
              input.personId,
              input.personId,
              input.role,
              input.channel,
              input.text,
              input.taskId,
              ms(input.at ?? this.ctx.clock.now()),
              input.attachments?.length ? JSON.stringify(input.attachments) : null,
            ) as Row,
        ),
      { duplicate: (cause) => new DuplicateKeyError("message", id, { cause }), references: { entity: "person", id: input.personId } },
    );
  }

  listRecentMessages(personId: PersonId, limit: number): Promise<ConversationMessage[]> {
    return this.ctx.run(() =>
      (this.ctx
        .stmt("SELECT * FROM (SELECT * FROM messages WHERE person_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq")
        .all(personId, limit) as Row[]).map(toMessage),
    );
  }

  listMessagesAfter(personId: PersonId, afterSeq: number, limit: number): Promise<ConversationMessage[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM messages WHERE person_id = ? AND seq > ? ORDER BY seq LIMIT ?").all(personId, afterSeq, limit) as Row[]).map(
        toMessage,
      ),
    );
  }

  listMessagesBetween(personId: PersonId, fromSeq: number, toSeq: number): Promise<ConversationMessage[]> {
    return this.ctx.run(() =>
      (this.ctx
        .stmt("SELECT * FROM messages WHERE person_id = ? AND seq BETWEEN ? AND ? ORDER BY seq")
        .all(personId, fromSeq, toSeq) as Row[]).map(toMessage),
    );
  }

  getMessage(id: MessageId): Promise<ConversationMessage | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM messages WHERE id = ?").get(id) as Row | undefined;
      return row ? toMessage(row) : null;
    });
  }

  lastSeq(personId: PersonId): Promise<number> {
    return this.ctx.run(() => this.ctx.stmt("SELECT coalesce(max(seq), 0) FROM messages WHERE person_id = ?").pluck().get(personId) as number);
  }

  getSummary(personId: PersonId): Promise<ConversationSummary | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM summaries WHERE person_id = ?").get(personId) as Row | undefined;
      return row ? toSummary(row) : null;
    });
  }

  saveSummary(summary: Omit<ConversationSummary, "updatedAt">, expectedUpToSeq: number | null): Promise<boolean> {
    const now = this.ctx.nowMs();
    return this.ctx.run(
      () => {
        const result =
          expectedUpToSeq === null
            ? this.ctx
                .stmt("INSERT INTO summaries (person_id, up_to_seq, text, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (person_id) DO NOTHING")
                .run(summary.personId, summary.upToSeq, summary.text, now)
            : this.ctx
                .stmt("UPDATE summaries SET up_to_seq = ?, text = ?, updated_at = ? WHERE person_id = ? AND up_to_seq = ?")
                .run(summary.upToSeq, summary.text, now, summary.personId, expectedUpToSeq);
        return result.changes === 1;
      },
      { references: { entity: "person", id: summary.personId } },
    );
  }
}
