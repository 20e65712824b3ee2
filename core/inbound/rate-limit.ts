/**
 * The inbound rate limit: how many messages per window Familiar reads from one sender, from one
 * chat and from everyone together (settings INBOUND_LIMIT_PER_SENDER, INBOUND_LIMIT_PER_CHAT,
 * INBOUND_LIMIT_GLOBAL per INBOUND_LIMIT_WINDOW_SECONDS). A message over a limit is never dropped:
 * the inbound handler records it in the conversation as usual, and when it would start a new turn
 * that turn waits until the window opens (later messages join it), so a flood costs at most one
 * extra model call per window. The person gets one "slow down" notice per window, not one per
 * message.
 *
 * Counters live in this process's memory (rate-limiter-flexible's `RateLimiterMemory`): with
 * several processes on one store each process counts on its own.
 */
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { InboundMessage } from "../channels/index.js";
import type { Clock } from "../clock.js";
import type { PersonId } from "../ids.js";

/** Messages per window (each ≥ 1) and the window, seconds. */
export interface InboundLimits {
  perSender: number;
  perChat: number;
  global: number;
  windowSeconds: number;
}

/** The verdict on one message: within the limits, or over one (the turn waits until `retryAt`; `notify` once per window). */
export type RateVerdict = { allowed: true } | { allowed: false; retryAt: Date; notify: boolean };

/** Counts inbound messages per sender, per chat and in total (see module doc). */
export class InboundRateLimit {
  private readonly sender: RateLimiterMemory;
  private readonly chat: RateLimiterMemory;
  private readonly all: RateLimiterMemory;
  private readonly notices: RateLimiterMemory;

  constructor(
    limits: InboundLimits,
    private readonly clock: Clock,
  ) {
    const duration = limits.windowSeconds;
    this.sender = new RateLimiterMemory({ keyPrefix: "sender", points: limits.perSender, duration });
    this.chat = new RateLimiterMemory({ keyPrefix: "chat", points: limits.perChat, duration });
    this.all = new RateLimiterMemory({ keyPrefix: "all", points: limits.global, duration });
    this.notices = new RateLimiterMemory({ keyPrefix: "notice", points: 1, duration });
  }

  /**
   * Counts `event` from `personId`. A sender over their own limit does not use up the chat's or
   * everyone's allowance.
   */
  async check(event: Pick<InboundMessage, "channel" | "accountId" | "address" | "groupId">, personId: PersonId): Promise<RateVerdict> {
    const chatKey = `${event.channel}:${event.groupId ?? event.address}`;
    for (const [limiter, key] of [
      [this.sender, `${event.channel}:${event.accountId}`],
      [this.chat, chatKey],
      [this.all, "all"],
    ] as const) {
      const over = await consumeOrRejected(limiter, key);
      if (over !== null) {
        const notify = (await consumeOrRejected(this.notices, personId)) === null;
        return { allowed: false, retryAt: new Date(this.clock.now().getTime() + over.msBeforeNext), notify };
      }
    }
    return { allowed: true };
  }
}

/** Consumes one point: null when allowed, the limiter's answer when over the limit. */
async function consumeOrRejected(limiter: RateLimiterMemory, key: string): Promise<RateLimiterRes | null> {
  try {
    await limiter.consume(key);
    return null;
  } catch (err) {
    if (err instanceof RateLimiterRes) return err;
    throw err;
  }
}

/** The one "slow down" notice of a window, in the person's words. */
export function slowDownText(retryAt: Date, now: Date): string {
  const seconds = Math.max(1, Math.ceil((retryAt.getTime() - now.getTime()) / 1000));
  const when = seconds < 90 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
  return `You're sending messages faster than I can read them, so I'm slowing down. I've kept every message and will answer them together in about ${when}.`;
}
