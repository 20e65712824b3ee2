import { z } from "zod";
import { attachmentKinds, type MessageAttachment } from "../conversation/records.js";

/** One `MessageAttachment` as both adapters store it (JSON in SQLite, a sub-document in MongoDB). */
export const messageAttachmentSchema = z.object({
  kind: z.enum(attachmentKinds),
  mimeType: z.string().nullable(),
  size: z.number().int().nonnegative().nullable(),
  fileName: z.string().nullable(),
  caption: z.string().nullable(),
  path: z.string().nullable(),
  transcript: z.string().nullable(),
  emoji: z.string().nullable(),
  durationSeconds: z.number().nonnegative().nullable(),
  note: z.string().nullable(),
});

/**
 * Reads stored attachments: a missing value is no attachments; an entry that does not match the
 * schema (written by hand, or by a future version) is left out rather than breaking the whole
 * conversation.
 */
export function readAttachments(raw: unknown): MessageAttachment[] {
  if (!Array.isArray(raw)) return [];
  const out: MessageAttachment[] = [];
  for (const entry of raw) {
    const parsed = messageAttachmentSchema.safeParse(entry);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}
