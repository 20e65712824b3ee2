import type { CardView } from "../sentinel/card-view.js";
import type { Button, ChannelName } from "../storage/types.js";

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
  /**
   * A structured approval card (Sentinel's view model). Surfaces that can draw it (the web chat) do;
   * the others send `text`, which is always its complete markdown rendering.
   */
  card?: CardView;
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
  /**
   * Set when the update came from a group chat (an ALLOW_GROUPS entry): the platform's id of that
   * group. Groups have their own member list; the core serves only its members there.
   */
  groupId?: string;
  at: Date;
}

/** A text message from a person. */
export interface InboundMessage extends InboundBase {
  kind: "message";
  text: string;
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
