import {
  channelInWords,
  DeliveryError,
  fileOfPart,
  filePart,
  type AttachmentSource,
  type OutboundAttachment,
  type ChannelAdapter,
  type ChannelTarget,
  type OutboundContent,
  type OutboundPart,
  parseCardView,
} from "../channels/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log/index.js";
import type { DueSource } from "../scheduling/index.js";
import type { Store } from "../storage/index.js";
import type { ChannelName } from "../channels/records.js";
import type { DeliveryProgress, NewOutboxMessage, OutboxMessage } from "./records.js";
import { filePartsAt, stepDownFile, type FileLinker } from "./files.js";
import { GIVE_UP_AFTER_MS, handOffText, minutesOf, reasonInWords, unsentInWords, unsentOf } from "./handoff.js";
import { Outbound } from "./outbound.js";
import { mayRepeat, renderLevels, repeatMark, retryDelayMs, uncertainNotice } from "./policy.js";
import { chooseLanes, routeFacts, routeRow, type PagePresence } from "./routing.js";

export { mayRepeat, renderLevels, repeatMark, retryDelayMs, uncertainNotice } from "./policy.js";

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
  /** Whether a person has a web chat page open (routing counts the web chat only then); without it, never. */
  presence?: PagePresence;
  /** Links to a person's files, for an attachment a platform refused as a file. */
  fileLink?: FileLinker;
}

/** How many unrouted rows one claim routes first. */
const ROUTE_BATCH = 50;

/**
 * Delivers outbox rows through the channel adapters, in order per person and channel (lane), each
 * part exactly once where the platform allows it: a message for wherever the person is is routed
 * first (`routeRow`); rows are claimed under a lease; progress is saved around every part and a
 * part cut short by a crash is settled by the adapter's resend mode (see `mayRepeat`); a rejected
 * payload is re-rendered, a refused file sent as a document then a link, a blocked recipient marked
 * unreachable and the message routed elsewhere; failures are retried with backoff for
 * {@link GIVE_UP_AFTER_MS}, then given up there and handed to another chat. It is the outbox
 * DueLoop's {@link DueSource}.
 */
export class OutboxDelivery implements DueSource<OutboxMessage> {
  /**
   * The delivery's own messages (a part that may not have arrived, a hand-off to another chat, the
   * copies of reach `all`): this loop looks again after every row, so they need no wake.
   */
  private readonly notices: Outbound;

  constructor(private readonly deps: OutboxDeliveryDeps) {
    this.notices = new Outbound({ store: deps.store, clock: deps.clock, wake: () => undefined });
  }

  nextDueAt(): Promise<Date | null> {
    return this.deps.store.outbox.nextDueAt();
  }

  async claim(): Promise<OutboxMessage | null> {
    const { store, clock, owner, leaseMs } = this.deps;
    await this.routeWaiting();
    return store.outbox.claimNextOutbound({ owner, now: clock.now(), leaseMs });
  }

  keyOf(message: OutboxMessage): string {
    return `${message.personId}:${message.lane ?? "-"}`;
  }

  describe(message: OutboxMessage): Record<string, unknown> {
    return { outboxId: message.id, personId: message.personId, lane: message.lane };
  }

  /** Delivers one claimed row (or schedules its retry, or gives it up on its channel). */
  async run(message: OutboxMessage): Promise<void> {
    const { store, clock } = this.deps;
    const lane = message.lane;
    const progress: DeliveryProgress = { ...message.progress, fallback: { ...message.progress.fallback } };
    // A row from before lanes (or claimed before it was routed): routed by the next claim.
    if (!lane) return void (await store.outbox.rerouteOutbound({ id: message.id, owner: this.deps.owner, progress, error: "not routed yet", now: clock.now() }));
    const started = Object.keys(progress.sent).length > 0 || progress.inflight !== null || progress.uncertain.length > 0;
    let target = (started ? progress.target : null) ?? (await this.targetOn(message, lane));
    if (target && !(await this.reachable(message, target))) target = null;
    if (!target) return this.offLane(message, progress, lane, `no reachable account on ${channelInWords(lane)}`);
    progress.target = target;
    const adapter = this.deps.adapters().get(lane);
    if (!adapter) return this.failed(message, progress, lane, `${channelInWords(lane)} is not running`, { reason: `${channelInWords(lane)} is not running` });
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
      progress.inflight = null;
      if (err.outcome !== "recipient_gone") return this.failed(message, progress, lane, err.message, { reason: reasonInWords(lane, err), ...(err.retryAfterMs !== undefined && { retryAfterMs: err.retryAfterMs }) });
      await store.persons.setIdentityUnreachable(target.channel, target.accountId, err.message, clock.now());
      await store.audit.appendAudit({
        personId: message.personId,
        kind: "outbound.failed",
        summary: `Could not deliver on ${target.channel}: ${err.message.slice(0, 200)}; marked unreachable until they write again`,
        data: { outboxId: message.id, channel: target.channel, outcome: err.outcome },
      });
      this.deps.logger.warn({ outboxId: message.id, channel: target.channel, err: err.message }, "recipient gone: identity marked unreachable until they write again");
      return this.offLane(message, progress, lane, err.message);
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
    const textParts = adapter.render(content, renderLevels[0]!);
    progress.textParts = textParts.length;
    const files = await this.files(message);
    const parts: { part: OutboundPart; file: OutboundAttachment | null }[] = [...textParts.map((part) => ({ part, file: null })), ...files.map((f) => this.fileEntry(adapter, f))];
    const ids: string[] = [];
    for (const [i, { part, file }] of parts.entries()) {
      for (;;) {
        const level = progress.fallback[String(i)] ?? 0;
        const pieces = file ? filePartsAt(level, file, adapter, message.personId, this.deps.fileLink, renderLevels[0]!) : level === 0 ? [part] : this.reRender(adapter, part, message, level);
        const whole = file ? level < 2 : level === 0;
        const slots = whole ? [[String(i), pieces[0]!] as const] : pieces.map((p: OutboundPart, j: number) => [`${i}-${j}`, p] as const);
        try {
          const sentHere: string[] = [];
          for (const [j, [key, p]] of slots.entries()) {
            const id = await this.sendSlot(message, adapter, target, progress, key, p, i === parts.length - 1 && j === slots.length - 1);
            if (id !== null) sentHere.push(id);
          }
          ids.push(...sentHere);
          break;
        } catch (err) {
          if (!(err instanceof DeliveryError)) throw err;
          const next = file !== null && stepDownFile(progress, i, level, err);
          if (next) this.deps.logger.info({ outboxId: message.id, part: i, form: level + 1, err: err.message }, "file refused: trying it in the next form");
          if (next && err.outcome === "payload_rejected") continue;
          if (err.outcome !== "payload_rejected") throw err;
          if (file || level + 1 >= renderLevels.length) {
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

  /** The message's attachments, in order; null for one that no longer exists. */
  private async files(message: OutboxMessage): Promise<(OutboundAttachment | null)[]> {
    const source = this.deps.attachments;
    return Promise.all(message.attachments.map((id) => (source ? source.loadAttachment(message.personId, id).catch(() => null) : Promise.resolve(null))));
  }

  /**
   * One part per attachment, after the text: the file, or — when it no longer exists — a line
   * saying so (so the parts keep their positions across retries and restarts).
   */
  private fileEntry(adapter: ChannelAdapter, file: OutboundAttachment | null): { part: OutboundPart; file: OutboundAttachment | null } {
    if (file) return { part: filePart(file), file };
    return { part: adapter.render({ text: "(An attached file no longer exists, so it was not sent.)", buttons: [] }, renderLevels[0]!)[0]!, file: null };
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
    // A part went out: the give-up clock starts again at the next failure.
    progress.failingSince = null;
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

  /**
   * A failed attempt the platform may accept later: retried with backoff until
   * {@link GIVE_UP_AFTER_MS} after the first failure (the last retry falls on that deadline), then
   * given up on this channel. The first failure is noted in the person's activity.
   */
  private async failed(message: OutboxMessage, progress: DeliveryProgress, lane: ChannelName, error: string, how: { reason: string; retryAfterMs?: number }): Promise<void> {
    const { store, clock, logger, owner } = this.deps;
    const now = clock.now();
    const first = !progress.failingSince;
    const since = progress.failingSince ? new Date(progress.failingSince) : now;
    const deadline = since.getTime() + GIVE_UP_AFTER_MS;
    if (now.getTime() >= deadline) return this.giveUp(message, progress, lane, error, how.reason);
    progress.failingSince = since.toISOString();
    await this.save(message, progress);
    const retryAt = new Date(Math.min(now.getTime() + Math.max(how.retryAfterMs ?? 0, retryDelayMs(message.attempts)), deadline));
    if (first) {
      const what = await this.unsentWords(message, progress);
      await store.audit.appendAudit({
        personId: message.personId,
        kind: "outbound.delayed",
        summary: `Couldn't send you ${what} on ${channelInWords(lane)} yet (${how.reason}); trying again for up to ${minutesOf(GIVE_UP_AFTER_MS)} minutes, then in another of your chats`,
        data: { outboxId: message.id, channel: lane, error: error.slice(0, 300), reason: how.reason, giveUpAt: new Date(deadline).toISOString() },
      });
    }
    await store.outbox.markDeliveryFailed({ id: message.id, owner, error, retryAt, now });
    logger.info({ outboxId: message.id, attempt: message.attempts, retryAt, lane }, "outbound message will be retried");
  }

  /**
   * The message leaves its channel (the account there is gone or unreachable): nothing of it went
   * out yet — it is routed afresh; some did — the rest is handed to another chat.
   */
  private async offLane(message: OutboxMessage, progress: DeliveryProgress, lane: ChannelName, error: string): Promise<void> {
    const started = Object.keys(progress.sent).length > 0 || progress.uncertain.length > 0;
    if (started) return this.giveUp(message, progress, lane, error, `your account there is ${error.startsWith("no reachable") ? "no longer linked" : "blocked or gone"}`);
    const { store, clock, owner } = this.deps;
    await store.outbox.rerouteOutbound({ id: message.id, owner, progress: { ...progress, target: null, inflight: null, failingSince: null }, error, now: clock.now() });
    this.deps.logger.info({ outboxId: message.id, lane, err: error }, "outbound message taken off its channel: routed afresh");
  }

  /**
   * Gives the message up on `lane` and hands what did not arrive to another of the person's chats
   * with a plain line ("I couldn't send you the photo on Telegram — here it is."). The hand-off row
   * has a key of its own, so a restart in between sends it once.
   */
  private async giveUp(message: OutboxMessage, progress: DeliveryProgress, lane: ChannelName, error: string, reason: string): Promise<void> {
    const { store, clock, owner, logger } = this.deps;
    const unsent = unsentOf(message, progress);
    const what = await this.unsentWords(message, progress);
    const facts = await routeFacts(store, this.deps.presence, message.personId);
    const [other] = chooseLanes(null, { ...facts, reach: { mode: "last" } }, lane);
    const anything = unsent.text || unsent.attachments.length > 0;
    if (other && anything) {
      const text = handOffText(message, unsent, what, lane);
      await this.notices.queue({ personId: message.personId, channel: other, deliveryKey: `${message.deliveryKey}:handoff`, text, attachments: unsent.attachments });
    }
    const where = !anything ? "" : other ? ` and sent it ${other === "local" ? "in" : "on"} ${channelInWords(other)} instead` : "; there is no other chat to reach you on";
    await store.audit.appendAudit({
      personId: message.personId,
      kind: "outbound.given_up",
      summary: `Gave up sending you ${what} on ${channelInWords(lane)} (${reason})${where}`,
      data: { outboxId: message.id, channel: lane, error: error.slice(0, 300), reason, handedTo: other ?? null, what },
    });
    await store.outbox.saveProgress({ id: message.id, owner, progress, now: clock.now(), leaseMs: this.deps.leaseMs });
    await store.outbox.markDeliveryFailed({ id: message.id, owner, error, retryAt: null, now: clock.now() });
    logger.warn({ outboxId: message.id, lane, handedTo: other ?? null, err: error }, "outbound message given up on its channel");
  }

  /** What of the message has not arrived, in words ("the photo", "a message"). */
  private async unsentWords(message: OutboxMessage, progress: DeliveryProgress): Promise<string> {
    const files = (await this.files(message)).filter((f): f is OutboundAttachment => f !== null);
    return unsentInWords(unsentOf(message, progress), files);
  }

  /** Routes the messages meant for wherever the person is that have no channel yet. */
  private async routeWaiting(): Promise<void> {
    const { store, clock, logger, presence } = this.deps;
    const routing = { store, clock, logger, ...(presence && { presence }), queue: (m: NewOutboxMessage) => this.notices.queue(m) };
    for (const row of await store.outbox.listUnroutedOutbound(ROUTE_BATCH)) await routeRow(routing, row);
  }

  /** The person's reachable account on `lane`. */
  private async targetOn(message: OutboxMessage, lane: ChannelName): Promise<Target | null> {
    const identity = (await this.deps.store.persons.listIdentities(message.personId)).find((i) => i.channel === lane && !i.unreachable);
    return identity ? { channel: identity.channel, address: identity.address, accountId: identity.accountId } : null;
  }

  /** Whether the account a message started on is still linked to the person and reachable. */
  private async reachable(message: OutboxMessage, target: Target): Promise<boolean> {
    const identities = await this.deps.store.persons.listIdentities(message.personId);
    return identities.some((i) => i.channel === target.channel && i.accountId === target.accountId && !i.unreachable);
  }
}

type Target = ChannelTarget & { channel: ChannelName };
