import type { AttachmentKind, Button, ChannelName } from "../storage/types.js";

/**
 * The channel port: one adapter per messenger (and the local web chat) in `bots/`. Adapters turn
 * platform updates into `InboundEvent`s and render `OutboundContent` natively.
 */

/** Where a message goes on a channel: the account and the platform address (chat / DM channel id). */
export interface ChannelTarget {
  accountId: string;
  address: string;
}

/** What Familiar says: markdown text plus optional buttons (rendered natively per platform). */
export interface OutboundContent {
  text: string;
  buttons: Button[];
  /**
   * The outbox row's unique delivery key. Adapters whose platform can deduplicate (the local
   * mailbox; APIs with idempotency keys) use it so a re-send after a crash between send and
   * "delivered" is not a duplicate; others deliver at least once in that window.
   */
  deliveryKey?: string;
}

/** Result of a delivery: the platform ids of every part sent (a long message may be split). */
export interface DeliveryReceipt {
  platformIds: string[];
}

/**
 * Thrown by adapters when the platform refused a delivery. `permanent` errors (bot blocked, chat
 * gone, message too long after splitting) are never retried with the same payload; others are
 * retried with backoff.
 */
export class DeliveryError extends Error {
  readonly code = "CHANNEL_ERROR" as const;
  constructor(
    message: string,
    readonly permanent: boolean,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options);
    this.name = "DeliveryError";
    this.retryAfterMs = options?.retryAfterMs;
  }
  readonly retryAfterMs: number | undefined;
}

interface InboundBase {
  channel: ChannelName;
  /** The platform's id of this update (Telegram update_id, Slack event_id, …); used for durable dedupe. */
  updateId: string;
  /** The sender's account id on the platform. */
  accountId: string;
  /** Where replies go (chat id, DM channel id). */
  address: string;
  /** Display name as the platform shows it, if any. */
  displayName?: string;
  at: Date;
}

/**
 * A file that came with an inbound message, as the platform describes it. The bytes are fetched
 * only when the core asks (`fetch`), through the platform's own API (Telegram getFile, Slack
 * `url_private` with the bot token, Discord's attachment URL, WhatsApp `downloadMedia`).
 */
export interface InboundAttachment {
  kind: AttachmentKind;
  /** MIME type as the platform reports it, or null. */
  mimeType: string | null;
  /** Size in bytes as the platform reports it (before download), or null when it does not say. */
  size: number | null;
  /** The file's own name, or null (photos and voice notes usually have none). */
  fileName: string | null;
  /** A caption of this file apart from the message text (Discord alt text, Slack title), or null. */
  caption: string | null;
  /** A sticker's emoji, or its name where the platform has no emoji; null otherwise. */
  emoji: string | null;
  /** Length of a voice note, audio or video in seconds, or null. */
  durationSeconds: number | null;
  /**
   * Downloads the file. Throws `AttachmentError` with reason `too_large` when it has more than
   * `maxBytes` bytes (checked before the download where the platform says the size, and while
   * reading), `unavailable` when the platform will not give it, `download_failed` otherwise.
   */
  fetch(maxBytes: number): Promise<Buffer>;
}

/** A message from a person: text (a caption, for a file), and any files that came with it. */
export interface InboundMessage extends InboundBase {
  kind: "message";
  /** What the person wrote; the caption of a photo or file; "" when a file came alone. */
  text: string;
  /** Photos, voice notes, documents, stickers… in the order sent; absent or empty for plain text. */
  attachments?: InboundAttachment[];
}

/** A button press (callback query, Block Kit action, Discord interaction, poll vote, local press). */
export interface InboundPress extends InboundBase {
  kind: "press";
  /** The button's opaque id as Familiar created it. */
  buttonId: string;
  /** Platform id of the message the button was on (to edit the card). */
  messageRef: string | null;
}

export type InboundEvent = InboundMessage | InboundPress;

/**
 * What became of an inbound event:
 * - `accepted`: recorded durably; a turn follows (acknowledge the platform now);
 * - `duplicate`: this update id was processed before (a redelivery): do nothing;
 * - `handled`: a command or button press was dealt with; any answer goes through the outbox;
 * - `ignored`: not from anyone Familiar talks to (unknown sender, pairing pending, group not enabled).
 * `notice` is a short text for the platform's native transient feedback on a press (Telegram
 * callback answer, Slack ephemeral message, Discord ephemeral follow-up), e.g. "This isn't yours".
 */
export interface InboundOutcome {
  status: "accepted" | "duplicate" | "handled" | "ignored";
  notice?: string;
}

/**
 * What the core does with an inbound event; adapters call it and acknowledge the platform as soon as
 * it resolves (it only records durably and queues work; the turn runs afterwards).
 */
export type InboundSink = (event: InboundEvent) => Promise<InboundOutcome>;

export interface ChannelAdapter {
  readonly channel: ChannelName;
  /** Connects to the platform and starts delivering events to `sink`. Throws if the platform refuses. */
  start(sink: InboundSink): Promise<void>;
  stop(): Promise<void>;
  /** Sends a message. Throws DeliveryError. */
  send(target: ChannelTarget, content: OutboundContent): Promise<DeliveryReceipt>;
  /** Replaces an earlier message's text and buttons (an approval card showing its outcome). */
  edit?(target: ChannelTarget, platformIds: string[], content: OutboundContent): Promise<void>;
  /** Shows a typing indicator for the platform's own duration (callers renew it). */
  typing?(target: ChannelTarget): Promise<void>;
}
