import type { LocalMailboxRepository } from "../../core/storage/ports.js";
import type { Button, LocalMessage, NewLocalMessage } from "../../core/channels/index.js";
import type { Json } from "../../core/json.js";
import { DuplicateKeyError } from "../../core/errors.js";

/**
 * In-memory `LocalMailboxRepository` with the store's semantics: `seq` increases per mailbox (not
 * per user), an edit gives the message the next seq so pollers past its old seq see it again, and
 * records are copied in and out so callers cannot mutate stored state.
 */
export class InMemoryLocalMailbox implements LocalMailboxRepository {
  private seq = 0;
  private readonly messages = new Map<string, LocalMessage>();

  async putLocalMessage(input: NewLocalMessage): Promise<LocalMessage> {
    if (this.messages.has(input.id)) throw new DuplicateKeyError("local message", input.id);
    const message: LocalMessage = { role: "assistant", channel: "local", ...input, buttons: copyButtons(input.buttons), card: input.card ?? null, attachments: (input.attachments ?? []).map((a) => ({ ...a })), at: new Date(input.at), seq: ++this.seq };
    this.messages.set(message.id, message);
    return copy(message);
  }

  async editLocalMessage(id: string, patch: { text: string; buttons: Button[]; card?: Json | null }, _now: Date): Promise<LocalMessage | null> {
    const existing = this.messages.get(id);
    if (!existing) return null;
    const edited: LocalMessage = { ...existing, text: patch.text, buttons: copyButtons(patch.buttons), card: patch.card ?? null, seq: ++this.seq };
    this.messages.set(id, edited);
    return copy(edited);
  }

  async getLocalMessage(id: string): Promise<LocalMessage | null> {
    const message = this.messages.get(id);
    return message ? copy(message) : null;
  }

  async listLocalMessages(user: string, afterSeq: number, limit: number): Promise<LocalMessage[]> {
    return [...this.messages.values()]
      .filter((m) => m.user === user && m.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
      .map(copy);
  }

  async listLocalMessagesBefore(user: string, beforeSeq: number, limit: number): Promise<LocalMessage[]> {
    return [...this.messages.values()]
      .filter((m) => m.user === user && m.seq < beforeSeq)
      .sort((a, b) => a.seq - b.seq)
      .slice(-limit)
      .map(copy);
  }
}

function copyButtons(buttons: Button[]): Button[] {
  return buttons.map((b) => ({ id: b.id, label: b.label }));
}

function copy(message: LocalMessage): LocalMessage {
  return { ...message, buttons: copyButtons(message.buttons), at: new Date(message.at) };
}
