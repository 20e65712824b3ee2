import { MessageFlags, type Message } from "discord.js";
import { AttachmentError, type InboundAttachment } from "../../core/channels/index.js";
import { downloadLimited } from "../shared/index.js";

/** Discord's CDN hosts, where attachment URLs point. */
const CDN_HOSTS = ["cdn.discordapp.com", "media.discordapp.net"];

/**
 * A message's files and stickers (Discord API: Message.attachments, sticker_items). A voice message
 * (flag IS_VOICE_MESSAGE) carries its audio as its one attachment. A sticker in a message has no
 * emoji, only a name, which stands in for it. `apiUrl` is DISCORD_API_URL (its host may serve
 * attachments too: a local fake or a proxy).
 */
export function attachmentsOf(message: Message, apiUrl: string | undefined): InboundAttachment[] {
  const voice = message.flags.has(MessageFlags.IsVoiceMessage);
  const files: InboundAttachment[] = [...message.attachments.values()].map((a) => {
    const mime = a.contentType?.split(";")[0]?.trim() ?? null;
    return {
      kind: voice ? "voice" : mime?.startsWith("image/") ? "image" : mime?.startsWith("audio/") ? "audio" : mime?.startsWith("video/") ? "video" : "document",
      mimeType: mime,
      size: a.size,
      fileName: a.name,
      caption: a.description ?? null,
      emoji: null,
      durationSeconds: a.duration ?? null,
      fetch: (maxBytes) => fetchAttachment(a.url, a.id, a.size, maxBytes, apiUrl),
    };
  });
  const stickers: InboundAttachment[] = [...message.stickers.values()].map((st) => ({
    kind: "sticker",
    mimeType: null,
    size: null,
    fileName: null,
    caption: null,
    emoji: st.name,
    durationSeconds: null,
    fetch: async () => {
      throw new AttachmentError("unavailable", "a sticker is taken as what it stands for, not downloaded");
    },
  }));
  return [...files, ...stickers];
}

/**
 * Downloads an attachment from its URL (Discord's CDN; the URL is signed and needs no token, so
 * none is sent), over https from the CDN hosts, or from DISCORD_API_URL's host. Throws AttachmentError.
 */
async function fetchAttachment(url: string, id: string, size: number, maxBytes: number, apiUrl: string | undefined): Promise<Buffer> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AttachmentError("unavailable", `Discord attachment ${id} has no valid URL`);
  }
  const local = apiUrl !== undefined && parsed.host === new URL(apiUrl).host;
  if (!local && !(CDN_HOSTS.includes(parsed.host) && parsed.protocol === "https:")) {
    throw new AttachmentError("unavailable", `Discord attachment ${id} is on ${parsed.host}, not Discord's CDN`);
  }
  return downloadLimited(url, { maxBytes, what: `Discord attachment ${id}`, announcedSize: size });
}
