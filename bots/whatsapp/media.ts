import { z } from "zod";
import { AttachmentError, formatBytes, type InboundAttachment } from "../../core/channels/index.js";
import type { WaMessage } from "./port.js";

/** What the channel reads of WhatsApp Web's raw message before downloading (all optional: WhatsApp changes it). */
const rawMediaSchema = z.object({
  size: z.number().int().nonnegative().optional(),
  mimetype: z.string().optional(),
  filename: z.string().optional(),
});

/** whatsapp-web.js message types that carry a file Familiar takes in, and what each is. */
const KINDS: Readonly<Record<string, InboundAttachment["kind"]>> = {
  image: "image",
  ptt: "voice",
  audio: "audio",
  video: "video",
  gif: "video",
  document: "document",
  sticker: "sticker",
};

/**
 * The attachment of a WhatsApp media message, or null for other messages (and media kinds
 * Familiar does not take in, e.g. view-once). Size, MIME type and name come from WhatsApp Web's
 * record when it has them; `fetch` refuses before downloading when the size is known to be over
 * the limit (`downloadMedia` holds the whole file in the page and in memory), and checks the
 * decoded size again after. A sticker carries no emoji in WhatsApp Web, so it stays a sticker.
 */
export function mediaAttachment(message: WaMessage): InboundAttachment | null {
  if (!message.hasMedia) return null;
  let kind = KINDS[message.type];
  if (!kind) return null;
  const raw = rawMediaSchema.safeParse(message.rawData ?? {});
  const facts = raw.success ? raw.data : {};
  const mimeType = facts.mimetype?.split(";")[0]?.trim() || null;
  if (kind === "document" && mimeType?.startsWith("image/")) kind = "image";
  const duration = Number(message.duration);
  return {
    kind,
    mimeType,
    size: facts.size ?? null,
    fileName: facts.filename ?? null,
    caption: null,
    emoji: null,
    durationSeconds: Number.isFinite(duration) && duration > 0 ? duration : null,
    fetch: async (maxBytes) => {
      const over = (size: number) => new AttachmentError("too_large", `WhatsApp media is ${formatBytes(size)}, over the ${formatBytes(maxBytes)} limit`, { size, limit: maxBytes });
      if (facts.size !== undefined && facts.size > maxBytes) throw over(facts.size);
      let media;
      try {
        media = await message.downloadMedia();
      } catch (err) {
        throw new AttachmentError("download_failed", `WhatsApp could not download the media: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (!media) throw new AttachmentError("unavailable", "WhatsApp no longer has this media (expired or deleted on the phone)");
      const bytes = Buffer.from(media.data, "base64");
      if (bytes.byteLength > maxBytes) throw over(bytes.byteLength);
      return bytes;
    },
  };
}
