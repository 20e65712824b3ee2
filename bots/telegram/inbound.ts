import type { Chat, Message, MessageEntity, PhotoSize, Update, User, UserFromGetMe } from "grammy/types";
import type { InboundAttachment, InboundEvent, InboundMessage, InboundPress } from "../../core/channels/index.js";

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
 *
 * Files: a photo (the largest size within the limit), voice note, audio, document, video, video
 * note, animation or sticker becomes an `InboundAttachment` whose `fetch` goes through `FetchFile`
 * (getFile, then the file URL under the API root); the caption is the message text.
 */

/**
 * Downloads one Telegram file by `file_id`, at most `maxBytes` (the channel implements it with
 * getFile and `<apiRoot>/file/bot<token>/<file_path>`). `announcedSize` is Telegram's `file_size`.
 */
export type FetchFile = (fileId: string, announcedSize: number | null, maxBytes: number) => Promise<Buffer>;

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

/**
 * Decides what an update means for Familiar under `policy`; `fetchFile` backs the attachments'
 * `fetch` (without it, files cannot be downloaded and `fetch` rejects). Never throws.
 */
export function decideUpdate(update: Update, policy: ChatPolicy, fetchFile?: FetchFile): UpdateDecision {
  if (update.callback_query) return decidePress(update, update.callback_query, policy);
  if (update.message) return decideMessage(update, update.message, policy, fetchFile ?? noFetch);
  return { action: "skip", reason: "update kind not handled", callbackQueryId: null };
}

const noFetch: FetchFile = async () => {
  throw new Error("telegram: no file fetcher given");
};

function decideMessage(update: Update, message: Message, policy: ChatPolicy, fetchFile: FetchFile): UpdateDecision {
  const skip = (reason: string): UpdateDecision => ({ action: "skip", reason, callbackQueryId: null });
  const from = message.from;
  if (!from || from.is_bot) return skip("not from a person");
  const attachments = attachmentsOf(message, fetchFile);
  if (message.text === undefined && attachments.length === 0) return skip("nothing Familiar reads (not text, a photo, a voice note, a file or a sticker)");
  let text = message.text ?? message.caption ?? "";
  if (message.chat.type !== "private") {
    if (!policy.groups.has(String(message.chat.id))) return skip("group not in ALLOW_GROUPS");
    const addressed = stripMentions(text, message.entities ?? message.caption_entities ?? [], policy.me);
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
    // The language of the person's Telegram app (User.language_code): a guess for their time zone.
    ...(from.language_code && { languageCode: from.language_code }),
    at: new Date(message.date * 1000),
    text,
    ...(attachments.length > 0 && { attachments }),
  };
  return { action: "sink", event, callbackQueryId: null };
}

/** The files of a message (Telegram Bot API: Message.photo, voice, audio, document, video, video_note, animation, sticker). */
function attachmentsOf(message: Message, fetchFile: FetchFile): InboundAttachment[] {
  const file = (
    kind: InboundAttachment["kind"],
    f: { file_id: string; file_size?: number },
    extra: { mimeType?: string | undefined; fileName?: string | undefined; duration?: number | undefined; emoji?: string | undefined } = {},
  ): InboundAttachment => ({
    kind,
    mimeType: extra.mimeType ?? null,
    size: f.file_size ?? null,
    fileName: extra.fileName ?? null,
    caption: null,
    emoji: extra.emoji ?? null,
    durationSeconds: extra.duration ?? null,
    fetch: (maxBytes) => fetchFile(f.file_id, f.file_size ?? null, maxBytes),
  });
  const out: InboundAttachment[] = [];
  if (message.photo?.length) out.push(photo(message.photo, fetchFile));
  if (message.voice) out.push(file("voice", message.voice, { mimeType: message.voice.mime_type ?? "audio/ogg", duration: message.voice.duration }));
  if (message.audio) {
    const a = message.audio;
    out.push(file("audio", a, { mimeType: a.mime_type, fileName: a.file_name, duration: a.duration }));
  }
  if (message.animation) {
    const a = message.animation;
    out.push(file("video", a, { mimeType: a.mime_type ?? "video/mp4", fileName: a.file_name, duration: a.duration }));
  } else if (message.document) {
    // A photo sent "as a file" is still a photo; an animation also carries its document copy (skipped above).
    const d = message.document;
    out.push(file(d.mime_type?.startsWith("image/") ? "image" : "document", d, { mimeType: d.mime_type, fileName: d.file_name }));
  }
  if (message.video) out.push(file("video", message.video, { mimeType: message.video.mime_type ?? "video/mp4", fileName: message.video.file_name, duration: message.video.duration }));
  if (message.video_note) out.push(file("video", message.video_note, { mimeType: "video/mp4", duration: message.video_note.duration }));
  if (message.sticker) {
    const st = message.sticker;
    out.push(file("sticker", st, { mimeType: st.is_animated ? "application/x-tgsticker" : st.is_video ? "video/webm" : "image/webp", emoji: st.emoji }));
  }
  return out;
}

/**
 * A photo: Telegram sends several sizes, smallest first. The largest that fits `maxBytes` is
 * downloaded (a size without `file_size` counts as fitting); if none fits, the smallest is tried so
 * the limit is reported with its real size.
 */
function photo(sizes: readonly PhotoSize[], fetchFile: FetchFile): InboundAttachment {
  const largest = sizes[sizes.length - 1]!;
  return {
    kind: "image",
    mimeType: "image/jpeg", // Telegram Bot API: photos are always JPEG
    size: largest.file_size ?? null,
    fileName: null,
    caption: null,
    emoji: null,
    durationSeconds: null,
    fetch: (maxBytes) => {
      const fitting = [...sizes].reverse().find((s) => s.file_size === undefined || s.file_size <= maxBytes) ?? sizes[0]!;
      return fetchFile(fitting.file_id, fitting.file_size ?? null, maxBytes);
    },
  };
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
