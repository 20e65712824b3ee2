import { withholdSecretText } from "../../core/secrets/index.js";
import {
  chatLogId,
  type ChannelAdapter,
  type ChannelTarget,
  type InboundEvent,
  type InboundMessage,
  type InboundOutcome,
  type InboundSink,
  type OutboundAttachment,
  type OutboundContent,
  type OutboundPart,
  fileOfPart,
  type RenderOptions,
} from "../../core/channels/index.js";
import { KeyedWaiters, type ActivityWait } from "../../bots/shared/index.js";
import { attachmentNoun } from "../../core/context/index.js";
import type { Clock } from "../../core/clock.js";
import { DuplicateKeyError } from "../../core/errors.js";
import type { PersonId } from "../../core/ids.js";
import type { Logger } from "../../core/log/index.js";
import type { Store } from "../../core/storage/index.js";
import type { Button, ChannelName, LocalAttachment, LocalMessage } from "../../core/channels/index.js";
import type { Json } from "../../core/json.js";

/** The mailbox key of a person's chat log; `:` keeps it apart from every local user name. */
export function chatLogKey(personId: PersonId): string {
  return `log:${personId}`;
}

/** One pending long-poll on a person's log. */
export type LogWait = ActivityWait;

/**
 * Each person's whole conversation as the web chat shows it: both sides, from every channel, kept on
 * the server (in the local mailbox under {@link chatLogKey}). It is written by {@link recordingAdapter}
 * around every channel adapter — inbound messages after the core accepted them, outbound messages and
 * card edits after the platform took them — so it shows exactly what was said where, including
 * approval cards and command answers that never enter the model's conversation.
 *
 * Ids are derived from what was said (channel + update id, channel + platform id), so recording the
 * same thing twice (a redelivered update, a re-sent message) stores it once.
 */
export class ChatLog {
  private readonly waiters = new KeyedWaiters();

  constructor(
    private readonly store: Pick<Store, "localMailbox" | "persons">,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Records something the person said on `channel` (update id `updateId`). Never throws: the log is a view. */
  async recordInbound(personId: PersonId, channel: ChannelName, updateId: string, text: string, at: Date): Promise<void> {
    await this.put(personId, { id: logId("in", channel, updateId), role: "user", channel, text, buttons: [], at });
  }

  /** Records what Familiar sent on `channel` (its first platform id identifies it for later edits). */
  async recordOutbound(personId: PersonId, channel: ChannelName, platformId: string, content: OutboundContent): Promise<void> {
    await this.put(personId, { id: logId("out", channel, platformId), role: "assistant", channel, text: content.text, buttons: content.buttons, card: content.card ?? null, at: this.clock.now() });
  }

  /** Records a file Familiar sent on `channel` (its part's platform id), shown in the web chat with a link to it. */
  async recordOutboundFile(personId: PersonId, channel: ChannelName, platformId: string, file: OutboundAttachment): Promise<void> {
    await this.put(personId, { id: logId("out", channel, platformId), role: "assistant", channel, text: "", buttons: [], attachments: [{ id: file.id, name: file.name, mimeType: file.mimeType, size: file.bytes.length }], at: this.clock.now() });
  }

  /** Records an edit of an earlier message (a decided approval card); unknown messages are ignored. */
  async recordEdit(personId: PersonId, channel: ChannelName, platformId: string, content: OutboundContent): Promise<void> {
    try {
      const edited = await this.store.localMailbox.editLocalMessage(logId("out", channel, platformId), { text: content.text, buttons: content.buttons, card: content.card ?? null }, this.clock.now());
      if (edited) this.notify(personId);
    } catch (err) {
      this.logger.warn({ err, channel }, "chat log: could not record an edit");
    }
  }

  /** A page of the log, oldest first: the newest `limit` messages before `beforeSeq` (default: the end). */
  page(personId: PersonId, beforeSeq: number | undefined, limit: number): Promise<LocalMessage[]> {
    return this.store.localMailbox.listLocalMessagesBefore(chatLogKey(personId), beforeSeq ?? Number.MAX_SAFE_INTEGER, limit);
  }

  /** Messages (and edited messages, again with a new seq) after `afterSeq`, oldest first. */
  after(personId: PersonId, afterSeq: number, limit: number): Promise<LocalMessage[]> {
    return this.store.localMailbox.listLocalMessages(chatLogKey(personId), afterSeq, limit);
  }

  /** One logged message of the person, or null (also when it belongs to someone else). */
  async get(personId: PersonId, id: string): Promise<LocalMessage | null> {
    const message = await this.store.localMailbox.getLocalMessage(id);
    return message && message.user === chatLogKey(personId) ? message : null;
  }

  /** Subscribes to the next change of the person's log; subscribe before reading, always cancel. */
  waitForActivity(personId: PersonId): LogWait {
    return this.waiters.wait(chatLogKey(personId));
  }

  /** Wakes every long-poll (on shutdown). */
  releaseAll(): void {
    this.waiters.notifyAll();
  }

  /** The person an account on a channel belongs to, or null. */
  async personOf(channel: ChannelName, accountId: string): Promise<PersonId | null> {
    return (await this.store.persons.findIdentity(channel, accountId))?.personId ?? null;
  }

  private async put(personId: PersonId, message: { id: string; role: "user" | "assistant"; channel: ChannelName; text: string; buttons: Button[]; card?: Json | null; attachments?: LocalAttachment[]; at: Date }): Promise<void> {
    try {
      await this.store.localMailbox.putLocalMessage({ ...message, user: chatLogKey(personId) });
    } catch (err) {
      if (err instanceof DuplicateKeyError) return;
      this.logger.warn({ err, channel: message.channel }, "chat log: could not record a message");
      return;
    }
    this.notify(personId);
  }

  private notify(personId: PersonId): void {
    this.waiters.notify(chatLogKey(personId));
  }

}

/** Messages rendered but not yet logged, per adapter; bounded so undeliverable ones cannot pile up. */
const PENDING_LIMIT = 500;

/** What the chat log shows of an inbound message: a line per file (`[photo]`, `[file: q3.pdf]`, a sticker's emoji), then the text. */
function loggedText(event: InboundMessage): string {
  const files = (event.attachments ?? []).map((a) => (a.kind === "sticker" ? (a.emoji ?? "[sticker]") : `[${attachmentNoun[a.kind]}${a.fileName ? `: ${a.fileName}` : ""}]`));
  // Secret-looking text is withheld here too (the log is written before the core sees the message).
  return [...files, withholdSecretText(event.text).text].filter((line) => line.length > 0).join("\n");
}

/**
 * Wraps a channel adapter so everything said through it lands in the person's {@link ChatLog}:
 * inbound messages the core accepted or handled (commands too), outbound messages once the platform
 * took their first part (logged whole, as markdown with buttons, under that part's platform id), and
 * edits. Presses are not logged (the card's edit shows the outcome). The wrapper keeps the adapter's
 * optional capabilities (`findSent`, `edit`, `typing`, `account`) exactly as they are.
 *
 * The outbox renders a message once and sends its parts with keys `<deliveryKey>#<slot>`; the
 * content is remembered at render time by delivery key and logged at the first part that goes out.
 */
export function recordingAdapter(adapter: ChannelAdapter, log: ChatLog): ChannelAdapter {
  const channel = adapter.channel;
  const rendered = new Map<string, OutboundContent>();
  const wrapped: ChannelAdapter = {
    channel,
    resend: adapter.resend,
    start: (sink: InboundSink) =>
      adapter.start(async (event: InboundEvent): Promise<InboundOutcome> => {
        // A known person's message is logged before the core runs it, so a command's answer follows it.
        const before = event.kind === "message" ? await log.personOf(channel, event.accountId) : null;
        if (before && event.kind === "message") await log.recordInbound(before, channel, event.updateId, loggedText(event), event.at);
        const outcome = await sink(event);
        if (!before && event.kind === "message" && (outcome.status === "accepted" || outcome.status === "handled")) {
          const after = await log.personOf(channel, event.accountId);
          if (after) await log.recordInbound(after, channel, event.updateId, loggedText(event), event.at);
        }
        return outcome;
      }),
    stop: () => adapter.stop(),
    render: (content: OutboundContent, options: RenderOptions): OutboundPart[] => {
      const parts = adapter.render(content, options);
      if (content.deliveryKey && parts.length > 0) {
        rendered.set(content.deliveryKey, content);
        if (rendered.size > PENDING_LIMIT) rendered.delete(rendered.keys().next().value ?? "");
      }
      return parts;
    },
    sendPart: async (target: ChannelTarget, part: OutboundPart, key: string): Promise<string> => {
      const id = await adapter.sendPart(target, part, key);
      const hash = key.lastIndexOf("#");
      const deliveryKey = hash > 0 ? key.slice(0, hash) : key;
      const content = rendered.get(deliveryKey);
      const file = fileOfPart(part);
      if (file) {
        // A file part (sent after the text): its own entry, so the web chat shows the image or a link.
        const personId = await log.personOf(channel, target.accountId);
        if (personId) await log.recordOutboundFile(personId, channel, id, file);
      } else if (content) {
        rendered.delete(deliveryKey);
        const personId = await log.personOf(channel, target.accountId);
        if (personId) await log.recordOutbound(personId, channel, id, content);
      }
      return id;
    },
  };
  const findSent = adapter.findSent?.bind(adapter);
  if (findSent) wrapped.findSent = findSent;
  const edit = adapter.edit?.bind(adapter);
  if (edit) {
    wrapped.edit = async (target, platformIds, content) => {
      await edit(target, platformIds, content);
      const first = platformIds[0];
      const personId = first === undefined ? null : await log.personOf(channel, target.accountId);
      if (personId && first !== undefined) await log.recordEdit(personId, channel, first, content);
    };
  }
  const typing = adapter.typing?.bind(adapter);
  if (typing) wrapped.typing = typing;
  const account = adapter.account?.bind(adapter);
  if (account) wrapped.account = account;
  return wrapped;
}

/** Stable, bounded ids for log entries (platform ids and update ids can be long); see core's `chatLogId`. */
const logId = chatLogId;

/**
 * Messages (given in `seq` order) in the order they were first shown. An edited message (a decided
 * approval card — the only kind the log edits, see {@link ChatLog.recordEdit}) gets a new `seq` so
 * live polling sees the edit, but keeps its `at`: it goes back before the first message that was
 * not edited and came after it. Everything else keeps its `seq` order (platform timestamps, e.g.
 * Telegram's whole seconds, are not precise enough to reorder ordinary messages by).
 */
export function inFirstShownOrder(items: readonly LocalMessage[]): LocalMessage[] {
  const fixed = items.filter((m) => m.card === null);
  const cards = items.filter((m) => m.card !== null);
  const out = [...fixed];
  for (const card of cards) {
    // Where its seq puts it, or — when it was edited after later messages — where its time puts it.
    const bySeq = out.findIndex((m) => m.seq > card.seq);
    const byTime = out.findIndex((m) => m.card === null && m.at.getTime() > card.at.getTime());
    out.splice(Math.min(bySeq === -1 ? out.length : bySeq, byTime === -1 ? out.length : byTime), 0, card);
  }
  return out;
}
