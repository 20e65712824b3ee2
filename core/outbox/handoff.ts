import { channelInWords, isPhoto, type DeliveryError, type OutboundAttachment } from "../channels/index.js";
import type { ArtifactId } from "../ids.js";
import type { ChannelName } from "../channels/records.js";
import type { DeliveryProgress, OutboxMessage } from "./records.js";

/**
 * How long a message may keep failing on one channel before it is given up there and handed to
 * another of the person's chats, ms: 10 minutes from its first failed attempt (retries with backoff
 * 2 s, 4 s, … meanwhile; the last retry falls on the deadline).
 */
export const GIVE_UP_AFTER_MS = 10 * 60_000;

/** What of a message did not reach the person: its text (all or some parts) and the attachments not sent. */
export interface Unsent {
  text: boolean;
  attachments: ArtifactId[];
}

/** True when the part at `index` (or one of its re-rendered pieces) went out or may have. */
function partOut(progress: DeliveryProgress, index: number): boolean {
  const key = String(index);
  const out = (k: string): boolean => k === key || k.startsWith(`${key}-`);
  return Object.keys(progress.sent).some(out) || progress.uncertain.some(out);
}

/**
 * What of `message` has not gone out, by its saved progress: the text counts as unsent when any of
 * its parts is missing (the whole text is repeated elsewhere then), an attachment when its part is.
 */
export function unsentOf(message: Pick<OutboxMessage, "text" | "attachments">, progress: DeliveryProgress): Unsent {
  const textParts = progress.textParts;
  if (textParts === undefined) return { text: message.text.trim().length > 0, attachments: [...message.attachments] };
  let text = false;
  for (let i = 0; i < textParts; i++) if (!partOut(progress, i)) text = true;
  const attachments = message.attachments.filter((_, j) => !partOut(progress, textParts + j));
  return { text, attachments };
}

/** The unsent part in words: "the photo", "the file report.pdf", "a message and 2 files", … */
export function unsentInWords(unsent: Unsent, files: readonly Pick<OutboundAttachment, "id" | "name" | "mimeType">[]): string {
  const known = unsent.attachments.map((id) => files.find((f) => f.id === id));
  const one = known.length === 1 ? known[0] : undefined;
  const fileWords =
    known.length === 0 ? "" : one ? (isPhoto(one) ? "the photo" : `the file ${one.name}`) : known.length === 1 ? "a file" : `${known.length} files`;
  if (!unsent.text) return fileWords || "a message";
  if (!fileWords) return "a message";
  return `a message and ${fileWords.replace(/^the /, "its ")}`;
}

/**
 * The plain message that takes over on another channel: "I couldn't send you the photo on
 * Telegram — here it is." followed by the text that did not arrive (the files travel as attachments).
 */
export function handOffText(message: Pick<OutboxMessage, "text">, unsent: Unsent, what: string, from: ChannelName): string {
  const many = unsent.attachments.length > 1 && !unsent.text;
  const head = `I couldn't send you ${what} on ${channelInWords(from)} — here ${many ? "they are" : "it is"}.`;
  return unsent.text ? `${head}\n\n${message.text}` : head;
}

/** Whole minutes of `ms`. */
export function minutesOf(ms: number): number {
  return Math.round(ms / 60_000);
}

/** Why a send failed, as a person reads it ("Telegram answered with an error"). */
export function reasonInWords(lane: ChannelName, err: DeliveryError): string {
  const name = channelInWords(lane);
  if (err.outcome === "rate_limited") return `${name} asked Familiar to slow down`;
  if (err.outcome === "payload_rejected") return `${name} refused it`;
  return lane === "local" ? "the web chat could not take it" : `${name} answered with an error or could not be reached`;
}
