import type { ArtifactId, PersonId } from "../ids.js";
import type { CardView } from "./card-view.js";
import type { AttachmentKind } from "../conversation/records.js";
import type { Button, ChannelName } from "./records.js";

/**
 * The channel port: one adapter per messenger (and the local web chat) in `bots/`. Adapters turn
 * platform updates into `InboundEvent`s and render `OutboundContent` natively.
 */

/** Where a message goes on a channel: the account and the platform address (chat / DM channel id). */
export interface ChannelTarget {
  accountId: string;
  address: string;
}

/**
 * A file sent with a message as a real attachment: adapters send images as photos (Telegram
 * `sendPhoto`, inline images elsewhere) and everything else as documents/files.
 */
export interface OutboundAttachment {
  id: ArtifactId;
  /** File name shown to the person. */
  name: string;
  /** MIME type, e.g. `image/png`. */
  mimeType: string;
  bytes: Buffer;
}

/** Where the outbox reads attachment bytes (the person's artifacts). */
export interface AttachmentSource {
  /** The attachment, or null when it no longer exists (or is not the person's). */
  loadAttachment(personId: PersonId, id: ArtifactId): Promise<OutboundAttachment | null>;
}

/** True for image types every messenger shows inline as a photo. */
export function isPhoto(attachment: Pick<OutboundAttachment, "mimeType">): boolean {
  return /^image\/(png|jpeg|gif|webp)$/.test(attachment.mimeType);
}

/**
 * The body of a part that carries one file. The outbox makes these parts itself, after the text
 * parts the adapter rendered; every adapter's `sendPart` recognises them with {@link fileOfPart}
 * and sends the file natively (Telegram photo/document, Slack file, Discord attachment, WhatsApp
 * media, local chat attachment). Their `plain` text names the file, so a platform that refuses the
 * file still gets a line saying so.
 */
export interface FilePartBody {
  kind: "file";
  file: OutboundAttachment;
  /**
   * Send it as a plain document/file even when it is an image (the outbox asks for this after the
   * platform refused it as a photo).
   */
  asDocument?: boolean;
}

/** A part carrying `file` (see {@link FilePartBody}); `asDocument` asks for a document even for an image. */
export function filePart(file: OutboundAttachment, options?: { asDocument?: boolean }): OutboundPart {
  const body: FilePartBody = { kind: "file", file, ...(options?.asDocument && { asDocument: true }) };
  return { body, plain: `📎 ${file.name} (${file.bytes.length} bytes) could not be attached here.`, buttons: false };
}

/** True when a file part asks to be sent as a document rather than a photo (see {@link FilePartBody.asDocument}). */
export function sendsAsDocument(part: OutboundPart): boolean {
  const body = part.body;
  return typeof body === "object" && body !== null && "asDocument" in body && body.asDocument === true;
}

/** The file a part carries, or null for an adapter's own text part. */
export function fileOfPart(part: OutboundPart): OutboundAttachment | null {
  const body = part.body;
  if (typeof body !== "object" || body === null || !("kind" in body) || body.kind !== "file" || !("file" in body)) return null;
  const file = body.file;
  return typeof file === "object" && file !== null && "bytes" in file && Buffer.isBuffer(file.bytes) ? (file as OutboundAttachment) : null;
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
  /**
   * A structured approval card (Sentinel's view model). Surfaces that can draw it (the web chat) do;
   * the others send `text`, which is always its complete markdown rendering.
   */
  card?: CardView;
}

/**
 * How a platform refused a delivery — a closed set, because each asks for a different reaction:
 * - `recipient_gone`: the person blocked the bot, left or deleted the chat; the identity is marked
 *   unreachable until they write again, and the message is not retried there;
 * - `payload_rejected`: this payload cannot be sent (too long, bad entities, the message to edit is
 *   gone); the outbox re-renders it (plain text, smaller parts, or a new message instead of an edit)
 *   and never treats it as a reason to stop talking to the person;
 * - `rate_limited`: retry after `retryAfterMs`;
 * - `transient`: network, 5xx, the channel not connected yet; retried with backoff.
 */
export type DeliveryOutcome = "recipient_gone" | "payload_rejected" | "rate_limited" | "transient";

/** Thrown by adapters when the platform refused a delivery; `outcome` says what the outbox does next. */
export class DeliveryError extends Error {
  readonly code = "CHANNEL_ERROR" as const;
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    readonly outcome: DeliveryOutcome,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options);
    this.name = "DeliveryError";
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/**
 * How the rendering of a message is asked for: `rich` uses the platform's formatting; `plain` sends
 * the text literally (the fallback after the platform rejected a formatted payload). `scale` shrinks
 * the per-message limit (1 = the platform's own; 0.25 after a "too long" on a plain part).
 */
export interface RenderOptions {
  style: "rich" | "plain";
  scale: number;
}

/**
 * One platform message of a rendered outbound message. `body` is the adapter's own payload (opaque
 * to the core); `plain` is the part's visible text as plain text (link addresses written out, so
 * nothing is lost), which the outbox re-renders in plain style if the platform rejects `body`;
 * `buttons` is true on the part that carries the buttons (the last).
 */
export interface OutboundPart {
  body: unknown;
  plain: string;
  buttons: boolean;
}

/**
 * How a part whose send was cut short (the process died after the request, before the answer was
 * recorded) is settled after a restart:
 * - `idempotent`: sending again with the same key cannot duplicate it (the platform dedupes);
 * - `lookup`: `findSent` tells whether it arrived;
 * - `at-most-once`: the platform offers no way to check; a text or file part is sent again marked as
 *   a possible repeat, while a card or a part with buttons (where a repeat would harm) is not sent
 *   again and the person is told it may not have arrived (core/outbox/delivery.ts `mayRepeat`).
 */
export type ResendMode = "idempotent" | "lookup" | "at-most-once";

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
  /** The sender's language as the platform says it (Telegram's `language_code`, an IETF tag such as `de` or `pt-br`), if any. */
  languageCode?: string;
  /**
   * Set when the update came from a group chat (an ALLOW_GROUPS entry): the platform's id of that
   * group. Groups have their own member list; the core serves only its members there.
   */
  groupId?: string;
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
  /** How an interrupted send is settled after a restart (see ResendMode). */
  readonly resend: ResendMode;
  /** Connects to the platform and starts delivering events to `sink`. Throws if the platform refuses. */
  start(sink: InboundSink): Promise<void>;
  stop(): Promise<void>;
  /**
   * The platform messages `content` takes, in order, each within the platform's limits as the
   * platform counts them; the buttons ride on the last. Pure and deterministic: a restarted process
   * renders the same parts. An empty list means nothing visible to send.
   */
  render(content: OutboundContent, options: RenderOptions): OutboundPart[];
  /**
   * Sends one part; `key` is unique per part and stable across restarts (platforms that dedupe use
   * it). Returns the platform's message id. Throws DeliveryError.
   */
  sendPart(target: ChannelTarget, part: OutboundPart, key: string): Promise<string>;
  /** For `resend: "lookup"`: the id of the part sent with `key` since `since`, or null if it never arrived. */
  findSent?(target: ChannelTarget, key: string, since: Date): Promise<string | null>;
  /** Replaces an earlier message's text and buttons (an approval card showing its outcome). Throws DeliveryError. */
  edit?(target: ChannelTarget, platformIds: string[], content: OutboundContent): Promise<void>;
  /** Shows a typing indicator for the platform's own duration (callers renew it). */
  typing?(target: ChannelTarget): Promise<void>;
  /**
   * Who Familiar is on this platform once started (the bot's name, @handle and a link that opens a
   * chat with it), for the setup page's "send this code to …"; null before start or when unknown.
   */
  account?(): BotAccount | null;
}

/**
 * Familiar's own account on a platform: `name` as people see it ("Familiar"), `handle` where the
 * platform has one ("@familiar_bot"), `url` a link that opens a chat with it (Telegram's
 * `https://t.me/<username>`; null where the platform has no such link).
 */
export interface BotAccount {
  name: string;
  handle: string | null;
  url: string | null;
}
