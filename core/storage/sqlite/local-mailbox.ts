import { DuplicateKeyError } from "../../errors.js";
import type { LocalMailboxRepository } from "../index.js";
import type { Button, ChannelName, LocalAttachment, LocalMessage, NewLocalMessage } from "../../channels/records.js";
import type { Json } from "../../json.js";
import { type Row, type SqliteContext, jsonText, ms, parseJson, toDate } from "./context.js";

function toLocal(row: Row): LocalMessage {
  return {
    seq: row.seq as number,
    id: row.id as string,
    user: row.user as string,
    text: row.text as string,
    buttons: parseJson<Button[]>(row.buttons),
    card: row.card === null || row.card === undefined ? null : parseJson<Json>(row.card),
    attachments: parseJson<LocalAttachment[]>(row.attachments ?? "[]"),
    at: toDate(row.at),
    role: row.role === "user" ? "user" : "assistant",
    channel: row.channel as ChannelName,
  };
}

function cardText(card: Json | null | undefined): string | null {
  return card === undefined || card === null ? null : jsonText(card);
}

const nextSeq = "(SELECT coalesce(max(seq), 0) + 1 FROM local_messages)";

/** The local web chat's mailbox. `seq` is store-wide and only grows (an edit takes a new, higher one). */
export class SqliteLocalMailboxRepository implements LocalMailboxRepository {
  constructor(private readonly ctx: SqliteContext) {}

  putLocalMessage(input: NewLocalMessage): Promise<LocalMessage> {
    return this.ctx.run(
      () =>
        toLocal(
          this.ctx
            .stmt(`INSERT INTO local_messages (id, seq, user, text, buttons, card, attachments, at, role, channel) VALUES (?, ${nextSeq}, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`)
            .get(input.id, input.user, input.text, jsonText(input.buttons), cardText(input.card), jsonText(input.attachments ?? []), ms(input.at), input.role ?? "assistant", input.channel ?? "local") as Row,
        ),
      { duplicate: (cause) => new DuplicateKeyError("local message", input.id, { cause }) },
    );
  }

  /** Keeps the message's original `at`. */
  editLocalMessage(id: string, patch: { text: string; buttons: Button[]; card?: Json | null }, _now: Date): Promise<LocalMessage | null> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(`UPDATE local_messages SET text = ?, buttons = ?, card = ?, seq = ${nextSeq} WHERE id = ? RETURNING *`)
        .get(patch.text, jsonText(patch.buttons), cardText(patch.card), id) as Row | undefined;
      return row ? toLocal(row) : null;
    });
  }

  getLocalMessage(id: string): Promise<LocalMessage | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM local_messages WHERE id = ?").get(id) as Row | undefined;
      return row ? toLocal(row) : null;
    });
  }

  listLocalMessages(user: string, afterSeq: number, limit: number): Promise<LocalMessage[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM local_messages WHERE user = ? AND seq > ? ORDER BY seq LIMIT ?").all(user, afterSeq, limit) as Row[]).map(toLocal),
    );
  }

  listLocalMessagesBefore(user: string, beforeSeq: number, limit: number): Promise<LocalMessage[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM local_messages WHERE user = ? AND seq < ? ORDER BY seq DESC LIMIT ?").all(user, beforeSeq, limit) as Row[]).map(toLocal).reverse(),
    );
  }
}
