/**
 * From a raw RFC 822 message to what the filter reads, with `mailparser` (MIME structure,
 * quoted-printable and base64, charsets, RFC 2047 encoded words in the subject).
 *
 * Caps: the source is refused above `MAX_SOURCE_BYTES` (32 MiB) with `MailReadError`
 * ("MAIL_TOO_LARGE") before any parsing; mailparser's own HTML-to-text conversion and cid-image
 * inlining are switched off (the filter converts HTML itself, with its limits).
 */
import { simpleParser, type ParsedMail } from "mailparser";
import type { HeaderLines } from "../headers.js";
import { filterMail } from "./redact.js";
import type { FilteredMail, MailContent } from "./types.js";

/** Largest raw message parsed, in bytes. */
export const MAX_SOURCE_BYTES = 32 * 1024 * 1024;

/** Why a message could not be read. Its message never quotes the mail. */
export class MailReadError extends Error {
  override readonly name = "MailReadError";
  constructor(
    readonly code: "MAIL_TOO_LARGE" | "MAIL_UNREADABLE",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The filter's input from mailparser's result (`ParsedMail`): subject, text, html and the OTP-Token header's code. */
export function contentOf(parsed: ParsedMail): MailContent {
  const otp = (parsed as ParsedMail & { otp?: { code?: unknown } }).otp;
  return {
    subject: parsed.subject ?? "",
    text: parsed.text ?? null,
    html: typeof parsed.html === "string" ? parsed.html : null,
    otpCode: typeof otp?.code === "string" ? otp.code : null,
  };
}

/** A parsed message: the filter's input, the header lines in order, and mailparser's full result. */
export interface ParsedSource {
  content: MailContent;
  headerLines: HeaderLines;
  parsed: ParsedMail;
}

/**
 * Parses a raw message (a string is taken as UTF-8). Throws `MailReadError`: MAIL_TOO_LARGE above
 * `maxBytes` (default 32 MiB), MAIL_UNREADABLE when mailparser gives up.
 */
export async function parseMailSource(source: string | Buffer, options: { maxBytes?: number } = {}): Promise<ParsedSource> {
  const max = options.maxBytes ?? MAX_SOURCE_BYTES;
  const bytes = typeof source === "string" ? Buffer.byteLength(source, "utf8") : source.length;
  if (bytes > max) throw new MailReadError("MAIL_TOO_LARGE", `could not read this message: it is ${bytes} bytes, more than the ${max} bytes read`);
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(typeof source === "string" ? Buffer.from(source, "utf8") : source, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipImageLinks: true,
      skipTextLinks: true,
    });
  } catch (cause) {
    throw new MailReadError("MAIL_UNREADABLE", "could not read this message: its MIME structure is broken", { cause });
  }
  return { content: contentOf(parsed), headerLines: parsed.headerLines ?? [], parsed };
}

/** Parses and filters a raw message: what the model may see of it. Throws like `parseMailSource`. */
export async function filterMailSource(source: string | Buffer, options: { maxBytes?: number } = {}): Promise<FilteredMail> {
  return filterMail((await parseMailSource(source, options)).content);
}
