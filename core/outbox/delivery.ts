import {
  DeliveryError,
  fileOfPart,
  filePart,
  type AttachmentSource,
  type ChannelAdapter,
  type ChannelTarget,
  type OutboundContent,
  type OutboundPart,
  type RenderOptions,
  parseCardView,
} from "../channels/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log/index.js";
import type { DueSource } from "../scheduling/index.js";
import { Outbound } from "./outbound.js";
import type { Store, ChannelName, DeliveryProgress, Identity, OutboxMessage } from "../storage/index.js";

/** Attempts before a transient failure becomes permanent (with the backoff below: about 2.5 hours). */
const MAX_ATTEMPTS = 20;

/** Backoff before attempt `n` (1-based), ms: 2 s, 4 s, … capped at 10 min. */
export function retryDelayMs(attempt: number): number {
  return Math.min(2_000 * 2 ** (attempt - 1), 600_000);
}

/**
 * Rendering levels, tried in order after the platform rejects a part's payload: the platform's own
 * formatting, then the part's plain text, then its plain text in quarter-size parts.
 */
export const renderLevels: readonly RenderOptions[] = [
  { style: "rich", scale: 1 },
  { style: "plain", scale: 1 },
  { style: "plain", scale: 0.25 },
];

/**
 * Told to the person when a part that must not be repeated (a card, a message with buttons) may not
 * have arrived (a crash mid-send on a platform that cannot be checked).
 */
export const uncertainNotice =
  "I was restarted while sending you a message with buttons and can't tell whether it arrived. If a card or a question with buttons seems missing, open the dashboard or ask me to show it again.";

/** Heads a part sent again after a crash cut its send short on a platform that cannot be checked. */
export const repeatMark = "↻ Sent again after a restart — you may already have this part:";

/**
 * Whether a part cut short by a crash may be sent again where the platform cannot say whether it
 * arrived: text and files may (a repeat costs a moment's reading and is marked); a card or a part
 * carrying buttons may not (two live cards for one decision, a second press of a payment).
 */
export function mayRepeat(message: Pick<OutboxMessage, "card">, part: OutboundPart): boolean {
  return message.card === null && !part.buttons;
}

/** The slice of the store delivery needs. */
export type OutboxStore = Pick<Store, "outbox" | "persons" | "audit" | "conversation">;

export interface OutboxDeliveryDeps {
  store: OutboxStore;
  adapters: () => ReadonlyMap<ChannelName, ChannelAdapter>;
  clock: Clock;
  logger: Logger;
  /** This process's lease owner id (shared with the task runtime and renewed by its heartbeat). */
  owner: string;
  /** Lease on a row being sent, ms. */
  leaseMs: number;
  /** Called after each delivered message (audit, tests). */
  onDelivered?: (message: OutboxMessage) => void;
  /** Reads the bytes of a message's attachments (artifacts); without it they are named as gone. */
  attachments?: AttachmentSource;
}

/**
 * Delivers outbox rows through the channel adapters — in order per person, each part exactly once
 * where the platform allows it:
 * - a row is claimed with a lease (renewed by the process heartbeat; a dead process's lease ends and
 *   the row is claimable again, in embedded mode at once on restart);
 * - the parts are rendered deterministically and their progress saved before and after each send, so
 *   a restarted process continues with the next part. A part cut short by a crash is settled by the
 *   adapter's {@link ChannelAdapter.resend} mode: sent again (idempotent platforms), looked up, or —
 *   on platforms that offer no way to check — sent again marked as a possible repeat ({@link repeatMark}),
 *   except a card or a part with buttons, which is given up with an honest notice ({@link mayRepeat});
 * - a rejected payload is re-rendered (plain, then smaller parts) and a failed edit becomes a new
 *   message, never a reason to stop talking to the person; a recipient who blocked the bot is marked
 *   unreachable until they write again; rate limits and transient errors are retried with backoff.
 *
 * It is the {@link DueSource} of the outbox's DueLoop: due rows, rows to retry, and rows left
 * "sending" by a dead process are all found by one claim.
 */
export class OutboxDelivery implements DueSource<OutboxMessage> {
  /** The delivery's own notices (a part that may not have arrived): this loop looks again after every row, so they need no wake. */
  private readonly notices: Outbound;

  constructor(private readonly deps: OutboxDeliveryDeps) {
    this.notices = new Outbound({ store: deps.store, clock: deps.clock, wake: () => undefined });
  }

  nextDueAt(): Promise<Date | null> {
    return this.deps.store.outbox.nextDueAt();
  }

  claim(): Promise<OutboxMessage | null> {
    const { store, clock, owner, leaseMs } = this.deps;
    return store.outbox.claimNextOutbound({ owner, now: clock.now(), leaseMs });
  }

  keyOf(message: OutboxMessage): string {
    return message.personId;
  }

  describe(message: OutboxMessage): Record<string, unknown> {
    return { outboxId: message.id, personId: message.personId };
  }

  /** Delivers one claimed row (or schedules its retry). */
  async run(message: OutboxMessage): Promise<void> {
    const { store, clock, logger } = this.deps;
    // Once a part went out (or may have), the rest follows it there; before that, pick afresh.
    const started = Object.keys(message.progress.sent).length > 0 || message.progress.inflight !== null || message.progress.uncertain.length > 0;
    const target = (started ? message.progress.target : null) ?? (await this.pickTarget(message));
    if (!target) {
      await store.outbox.markDeliveryFailed({ id: message.id, owner: this.deps.owner, error: "no reachable identity", retryAt: null, now: clock.now() });
      logger.warn({ outboxId: message.id, personId: message.personId }, "outbound message dropped: the person has no reachable identity");
      return;
    }
    const adapter = this.deps.adapters().get(target.channel);
    if (!adapter) return this.retry(message, `channel ${target.channel} is not running`);
    const progress: DeliveryProgress = { ...message.progress, target };
    try {
      const platformIds = await this.sendAll(message, adapter, target, progress);
      const delivered = await store.outbox.markDelivered({ id: message.id, owner: this.deps.owner, channel: target.channel, address: target.address, platformIds, now: clock.now() });
      await store.audit.appendAudit({
        personId: message.personId,
        kind: "outbound.sent",
        summary: `${message.editOf ? "Updated a message" : "Sent a message"} on ${target.channel} (${message.text.length} characters)`,
        // `start`: the message's first 80 characters, so the person's activity log says what was sent.
        data: { outboxId: message.id, channel: target.channel, parts: platformIds.length, uncertain: progress.uncertain.length, start: message.text.slice(0, 80) },
      });
      if (progress.uncertain.length > 0) {
        await this.notices.queue({ personId: message.personId, channel: target.channel, deliveryKey: `${message.deliveryKey}:uncertain`, text: uncertainNotice });
      }
      this.deps.onDelivered?.(delivered);
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      if (err.outcome === "recipient_gone") {
        await store.persons.setIdentityUnreachable(target.channel, target.accountId, err.message, clock.now());
        // A message for "wherever they are" that nothing of went out yet tries their other accounts.
        const elsewhere = message.channel === null && Object.keys(progress.sent).length === 0;
        if (elsewhere) await store.outbox.saveProgress({ id: message.id, owner: this.deps.owner, progress: { ...progress, target: null, inflight: null }, now: clock.now(), leaseMs: this.deps.leaseMs });
        await store.outbox.markDeliveryFailed({ id: message.id, owner: this.deps.owner, error: err.message, retryAt: elsewhere ? clock.now() : null, now: clock.now() });
        await store.audit.appendAudit({
          personId: message.personId,
          kind: "outbound.failed",
          summary: `Could not deliver on ${target.channel}: ${err.message.slice(0, 200)}; marked unreachable until they write again`,
          data: { outboxId: message.id, channel: target.channel, outcome: err.outcome },
        });
        logger.warn({ outboxId: message.id, channel: target.channel, err: err.message }, "recipient gone: identity marked unreachable until they write again");
        return;
      }
      // The platform answered (or could not be reached): the part did not go out. Keep what did.
      await store.outbox.saveProgress({ id: message.id, owner: this.deps.owner, progress: { ...progress, inflight: null }, now: clock.now(), leaseMs: this.deps.leaseMs });
      await this.retry(message, err.message, err.retryAfterMs);
    }
  }

  /** Sends every part not yet sent; returns all platform ids in order. Throws DeliveryError to stop. */
  private async sendAll(message: OutboxMessage, adapter: ChannelAdapter, target: Target, progress: DeliveryProgress): Promise<string[]> {
    const card = parseCardView(message.card);
    const content: OutboundContent = { text: message.text, buttons: message.buttons, deliveryKey: message.deliveryKey, ...(card ? { card } : {}) };
    if (message.editOf && adapter.edit) {
      const edited = await this.tryEdit(message, adapter, target, content);
      if (edited) return edited;
    }
    const parts = [...adapter.render(content, renderLevels[0]!), ...(await this.fileParts(message, adapter))];
    const ids: string[] = [];
    for (const [i, part] of parts.entries()) {
      for (;;) {
        const level = progress.fallback[String(i)] ?? 0;
        const slots = level === 0 ? [[String(i), part] as const] : this.reRender(adapter, part, message, level).map((p, j) => [`${i}-${j}`, p] as const);
        try {
          const sentHere: string[] = [];
          for (const [j, [key, p]] of slots.entries()) {
            const id = await this.sendSlot(message, adapter, target, progress, key, p, i === parts.length - 1 && j === slots.length - 1);
            if (id !== null) sentHere.push(id);
          }
          ids.push(...sentHere);
          break;
        } catch (err) {
          if (!(err instanceof DeliveryError) || err.outcome !== "payload_rejected") throw err;
          if (level + 1 >= renderLevels.length) {
            // Even the smallest plain parts were refused: skip this part, say so in the audit, go on.
            await this.deps.store.audit.appendAudit({
              personId: message.personId,
              kind: "outbound.part_rejected",
              summary: `${target.channel} refused part ${i + 1} of a message in every form: ${err.message.slice(0, 200)}`,
              data: { outboxId: message.id, part: i },
            });
            break;
          }
          progress.fallback[String(i)] = level + 1;
          this.deps.logger.info({ outboxId: message.id, part: i, level: level + 1, err: err.message }, "payload rejected: re-rendering the part");
        }
      }
    }
    return ids;
  }

  /**
   * One part per attachment, after the text: the file, or — when it no longer exists — a line
   * saying so (so the parts keep their positions across retries and restarts).
   */
  private async fileParts(message: OutboxMessage, adapter: ChannelAdapter): Promise<OutboundPart[]> {
    const parts: OutboundPart[] = [];
    for (const id of message.attachments) {
      const file = this.deps.attachments ? await this.deps.attachments.loadAttachment(message.personId, id).catch(() => null) : null;
      if (file) parts.push(filePart(file));
      else parts.push(...adapter.render({ text: "(An attached file no longer exists, so it was not sent.)", buttons: [] }, renderLevels[0]!).slice(0, 1));
    }
    return parts;
  }

  private reRender(adapter: ChannelAdapter, part: OutboundPart, message: OutboxMessage, level: number): OutboundPart[] {
    return adapter.render({ text: part.plain, buttons: part.buttons ? message.buttons : [] }, renderLevels[level]!);
  }

  /**
   * Sends one part unless it went out already; settles a part cut short by a crash first. Returns its
   * platform id, or null for a part given up as uncertain.
   */
  private async sendSlot(message: OutboxMessage, adapter: ChannelAdapter, target: Target, progress: DeliveryProgress, key: string, part: OutboundPart, last: boolean): Promise<string | null> {
    const already = progress.sent[key];
    if (already !== undefined) return already;
    if (progress.uncertain.includes(key)) return null;
    const partKey = `${message.deliveryKey}#${key}`;
    if (progress.inflight === key) {
      progress.inflight = null;
      if (adapter.resend === "at-most-once" && mayRepeat(message, part)) return this.resendMarked(message, adapter, target, progress, key, part, last);
      if (adapter.resend === "at-most-once") {
        progress.uncertain.push(key);
        await this.save(message, progress);
        this.deps.logger.warn({ outboxId: message.id, part: key, channel: target.channel }, "a part cut short by a restart is not resent (the platform cannot be asked whether it arrived)");
        return null;
      }
      if (adapter.resend === "lookup" && adapter.findSent) {
        const found = await adapter.findSent(target, partKey, message.createdAt);
        if (found !== null) {
          progress.sent[key] = found;
          await this.save(message, progress);
          return found;
        }
      }
    }
    // Idempotent platforms need no mark before the send: sending again is harmless.
    if (adapter.resend !== "idempotent") {
      progress.inflight = key;
      await this.save(message, progress);
    }
    let id: string;
    try {
      id = await adapter.sendPart(target, part, partKey);
    } finally {
      progress.inflight = null;
    }
    progress.sent[key] = id;
    // The last part needs no save of its own: marking the row delivered records every id.
    if (!last) await this.save(message, progress);
    return id;
  }

  /**
   * Sends again a part whose send a crash cut short, where the platform cannot say whether it arrived:
   * headed by {@link repeatMark} (re-rendered plain with the mark in front when that still fits one
   * platform message; else — and for a file — the mark goes just before it as its own part, key
   * `<key>~mark`). The part stays in flight until it is confirmed, so another crash sends it again.
   */
  private async resendMarked(message: OutboxMessage, adapter: ChannelAdapter, target: Target, progress: DeliveryProgress, key: string, part: OutboundPart, last: boolean): Promise<string> {
    const partKey = `${message.deliveryKey}#${key}`;
    const marked = fileOfPart(part) ? [] : adapter.render({ text: `${repeatMark}\n\n${part.plain}`, buttons: [] }, renderLevels[1]!);
    const single = marked.length === 1 ? marked[0]! : null;
    progress.inflight = key;
    await this.save(message, progress);
    this.deps.logger.warn({ outboxId: message.id, part: key, channel: target.channel }, "a part cut short by a restart is sent again, marked as a possible repeat");
    if (!single && progress.sent[`${key}~mark`] === undefined) {
      const markPart = adapter.render({ text: repeatMark, buttons: [] }, renderLevels[0]!)[0];
      if (markPart) {
        progress.sent[`${key}~mark`] = await adapter.sendPart(target, markPart, `${partKey}~mark`);
        await this.save(message, progress);
      }
    }
    let id: string;
    try {
      id = await adapter.sendPart(target, single ?? part, partKey);
    } finally {
      progress.inflight = null;
    }
    progress.sent[key] = id;
    if (!last) await this.save(message, progress);
    return id;
  }

  /** Edits the original message; null when it cannot be edited (then the text goes out as a new message). */
  private async tryEdit(message: OutboxMessage, adapter: ChannelAdapter, target: Target, content: OutboundContent): Promise<string[] | null> {
    const original = message.editOf ? await this.deps.store.outbox.getOutbound(message.editOf) : null;
    if (!original?.delivered || original.delivered.channel !== target.channel || !adapter.edit) return null;
    try {
      await adapter.edit({ accountId: target.accountId, address: original.delivered.address }, original.delivered.platformIds, content);
      return original.delivered.platformIds;
    } catch (err) {
      if (err instanceof DeliveryError && err.outcome === "payload_rejected") {
        this.deps.logger.info({ outboxId: message.id, err: err.message }, "edit refused: sending the update as a new message");
        return null;
      }
      throw err;
    }
  }

  private async save(message: OutboxMessage, progress: DeliveryProgress): Promise<void> {
    const { store, clock, owner, leaseMs } = this.deps;
    await store.outbox.saveProgress({ id: message.id, owner, progress, now: clock.now(), leaseMs });
  }

  private async retry(message: OutboxMessage, error: string, retryAfterMs?: number): Promise<void> {
    const { store, clock, logger } = this.deps;
    const attempt = message.attempts;
    if (attempt >= MAX_ATTEMPTS) {
      await store.outbox.markDeliveryFailed({ id: message.id, owner: this.deps.owner, error, retryAt: null, now: clock.now() });
      logger.error({ outboxId: message.id, err: error }, "outbound message failed after retries");
      return;
    }
    const retryAt = new Date(clock.now().getTime() + Math.max(retryAfterMs ?? 0, retryDelayMs(attempt)));
    await store.outbox.markDeliveryFailed({ id: message.id, owner: this.deps.owner, error, retryAt, now: clock.now() });
    logger.info({ outboxId: message.id, attempt, retryAt }, "outbound message will be retried");
  }

  /** The message's channel, else the channel the person last wrote from, else any reachable identity. */
  private async pickTarget(message: OutboxMessage): Promise<Target | null> {
    const { store } = this.deps;
    const identities = (await store.persons.listIdentities(message.personId)).filter((i) => !i.unreachable);
    if (identities.length === 0) return null;
    let channel = message.channel;
    if (!channel) {
      const recent = await store.conversation.listRecentMessages(message.personId, 20);
      channel = [...recent].reverse().find((m) => m.role === "user")?.channel ?? null;
    }
    const identity: Identity | undefined = identities.find((i) => i.channel === channel) ?? (message.channel ? undefined : identities[0]);
    return identity ? { channel: identity.channel, address: identity.address, accountId: identity.accountId } : null;
  }
}

type Target = ChannelTarget & { channel: ChannelName };
