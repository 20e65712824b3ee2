import { randomUUID } from "node:crypto";
import { DeliveryError, type ChannelAdapter } from "../channels/port.js";
import type { Clock } from "../clock.js";
import type { PersonId } from "../ids.js";
import type { Logger } from "../log.js";
import { parseCardView } from "../sentinel/card-view.js";
import type { Store } from "../storage/ports.js";
import type { ChannelName, Identity, OutboxMessage } from "../storage/types.js";

/** Lease on one outbox row while it is being sent, ms. */
const LEASE_MS = 60_000;
/** Attempts before a transient failure becomes permanent. */
const MAX_ATTEMPTS = 8;

/** Backoff before attempt `n` (1-based), ms: 2 s, 4 s, … capped at 10 min. */
export function retryDelayMs(attempt: number): number {
  return Math.min(2_000 * 2 ** (attempt - 1), 600_000);
}

/**
 * Delivers outbox rows through the channel adapters, in order per person, exactly once: a row is
 * claimed with a lease, sent, then marked delivered with the platform's ids; a crash between send
 * and mark can at worst leave the lease to expire, and adapters that support it pass the delivery
 * key to the platform. Permanent errors (blocked, chat gone) mark the identity unreachable and are
 * never retried (field case T6); transient ones are retried with backoff via `onRetryScheduled`.
 */
export class OutboxDelivery {
  private readonly owner = `outbox:${randomUUID()}`;
  private readonly active = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      store: Store;
      adapters: () => ReadonlyMap<ChannelName, ChannelAdapter>;
      clock: Clock;
      logger: Logger;
      /** Called with the time the next retry of a person's outbox is due (the runtime schedules a job). */
      onRetryScheduled: (personId: PersonId, at: Date) => Promise<void>;
      /** Called after each delivered message (audit, tests). */
      onDelivered?: (message: OutboxMessage) => void;
    },
  ) {}

  /**
   * Delivers everything due for the person (or, without a person, for everyone). Concurrent calls for
   * the same person share one run.
   */
  deliver(personId?: PersonId): Promise<void> {
    const key = personId ?? "*";
    const running = this.active.get(key);
    if (running) return running.then(() => this.deliver(personId));
    const run = this.drainDue(personId).finally(() => this.active.delete(key));
    this.active.set(key, run);
    return run;
  }

  private async drainDue(personId?: PersonId): Promise<void> {
    const { store, clock } = this.deps;
    for (;;) {
      const message = await store.outbox.claimNextOutbound({ owner: this.owner, now: clock.now(), leaseMs: LEASE_MS, ...(personId && { personId }) });
      if (!message) return;
      await this.deliverOne(message);
    }
  }

  private async deliverOne(message: OutboxMessage): Promise<void> {
    const { store, clock, logger } = this.deps;
    const identity = await this.pickIdentity(message);
    if (!identity) {
      await store.outbox.markDeliveryFailed({ id: message.id, owner: this.owner, error: "no reachable identity", retryAt: null, now: clock.now() });
      logger.warn({ outboxId: message.id, personId: message.personId }, "outbound message dropped: the person has no reachable identity");
      return;
    }
    const adapter = this.deps.adapters().get(identity.channel);
    if (!adapter) {
      await this.retry(message, `channel ${identity.channel} is not running`);
      return;
    }
    const target = { accountId: identity.accountId, address: identity.address };
    const card = parseCardView(message.card);
    const content = { text: message.text, buttons: message.buttons, deliveryKey: message.deliveryKey, ...(card ? { card } : {}) };
    try {
      let platformIds: string[];
      if (message.editOf) {
        const original = await store.outbox.getOutbound(message.editOf);
        if (original?.delivered && original.delivered.channel === identity.channel && adapter.edit) {
          await adapter.edit({ accountId: identity.accountId, address: original.delivered.address }, original.delivered.platformIds, content);
          platformIds = original.delivered.platformIds;
        } else {
          platformIds = (await adapter.send(target, content)).platformIds;
        }
      } else {
        platformIds = (await adapter.send(target, content)).platformIds;
      }
      const delivered = await store.outbox.markDelivered({
        id: message.id,
        owner: this.owner,
        channel: identity.channel,
        address: identity.address,
        platformIds,
        now: clock.now(),
      });
      await store.audit.appendAudit({
        personId: message.personId,
        kind: "outbound.sent",
        summary: `${message.editOf ? "Updated a message" : "Sent a message"} on ${identity.channel} (${message.text.length} characters)`,
        data: { outboxId: message.id, channel: identity.channel, parts: platformIds.length },
      });
      this.deps.onDelivered?.(delivered);
    } catch (err) {
      if (err instanceof DeliveryError && err.permanent) {
        await store.persons.setIdentityUnreachable(identity.channel, identity.accountId, err.message, clock.now());
        await store.outbox.markDeliveryFailed({ id: message.id, owner: this.owner, error: err.message, retryAt: null, now: clock.now() });
        await store.audit.appendAudit({ personId: message.personId, kind: "outbound.failed", summary: `Could not deliver on ${identity.channel}: ${err.message.slice(0, 200)}; marked unreachable`, data: { outboxId: message.id, channel: identity.channel } });
        logger.warn({ outboxId: message.id, channel: identity.channel, err: err.message }, "permanent delivery failure: identity marked unreachable");
        return;
      }
      await this.retry(message, (err as Error).message, err instanceof DeliveryError ? err.retryAfterMs : undefined);
    }
  }

  private async retry(message: OutboxMessage, error: string, retryAfterMs?: number): Promise<void> {
    const { store, clock, logger } = this.deps;
    const attempt = message.attempts + 1;
    if (attempt >= MAX_ATTEMPTS) {
      await store.outbox.markDeliveryFailed({ id: message.id, owner: this.owner, error, retryAt: null, now: clock.now() });
      logger.error({ outboxId: message.id, err: error }, "outbound message failed after retries");
      return;
    }
    const retryAt = new Date(clock.now().getTime() + Math.max(retryAfterMs ?? 0, retryDelayMs(attempt)));
    await store.outbox.markDeliveryFailed({ id: message.id, owner: this.owner, error, retryAt, now: clock.now() });
    logger.info({ outboxId: message.id, attempt, retryAt }, "outbound message will be retried");
    await this.deps.onRetryScheduled(message.personId, retryAt);
  }

  /** The message's channel, else the channel the person last wrote from, else any reachable identity. */
  private async pickIdentity(message: OutboxMessage): Promise<Identity | null> {
    const { store } = this.deps;
    const identities = (await store.persons.listIdentities(message.personId)).filter((i) => !i.unreachable);
    if (identities.length === 0) return null;
    let channel = message.channel;
    if (!channel) {
      const [last] = await lastUserChannel(store, message.personId);
      channel = last ?? null;
    }
    return identities.find((i) => i.channel === channel) ?? (message.channel ? null : identities[0]!);
  }
}

async function lastUserChannel(store: Store, personId: PersonId): Promise<ChannelName[]> {
  const recent = await store.conversation.listRecentMessages(personId, 20);
  const lastUser = [...recent].reverse().find((m) => m.role === "user");
  return lastUser ? [lastUser.channel] : [];
}
