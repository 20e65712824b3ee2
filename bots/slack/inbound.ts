import { z } from "zod";
import type { InboundAttachment, InboundMessage, InboundPress } from "../../core/channels/index.js";
import { ACTION_ID_PREFIX } from "./layout.js";

/**
 * Slack payloads → Familiar's inbound events (pure functions, no I/O).
 *
 * Update ids. A message's update id is `msg:${channel}:${ts}`, not the envelope's `event_id`,
 * because Slack delivers one mention twice — as `message` and as `app_mention`, with different
 * event ids but the same channel and `ts` (field case S2) — and a retried delivery (S1,
 * `x-slack-retry-num` ≥ 1) repeats the same channel and `ts` too. Slack: a message's `ts` is
 * unique within its channel. A press's id is `press:${channel}:${message_ts}:${action_ts}`:
 * `action_ts` is minted by Slack per click, so a replayed signed request (S4) carries the same id
 * and the core's durable dedupe drops it, while a second real click gets a new id.
 *
 * Addresses. A DM's address is its channel (D…). A channel mention's address is the sender's user
 * id (U…/W…), which `send` opens as their DM: the core keeps one address per identity and sends
 * every later reply, approval card and reminder there, so an identity first seen in a channel must
 * not get the channel as its address — private answers would be posted where everyone reads them.
 */

/** The fields of a Slack `message` / `app_mention` event this adapter reads (Events API). */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  user_profile?: { display_name?: string; real_name?: string; name?: string };
  /** Files shared with the message (subtype `file_share`); read through `slackFileSchema`. */
  files?: unknown[];
}

/** The fields of a Slack file object this adapter reads (Slack API: file object). */
export const slackFileSchema = z.object({
  id: z.string(),
  name: z.string().nullish(),
  title: z.string().nullish(),
  mimetype: z.string().nullish(),
  size: z.number().int().nonnegative().nullish(),
  url_private: z.string().nullish(),
  url_private_download: z.string().nullish(),
  /** `slack_audio` for a voice clip recorded in Slack, `slack_video` for a video clip. */
  subtype: z.string().nullish(),
  /** `tombstone` (deleted), `hidden_by_limit` (free plan), … : the file cannot be had. */
  mode: z.string().nullish(),
  /** `check_file_info` or `access_denied`: the event carries no usable file. */
  file_access: z.string().nullish(),
  duration_ms: z.number().nullish(),
});
export type SlackFile = z.infer<typeof slackFileSchema>;

/** Downloads one Slack file (the channel: `url_private` with the bot token), at most `maxBytes`. */
export type FetchSlackFile = (file: SlackFile, maxBytes: number) => Promise<Buffer>;

/** Message subtypes written by a person; every other subtype (bot_message, message_changed, joins…) is ignored. */
const PERSON_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

/** Where the event came from, as the adapter decides whether to pass it on. */
export interface MessageContext {
  botUserId: string;
  /** Channel ids (C…/G…) whose mentions Familiar reads (ALLOW_GROUPS). */
  allowGroups: ReadonlySet<string>;
}

/**
 * Turns a `message` or `app_mention` event into an `InboundMessage`, or null when Familiar must not
 * see it: bots (including itself), edits/deletes/joins, group chats not in ALLOW_GROUPS, and group
 * messages that do not mention the bot. DMs (`channel_type: "im"`) always pass. The mention is
 * stripped from the text; Slack's `&amp;`/`&lt;`/`&gt;` escapes and link markup are undone. A
 * mention's `address` is the sender's user id (their DM), never the channel (see Addresses above).
 */
export function toInboundMessage(event: SlackMessageEvent, ctx: MessageContext, now: Date, fetchFile?: FetchSlackFile): InboundMessage | null {
  if (event.bot_id || !PERSON_SUBTYPES.has(event.subtype)) return null;
  const { channel, user, ts } = event;
  if (!channel || !user || !ts || user === ctx.botUserId) return null;
  const raw = event.text ?? "";
  const mention = new RegExp(`<@${escapeRegExp(ctx.botUserId)}(\\|[^>]*)?>`, "g");
  const isDm = event.channel_type === "im" || (event.type === "message" && channel.startsWith("D"));
  if (!isDm) {
    if (!ctx.allowGroups.has(channel)) return null;
    if (event.type !== "app_mention" && !raw.includes(`<@${ctx.botUserId}`)) return null;
  }
  const text = fromSlackText(raw.replace(mention, " ")).replace(/[ \t]+/g, " ").trim();
  const attachments = attachmentsOf(event.files ?? [], fetchFile);
  if (!text && attachments.length === 0) return null;
  const profile = event.user_profile;
  const displayName = profile?.display_name || profile?.real_name || profile?.name || undefined;
  return {
    kind: "message",
    channel: "slack",
    updateId: `msg:${channel}:${ts}`,
    accountId: user,
    address: isDm ? channel : user,
    ...(isDm ? {} : { groupId: channel }),
    ...(displayName ? { displayName } : {}),
    at: tsToDate(ts) ?? now,
    text,
    ...(attachments.length > 0 && { attachments }),
  };
}

/**
 * Slack files → attachments: `slack_audio` clips are voice notes; otherwise by MIME type (image,
 * audio, video, else document). The title is a caption only when the sender gave one (Slack sets it
 * to the file name otherwise). Files Slack will not serve (deleted, over the plan's limit, access
 * to be checked) still appear, so the person hears that they could not be had.
 */
function attachmentsOf(files: readonly unknown[], fetchFile: FetchSlackFile | undefined): InboundAttachment[] {
  const out: InboundAttachment[] = [];
  for (const raw of files) {
    const parsed = slackFileSchema.safeParse(raw);
    if (!parsed.success) continue;
    const file = parsed.data;
    const mime = file.mimetype ?? null;
    const kind: InboundAttachment["kind"] =
      file.subtype === "slack_audio" ? "voice" : mime?.startsWith("image/") ? "image" : mime?.startsWith("audio/") ? "audio" : mime?.startsWith("video/") ? "video" : "document";
    const title = file.title?.trim();
    out.push({
      kind,
      mimeType: mime,
      size: file.size ?? null,
      fileName: file.name ?? null,
      caption: title && title !== file.name ? title : null,
      emoji: null,
      durationSeconds: file.duration_ms != null ? file.duration_ms / 1000 : null,
      fetch: async (maxBytes) => {
        if (!fetchFile) throw new Error("slack: no file fetcher given");
        return fetchFile(file, maxBytes);
      },
    });
  }
  return out;
}

/** The fields of a `block_actions` interaction payload this adapter reads (Slack interactivity). */
export interface SlackBlockActionsBody {
  type: string;
  user?: { id?: string; name?: string; username?: string };
  channel?: { id?: string };
  container?: { message_ts?: string; channel_id?: string };
  message?: { ts?: string };
  actions?: { action_id?: string; value?: string; action_ts?: string; type?: string }[];
}

/**
 * Turns a `block_actions` payload for one of our buttons into an `InboundPress`, or null for anything
 * else (other apps' elements, payloads without a channel or user).
 */
export function toInboundPress(body: SlackBlockActionsBody, now: Date): InboundPress | null {
  const action = body.actions?.[0];
  if (!action?.action_id?.startsWith(ACTION_ID_PREFIX) || !action.value || !action.action_ts) return null;
  const channel = body.channel?.id ?? body.container?.channel_id;
  const messageTs = body.container?.message_ts ?? body.message?.ts ?? null;
  const user = body.user?.id;
  if (!channel || !user) return null;
  const displayName = body.user?.name || body.user?.username || undefined;
  return {
    kind: "press",
    channel: "slack",
    updateId: `press:${channel}:${messageTs ?? "-"}:${action.action_ts}`,
    accountId: user,
    address: channel,
    // A press in a channel (C…/G…) rather than a DM (D…) comes from a group.
    ...(channel.startsWith("D") ? {} : { groupId: channel }),
    ...(displayName ? { displayName } : {}),
    at: tsToDate(action.action_ts) ?? now,
    buttonId: action.value,
    messageRef: messageTs,
  };
}

/** Slack text → what the person typed: links to their URL or label, escapes undone. */
export function fromSlackText(text: string): string {
  return text
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, "$2 ($1)")
    .replace(/<((?:https?|mailto):[^|>]+)>/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** Slack `ts` ("1700000000.000100", seconds) → Date. */
function tsToDate(ts: string): Date | null {
  const seconds = Number(ts);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(Math.round(seconds * 1000)) : null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
