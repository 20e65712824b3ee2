import { formatBytes } from "../channels/index.js";
import type { PersonId } from "../ids.js";
import type { ChatMessage } from "../model/index.js";
import type { ConversationMessage, MessageAttachment } from "../conversation/records.js";

/** Most images shown to the model in one request (the newest ones). */
export const MAX_IMAGES_PER_REQUEST = 4;
/** What one image costs in the prompt budget, tokens (OpenAI: 85 + 170 per 512-px tile; ~765 for 1024×1024). */
export const IMAGE_TOKENS = 800;

/**
 * How the context shows photos to a model that can see them. `canShowImages` is false once the model
 * is known not to take images (then photos stay words only); `imageUrl` reads a saved photo back as a
 * `data:` URL, or null when it cannot (gone, too large).
 */
export interface ContextMedia {
  canShowImages(): boolean;
  imageUrl(personId: PersonId, attachment: MessageAttachment): Promise<string | null>;
}

/** How an attachment kind is called in words. */
export const attachmentNoun: Record<MessageAttachment["kind"], string> = {
  image: "photo",
  voice: "voice note",
  audio: "audio file",
  video: "video",
  document: "file",
  sticker: "sticker",
};

/** "0:07", "12:30" for a duration in seconds. */
function clock(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * One attachment as the model reads it, in one bracketed line: what it is, its name, type and size,
 * where it was saved in the person's workspace, a voice note's transcript, a sticker's emoji, and
 * what could not be done. Example: `[voice note 0:07, saved as inbox/2026-11-30/voice.ogg;
 * transcript: "call mum at six"]`.
 */
export function describeAttachment(a: MessageAttachment): string {
  if (a.kind === "sticker") return `[sticker${a.emoji ? `: ${a.emoji}` : " (no emoji given)"}]`;
  const facts = [a.fileName ? `"${a.fileName}"` : null, a.mimeType, a.size !== null ? formatBytes(a.size) : null, a.durationSeconds !== null ? clock(a.durationSeconds) : null].filter(
    (x): x is string => x !== null,
  );
  const parts = [`${attachmentNoun[a.kind]}${facts.length ? ` (${facts.join(", ")})` : ""}`];
  if (a.caption) parts.push(`described as "${a.caption}"`);
  if (a.path) parts.push(`saved in the person's workspace as ${a.path}`);
  if (a.transcript !== null) parts.push(`transcript: "${a.transcript}"`);
  if (a.note) parts.push(a.note);
  return `[${parts.join("; ")}]`;
}

/**
 * A conversation message as text for the model and the rolling summary: its attachments, one line
 * each, then what the person wrote. A message without attachments is its text unchanged.
 */
export function messageText(m: Pick<ConversationMessage, "text" | "attachments">): string {
  if (m.attachments.length === 0) return m.text;
  return [...m.attachments.map(describeAttachment), m.text].filter((x) => x.length > 0).join("\n");
}

/** An image the model may be shown: saved, not marked as unseeable, in a format vision models take. */
function showable(a: MessageAttachment): boolean {
  return a.kind === "image" && a.path !== null && a.note === null;
}

/**
 * Adds image content parts to the user messages of `window` (aligned with `sources`), newest first:
 * at most {@link MAX_IMAGES_PER_REQUEST} images and as many as {@link IMAGE_TOKENS} each fit in
 * `tokensLeft`. Older photos stay described in words. Returns the tokens added.
 */
export async function shownImages(window: ChatMessage[], sources: readonly ConversationMessage[], personId: PersonId, media: ContextMedia, tokensLeft: number): Promise<number> {
  if (!media.canShowImages()) return 0;
  let shown = 0;
  for (let i = sources.length - 1; i >= 0 && shown < MAX_IMAGES_PER_REQUEST; i--) {
    const source = sources[i]!;
    const message = window[i]!;
    if (source.role !== "user" || message.role !== "user" || typeof message.content !== "string") continue;
    const urls: string[] = [];
    for (const a of source.attachments.filter(showable).reverse()) {
      if (shown + urls.length >= MAX_IMAGES_PER_REQUEST || (shown + urls.length + 1) * IMAGE_TOKENS > tokensLeft) break;
      const url = await media.imageUrl(personId, a);
      if (url) urls.unshift(url);
    }
    if (urls.length === 0) continue;
    window[i] = { role: "user", content: [{ type: "text", text: message.content }, ...urls.map((url) => ({ type: "image_url" as const, image_url: { url } }))] };
    shown += urls.length;
  }
  return shown * IMAGE_TOKENS;
}
