/**
 * What the connector knows about one message after parsing in the mail worker. The body comes only
 * filtered (`filtered`: one-time codes, passwords and access links replaced by markers); the raw
 * subject and header lines are kept for the loop and sender rules and must never be shown: what the
 * model, the store or a log sees of a mail is made from `filtered` and the addresses.
 */
import type { FilteredMail } from "./safety.js";

/** A mailbox address; `address` is lower-cased. */
export interface MailAddress {
  name: string;
  address: string;
}

/** An attachment as listed (its content stays on the server until saved). */
export interface AttachmentFacts {
  /** IMAP body part number (`"2"`, `"1.3"`), used to download it; null for a single-part message. */
  partId: string | null;
  filename: string | null;
  contentType: string;
  /** Decoded size, bytes. */
  size: number;
  disposition: string | null;
  cid: string | null;
  /** An image embedded in the HTML (multipart/related). */
  related: boolean;
}

/** A parsed message (or only its header section, `headersOnly`). */
export interface ParsedMessage {
  /** Raw header lines in order: lower-case `key`, unparsed `line` (folding kept). Never shown. */
  headerLines: { key: string; line: string }[];
  /** The raw decoded subject, for the rules only (out-of-office); never shown: use `filtered.subject`. */
  subject: string;
  from: MailAddress[];
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  replyTo: MailAddress[];
  sender: MailAddress[];
  /** ISO 8601 of the Date header, null when missing or unreadable. */
  date: string | null;
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  listId: string | null;
  /** Top-level content type, lower case (`multipart/report` marks a bounce). */
  contentType: string;
  /** Always empty outside the worker (the raw body never leaves it; see `filtered`). */
  text: string;
  html: string;
  textCut: boolean;
  htmlCut: boolean;
  /** Why an HTML part could not be turned into text, if it could not. */
  conversionError: string | null;
  attachments: AttachmentFacts[];
  /** All attachments, also those past the listing cap. */
  attachmentCount: number;
  headersOnly: boolean;
  /** What the model may see: the subject and body after the mail-safety filter (safety.ts). */
  filtered: FilteredMail;
}

/** The outcome of parsing: a message, or why it could not be read (a sentence, no content). */
export type ParseOutcome = { ok: true; message: ParsedMessage } | { ok: false; reason: string };

/** The values of header `key` (case-insensitive), unfolded, in order. */
export function headerValues(message: Pick<ParsedMessage, "headerLines">, key: string): string[] {
  const k = key.toLowerCase();
  return message.headerLines
    .filter((h) => h.key === k)
    .map((h) => h.line.slice(h.line.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " ").trim());
}
