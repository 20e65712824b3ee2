/**
 * What the connector knows about one message after parsing — before the one-time-code filter, so
 * none of this leaves the connector as it is: everything the model, the store or a log sees is made
 * from it by the filter (see content.ts).
 */

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
  /** Raw header lines in order: lower-case `key`, unparsed `line` (folding kept). */
  headerLines: { key: string; line: string }[];
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
  /** Plain text (HTML turned into text when there is no plain part), cut at the text cap. */
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
