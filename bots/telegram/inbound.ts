import type { Chat, Message, MessageEntity, Update, User, UserFromGetMe } from "grammy/types";
import type { InboundEvent, InboundMessage, InboundPress } from "../../core/channels/port.js";

/**
 * Telegram updates → Familiar's inbound events. Pure functions: no I/O, so the rules (which chats
 * are read, what counts as a mention, which ids are used) are in one place.
 *
 * Ids, used the same way for messages and presses:
 * - `updateId`: the update's `update_id` as a decimal string. Telegram redelivers the very same
 *   update (same `update_id`) after a failed webhook answer or an unconfirmed `getUpdates` offset,
 *   so it is what the core dedupes on. (A press's `callback_query.id` would be stable too, but one id
 *   kind for every update keeps the dedupe table uniform.)
 * - `accountId`: the sender's Telegram user id; `address`: the chat id (a private chat's id equals
 *   the user's id; a group's is negative).
 * - `messageRef` of a press: the `message_id` of the message carrying the inline keyboard.
 */

/** The update kinds Familiar asks Telegram for (`allowed_updates` of getUpdates / setWebhook). */
export const ALLOWED_UPDATES = ["message", "callback_query"] as const;

/** Which chats are read: private chats always; groups only when listed, and only when the bot is mentioned. */
export interface ChatPolicy {
  /** The bot's own account (from getMe): its id and username identify mentions. */
  me: UserFromGetMe;
  /** Group and supergroup chat ids (as decimal strings, e.g. "-1001234567890") Familiar reads. */
  groups: ReadonlySet<string>;
}

/** What to do with an update: hand an event to the sink, or skip it (with the reason, for debug logs). */
export type UpdateDecision =
  | { action: "sink"; event: InboundEvent; callbackQueryId: string | null }
  | { action: "skip"; reason: string; callbackQueryId: string | null };

/** Decides what an update means for Familiar under `policy`. Never throws. */
export function decideUpdate(update: Update, policy: ChatPolicy): UpdateDecision {
  if (update.callback_query) return decidePress(update, update.callback_query, policy);
  if (update.message) return decideMessage(update, update.message, policy);
  return { action: "skip", reason: "update kind not handled", callbackQueryId: null };
}

function decideMessage(update: Update, message: Message, policy: ChatPolicy): UpdateDecision {
  const skip = (reason: string): UpdateDecision => ({ action: "skip", reason, callbackQueryId: null });
  const from = message.from;
  if (!from || from.is_bot) return skip("not from a person");
  if (message.text === undefined) return skip("not a text message");
  let text = message.text;
  if (message.chat.type !== "private") {
    if (!policy.groups.has(String(message.chat.id))) return skip("group not in ALLOW_GROUPS");
    const addressed = stripMentions(text, message.entities ?? [], policy.me);
    if (addressed === null) return skip("bot not mentioned");
    text = addressed;
  }
  const event: InboundMessage = {
    kind: "message",
    channel: "telegram",
    updateId: String(update.update_id),
    accountId: String(from.id),
    // Answers go to the person's private chat, never to the group: the core keeps one address per
    // account and sends later replies, cards and reminders there (a private chat's id is the user id).
    address: String(message.chat.type === "private" ? message.chat.id : from.id),
    ...(message.chat.type === "private" ? {} : { groupId: String(message.chat.id) }),
    displayName: displayName(from),
    at: new Date(message.date * 1000),
    text,
  };
  return { action: "sink", event, callbackQueryId: null };
}

function decidePress(update: Update, query: NonNullable<Update["callback_query"]>, policy: ChatPolicy): UpdateDecision {
  const skip = (reason: string): UpdateDecision => ({ action: "skip", reason, callbackQueryId: query.id });
  if (query.data === undefined) return skip("press without callback_data (game button)");
  const chat: Pick<Chat, "id" | "type"> | undefined = query.message?.chat;
  if (chat && chat.type !== "private" && !policy.groups.has(String(chat.id))) return skip("press in a group not in ALLOW_GROUPS");
  const event: InboundPress = {
    kind: "press",
    channel: "telegram",
    updateId: String(update.update_id),
    accountId: String(query.from.id),
    address: String(chat && chat.type === "private" ? chat.id : query.from.id),
    ...(chat && chat.type !== "private" ? { groupId: String(chat.id) } : {}),
    displayName: displayName(query.from),
    // A callback query carries no time of its own; the press happened just now.
    at: new Date(),
    buttonId: query.data,
    messageRef: query.message ? String(query.message.message_id) : null,
  };
  return { action: "sink", event, callbackQueryId: query.id };
}

/** "First Last", else the username, as Telegram shows the person. */
function displayName(user: User): string | undefined {
  const name = [user.first_name, user.last_name].filter(Boolean).join(" ").trim();
  return name || user.username || undefined;
}

/**
 * Removes the mentions of the bot from a group message and returns the rest (trimmed), or null when
 * the bot is not mentioned. Mentions are Telegram's `mention` entities equal to `@username`
 * (case-insensitive), `text_mention` entities of the bot's user id, and a command addressed to the
 * bot (`/status@username`, which becomes `/status`). Entity offsets are UTF-16 code units, as JS
 * strings index them (Telegram Bot API: MessageEntity).
 */
export function stripMentions(text: string, entities: readonly MessageEntity[], me: UserFromGetMe): string | null {
  const handle = `@${me.username}`.toLowerCase();
  const cuts: { from: number; to: number }[] = [];
  for (const entity of entities) {
    const slice = text.slice(entity.offset, entity.offset + entity.length);
    if (entity.type === "mention" && slice.toLowerCase() === handle) {
      cuts.push({ from: entity.offset, to: entity.offset + entity.length });
    } else if (entity.type === "text_mention" && entity.user.id === me.id) {
      cuts.push({ from: entity.offset, to: entity.offset + entity.length });
    } else if (entity.type === "bot_command" && slice.toLowerCase().endsWith(handle)) {
      const end = entity.offset + entity.length;
      cuts.push({ from: end - handle.length, to: end });
    }
  }
  if (cuts.length === 0) return null;
  let out = text;
  for (const cut of cuts.sort((a, b) => b.from - a.from)) out = out.slice(0, cut.from) + out.slice(cut.to);
  return out.replace(/[ \t]{2,}/g, " ").trim();
}
