/**
 * The channel records: the messengers (and the local web chat) a person can be reached on, a
 * message's buttons, and the local web chat's mailbox (the local channel's "platform", kept in the
 * store).
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { ArtifactId } from "../ids.js";
import type { Json } from "../json.js";

/** Messengers (and the local web chat) a person can be reached on. */
export type ChannelName = "local" | "telegram" | "slack" | "discord" | "whatsapp";

export const channelNames: readonly ChannelName[] = ["local", "telegram", "slack", "discord", "whatsapp"];

export interface Button {
  /** Opaque id, at most 32 ASCII characters (fits Telegram's 64-byte callback_data with a prefix). */
  id: string;
  label: string;
}

export interface LocalMessage {
  /** Increasing per store; used as the polling cursor. */
  seq: number;
  id: string;
  user: string;
  text: string;
  buttons: Button[];
  /** The structured card of an approval request (see `OutboxMessage.card`), else null. */
  card: Json | null;
  /** Files sent with the message (the page links to `/api/local/artifacts/:id`). */
  attachments: LocalAttachment[];
  at: Date;
  /** Who said it: Familiar (`assistant`, the default) or the person (`user`, in a person's chat log). */
  role: "user" | "assistant";
  /** Where it was said (the person's chat log keeps every channel); `local` for the web chat. */
  channel: ChannelName;
}

/** An attachment of a local chat message: enough to show it and fetch its bytes. */
export interface LocalAttachment {
  id: ArtifactId;
  name: string;
  mimeType: string;
  size: number;
}

/** What `putLocalMessage` takes: `role` defaults to `assistant`, `channel` to `local`, `attachments` and `card` to none. */
export type NewLocalMessage = Omit<LocalMessage, "seq" | "role" | "channel" | "attachments" | "card"> & Partial<Pick<LocalMessage, "role" | "channel" | "attachments" | "card">>;
