/**
 * WhatsApp inbound: a message or a poll vote becomes an `InboundEvent`. `accountId` is the phone
 * number in E.164 (`+15550001`), mapped from `…@lid` senders through `getContactLidAndPhone` where
 * WhatsApp knows it (else the raw id); a numbered reply to the chat's latest open card, or a newly
 * selected poll option, becomes an `InboundPress`.
 */
import type { InboundEvent } from "../../core/channels/index.js";
import type { Logger } from "../../core/log/index.js";
import type { CardBook } from "./cards.js";
import { mediaAttachment } from "./media.js";
import type { WaMessage, WaPollVote, WhatsAppClientPort } from "./port.js";

/** What the mapping reads from the channel. */
export interface InboundContext {
  client: WhatsAppClientPort | null;
  /** ALLOW_GROUPS group ids (`…@g.us`) Familiar reads mentions in. */
  groups: ReadonlySet<string>;
  cards: CardBook;
  logger: Logger;
}

/** `+<digits>` for a phone-based id; `…@lid` ids are mapped through WhatsApp's contact look-up. */
async function phoneOf(id: string, ctx: InboundContext): Promise<string> {
  let phoneId = id;
  if (id.endsWith("@lid") && ctx.client) {
    try {
      const [pair] = await ctx.client.getContactLidAndPhone([id]);
      if (pair?.pn) phoneId = pair.pn;
    } catch (err) {
      ctx.logger.warn({ err, id }, "whatsapp: could not map a @lid sender to a phone number");
    }
  }
  const user = /^(\d+)@(c\.us|s\.whatsapp\.net)$/.exec(phoneId)?.[1];
  return user ? `+${user}` : phoneId;
}

/** The event a WhatsApp message becomes, or null when Familiar does not read it (its own, a status, an empty one, a group message that does not mention it). */
export async function messageEvent(message: WaMessage, ctx: InboundContext): Promise<InboundEvent | null> {
  const attachment = mediaAttachment(message);
  if (message.fromMe || message.from === "status@broadcast" || (!message.body?.trim() && !attachment)) return null;
  let text = message.body ?? "";
  const group = message.from.endsWith("@g.us");
  if (group) {
    const me = ctx.client?.info?.wid._serialized;
    if (!ctx.groups.has(message.from) || !me || !message.mentionedIds.includes(me)) return null;
    text = text.replace(new RegExp(`@${me.split("@")[0]}\\b`, "g"), "").replace(/\s{2,}/g, " ").trim();
  }
  const contact = await message.getContact().catch(() => null);
  const base = {
    channel: "whatsapp" as const,
    updateId: message.id._serialized,
    accountId: await phoneOf(group ? (message.author ?? message.from) : message.from, ctx),
    // A group mention is answered in the person's own chat: the core keeps one address per account.
    address: group ? (message.author ?? message.from) : message.from,
    ...(group ? { groupId: message.from } : {}),
    at: new Date(message.timestamp * 1000),
    ...(contact?.pushname || contact?.name ? { displayName: contact.pushname || contact.name } : {}),
  };
  const picked = attachment ? null : ctx.cards.numbered(message.from, text);
  return picked
    ? { ...base, kind: "press", buttonId: picked.button.id, messageRef: picked.card.ref }
    : { ...base, kind: "message", text, ...(attachment && { attachments: [attachment] }) };
}

/** The presses a poll vote becomes: one per newly selected option of a card this process sent. */
export async function voteEvents(vote: WaPollVote, ctx: InboundContext): Promise<InboundEvent[]> {
  const pollId = vote.parentMessage.id._serialized;
  const card = ctx.cards.get(pollId);
  if (!card || vote.voter === ctx.client?.info?.wid._serialized) {
    if (!card) ctx.logger.info({ pollId }, "whatsapp: vote on a poll this process does not know (sent before a restart?)");
    return [];
  }
  const events: InboundEvent[] = [];
  const added = ctx.cards.newlySelected(pollId, vote.voter, vote.selectedOptions.map((o) => o.id));
  for (const optionId of added) {
    const button = card.buttons[optionId];
    if (!button) continue;
    events.push({
      channel: "whatsapp",
      kind: "press",
      updateId: `vote:${pollId}:${vote.voter}:${optionId}:${vote.interractedAtTs}`,
      accountId: await phoneOf(vote.voter, ctx),
      address: card.address,
      at: new Date(vote.interractedAtTs),
      buttonId: button.id,
      messageRef: pollId,
    });
  }
  return events;
}
