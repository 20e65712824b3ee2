/**
 * The person's one continuous conversation across every channel: its messages, the files that came
 * with them, and the rolling summary.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { MessageId, PersonId, TaskId } from "../ids.js";
import type { ChannelName } from "../channels/records.js";

/** What kind of file a message carries (a photo is an `image`, a voice note a `voice`). */
export const attachmentKinds = ["image", "voice", "audio", "video", "document", "sticker"] as const;

export type AttachmentKind = (typeof attachmentKinds)[number];

/**
 * A file that came with a person's message, as the conversation records it. The bytes are never
 * stored here: a kept file lives in the person's workspace at `path`.
 */
export interface MessageAttachment {
  kind: AttachmentKind;
  /** MIME type as the platform reported it, or null. */
  mimeType: string | null;
  /** Size in bytes, or null when unknown. */
  size: number | null;
  /** The file's own name, or null (photos and voice notes usually have none). */
  fileName: string | null;
  /** A caption or description of this file apart from the message text (Discord alt text, Slack title), or null. */
  caption: string | null;
  /** Workspace-relative path where the file was saved, or null when it was not kept. */
  path: string | null;
  /** What a voice note says (transcribed), or null. */
  transcript: string | null;
  /** A sticker's emoji (or its name where the platform gives no emoji), or null. */
  emoji: string | null;
  /** Length of a voice note, audio or video in seconds, or null. */
  durationSeconds: number | null;
  /** What could not be done with it, in a few words (e.g. "not transcribed: no transcription service"), or null. */
  note: string | null;
}

/** A message of the person's one continuous conversation, across every channel. */
export interface ConversationMessage {
  id: MessageId;
  personId: PersonId;
  /** Position in the person's conversation, 1-based and gap-free; assigned by the store. */
  seq: number;
  role: "user" | "assistant";
  channel: ChannelName;
  text: string;
  /** The task this message belongs to, for assistant messages produced by background work. */
  taskId: TaskId | null;
  at: Date;
  /** Files that came with a person's message, in the order sent (empty for most messages). */
  attachments: MessageAttachment[];
}

export type NewConversationMessage = Omit<ConversationMessage, "id" | "seq" | "at" | "attachments"> & { at?: Date; attachments?: MessageAttachment[] };

/** Rolling summary of the conversation up to and including `upToSeq`. */
export interface ConversationSummary {
  personId: PersonId;
  upToSeq: number;
  text: string;
  updatedAt: Date;
}
