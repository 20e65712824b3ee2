import { createHash } from "node:crypto";
import { randomUUID } from "node:crypto";
import {
  DeliveryError,
  type ChannelAdapter,
  type ChannelTarget,
  type OutboundPart,
  type InboundEvent,
  type InboundOutcome,
  type InboundSink,
  type OutboundContent,
  fileOfPart,
  cardViewSchema,
} from "../../core/channels/index.js";
import { z } from "zod";
import { systemClock, type Clock } from "../../core/clock.js";
import type { LocalMailboxRepository } from "../../core/storage/index.js";
import type { LocalMessage } from "../../core/channels/index.js";
import { KeyedWaiters, type ActivityWait } from "../shared/index.js";

const localPartBody = z.object({ text: z.string(), buttons: z.array(z.object({ id: z.string(), label: z.string() })), card: cardViewSchema.nullable().optional() });

/** How long one `typing()` call keeps the indicator on (ms); callers renew it while they work. */
export const LOCAL_TYPING_MS = 6_000;

/** Options of `LocalChannel`; all optional, for tests and tuning. */
export interface LocalChannelOptions {
  clock?: Clock;
  /** Duration of one typing signal in ms (default `LOCAL_TYPING_MS`). */
  typingMs?: number;
  /** Generates message ids (default: random UUIDs). */
  newId?: () => string;
}

/** A pending long-poll: resolves on the next activity of one user; `cancel` detaches it. */

/** Thrown by `LocalChannel.deliver` when no sink is attached yet (before `start` or after `stop`). */
export class LocalChannelNotStartedError extends Error {
  readonly code = "CHANNEL_ERROR" as const;
  constructor() {
    super("the local chat channel is not started: the core has not attached its inbound sink yet");
    this.name = "LocalChannelNotStartedError";
  }
}

/**
 * The local web chat as a channel: the embedded default's way to talk to Familiar without any
 * messenger. Its "platform" is the `LocalMailboxRepository`: `send` stores a message for the local
 * user (the target's `address`), `edit` replaces an earlier one (bumping its seq so pollers see it),
 * and `typing` sets a short-lived in-memory flag. The HTTP side (`localChatRouter`) reads the mailbox,
 * long-polls through `waitForActivity` and hands inbound events to the core through `deliver`.
 *
 * @example
 * const channel = new LocalChannel(store.localMailbox);
 * http.mount(localChatRouter(channel, { allowRemote: false, logger }));
 * await channel.start(sink);
 */
export class LocalChannel implements ChannelAdapter {
  readonly channel = "local" as const;
  private sink: InboundSink | null = null;
  private readonly clock: Clock;
  private readonly typingMs: number;
  private readonly newId: () => string;
  /** user → epoch ms until which the typing indicator shows. */
  private readonly typingUntil = new Map<string, number>();
  /** user → callbacks of pending long-polls. */
  private readonly waiters = new KeyedWaiters();

  constructor(
    private readonly mailbox: LocalMailboxRepository,
    options: LocalChannelOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.typingMs = options.typingMs ?? LOCAL_TYPING_MS;
    this.newId = options.newId ?? randomUUID;
  }

  /** Keeps the sink; the HTTP routes deliver through it from now on. Nothing to connect to. */
  async start(sink: InboundSink): Promise<void> {
    this.sink = sink;
  }

  /** Detaches the sink and releases every pending long-poll (they answer with what they have). */
  async stop(): Promise<void> {
    this.sink = null;
    this.typingUntil.clear();
    this.waiters.notifyAll();
  }

  /** Sending again with the same key finds the first copy in the mailbox. */
  readonly resend = "idempotent" as const;

  /** One part, whatever the length (the page shows any length); nothing for empty text without buttons. */
  render(content: OutboundContent): OutboundPart[] {
    if (content.text.trim() === "" && content.buttons.length === 0) return [];
    // An approval card travels whole: the page draws it from its structured view.
    return [{ body: { text: content.text, buttons: content.buttons, card: content.card ?? null }, plain: content.text, buttons: content.buttons.length > 0 }];
  }

  /**
   * Stores a message for the local user `target.address` and wakes that user's long-polls; the
   * mailbox is the platform, so the same `key` after a crash finds the first copy. Ends the user's
   * typing indicator. Throws DeliveryError (transient) when the mailbox cannot be written.
   */
  async sendPart(target: ChannelTarget, part: OutboundPart, key: string): Promise<string> {
    const id = `lm_${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
    if (await this.mailbox.getLocalMessage(id)) return id;
    // A file: a message with the attachment's metadata (the page fetches the bytes from the local API).
    const file = fileOfPart(part);
    const body = file ? { text: "", buttons: [] } : localPartBody.parse(part.body);
    const attachments = file ? [{ id: file.id, name: file.name, mimeType: file.mimeType, size: file.bytes.length }] : [];
    try {
      await this.mailbox.putLocalMessage({ id, user: target.address, text: body.text, buttons: body.buttons, card: body.card ?? null, attachments, at: this.clock.now() });
    } catch (err) {
      throw new DeliveryError(`local chat: could not store a message for ${target.address}`, "transient", { cause: err });
    }
    this.typingUntil.delete(target.address);
    this.notify(target.address);
    return id;
  }

  /**
   * Replaces the text and buttons of an earlier message (the first platform id; local messages are
   * never split). Throws a permanent DeliveryError when that message is gone or belongs to another
   * user, a retryable one when the mailbox fails.
   */
  async edit(target: ChannelTarget, platformIds: string[], content: OutboundContent): Promise<void> {
    const id = platformIds[0];
    if (id === undefined) throw new DeliveryError("local chat: edit needs the id of the message to edit", "payload_rejected");
    let existing: LocalMessage | null;
    try {
      existing = await this.mailbox.getLocalMessage(id);
    } catch (err) {
      throw new DeliveryError(`local chat: could not read message ${id}`, "transient", { cause: err });
    }
    if (!existing || existing.user !== target.address) {
      throw new DeliveryError(`local chat: message ${id} of ${target.address} does not exist`, "payload_rejected");
    }
    let edited: LocalMessage | null;
    try {
      edited = await this.mailbox.editLocalMessage(id, { text: content.text, buttons: content.buttons, card: content.card ?? null }, this.clock.now());
    } catch (err) {
      throw new DeliveryError(`local chat: could not edit message ${id}`, "transient", { cause: err });
    }
    if (!edited) throw new DeliveryError(`local chat: message ${id} disappeared before it could be edited`, "payload_rejected");
    this.notify(target.address);
  }

  /** Shows "typing…" to the local user for `typingMs`; a renewal extends it. */
  async typing(target: ChannelTarget): Promise<void> {
    const wasTyping = this.isTyping(target.address);
    this.typingUntil.set(target.address, this.clock.now().getTime() + this.typingMs);
    if (!wasTyping) this.notify(target.address);
  }

  /** Whether the typing indicator is on for `user` now. */
  isTyping(user: string): boolean {
    const until = this.typingUntil.get(user);
    if (until === undefined) return false;
    if (until > this.clock.now().getTime()) return true;
    this.typingUntil.delete(user);
    return false;
  }

  /** Milliseconds until the typing indicator of `user` goes off (0 when it is off). */
  typingRemainingMs(user: string): number {
    return this.isTyping(user) ? (this.typingUntil.get(user) ?? 0) - this.clock.now().getTime() : 0;
  }

  /**
   * Hands an inbound event to the core's sink and resolves with its outcome when the sink has (the
   * core records the message durably and enqueues the activation). Throws
   * LocalChannelNotStartedError before `start`, and whatever the sink throws.
   */
  async deliver(event: InboundEvent): Promise<InboundOutcome> {
    const sink = this.sink;
    if (!sink) throw new LocalChannelNotStartedError();
    return sink(event);
  }

  /** Messages for `user` with seq after `afterSeq`, oldest first, at most `limit`. */
  listMessages(user: string, afterSeq: number, limit: number): Promise<LocalMessage[]> {
    return this.mailbox.listLocalMessages(user, afterSeq, limit);
  }

  /** One message by id, or null. */
  getMessage(id: string): Promise<LocalMessage | null> {
    return this.mailbox.getLocalMessage(id);
  }

  /**
   * Subscribes to the next activity of `user`: a new message, an edit, typing turning on, or the
   * channel stopping. Subscribe *before* reading the mailbox so nothing slips between the read and
   * the wait; always `cancel` when done (it is safe after the activity fired).
   */
  waitForActivity(user: string): ActivityWait {
    return this.waiters.wait(user);
  }

  private notify(user: string): void {
    this.waiters.notify(user);
  }

}
