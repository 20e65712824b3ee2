/**
 * The mail-parsing worker thread (started by parse-pool.ts; its own entry in the server bundle). It
 * streams one message at a time through mailparser's `MailParser` — attachments are counted and
 * discarded, never buffered — then runs the mail-safety filter (safety.ts `filterMail`: one-time
 * codes, passwords and access links replaced by markers) on the subject and body, here, off the
 * event loop (it takes about a second per 80 KB of HTML). It posts back header lines, decoded
 * addresses, attachment facts and the **filtered** subject and body; the raw body never leaves
 * this thread. A message that breaks it breaks only this thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import { MailParser, type AddressObject, type EmailAddress, type HeaderLines, type Headers, type ListHeaders, type StructuredHeader } from "mailparser";
import { convert } from "html-to-text";
import type { ParseLimits } from "./parse-limits.js";
import { filterMail } from "./safety.js";
import type { AttachmentFacts, MailAddress, ParsedMessage } from "./message.js";

/** A request from the pool. */
export interface WorkerRequest {
  id: number;
  raw: Uint8Array;
  headersOnly: boolean;
}

/** An answer: `started` when the parse begins, then `result` or `error`. */
export type WorkerAnswer = { id: number; started: true } | { id: number; result: ParsedMessage } | { id: number; error: string };

const limits = (workerData as { limits: ParseLimits }).limits;

function addresses(value: unknown): MailAddress[] {
  const out: MailAddress[] = [];
  const visit = (list: EmailAddress[] | undefined) => {
    for (const a of list ?? []) {
      if (a.group) visit(a.group);
      else if (a.address) out.push({ name: a.name || "", address: a.address.toLowerCase() });
    }
  };
  for (const obj of ([] as unknown[]).concat(value ?? [])) if (obj && typeof obj === "object" && "value" in obj) visit((obj as AddressObject).value);
  return out;
}

function cut(text: unknown, max: number): { text: string; cut: boolean } {
  if (typeof text !== "string") return { text: "", cut: false };
  return text.length > max ? { text: text.slice(0, max), cut: true } : { text, cut: false };
}

// mailparser turns HTML into text only for a root or alternative-less HTML part; a multipart/mixed
// with only HTML would have no text, so the worker converts it itself (html-to-text, as mailparser).
function htmlText(html: string): { text: string; error: string | null } {
  if (html.length > limits.maxHtmlToText) return { text: "", error: "the HTML is too long to turn into text" };
  try {
    return { text: convert(html, { wordwrap: false, limits: { maxDepth: 200 } }), error: null };
  } catch {
    return { text: "", error: "the HTML could not be turned into text" };
  }
}

type Head = Omit<ParsedMessage, "text" | "html" | "textCut" | "htmlCut" | "conversionError" | "attachments" | "attachmentCount" | "headersOnly" | "filtered">;

function summary(headers: Headers, lines: HeaderLines): Head {
  const text = (k: string): string | null => {
    const v = headers.get(k);
    return typeof v === "string" ? v : null;
  };
  const date = headers.get("date");
  const list = (headers.get("list") ?? {}) as ListHeaders;
  const refs = headers.get("references");
  const type = headers.get("content-type") as StructuredHeader | undefined;
  return {
    headerLines: lines.map((l) => ({ key: l.key, line: l.line })),
    subject: text("subject") ?? "",
    from: addresses(headers.get("from")),
    to: addresses(headers.get("to")),
    cc: addresses(headers.get("cc")),
    bcc: addresses(headers.get("bcc")),
    replyTo: addresses(headers.get("reply-to")),
    sender: addresses(headers.get("sender")),
    date: date instanceof Date && !Number.isNaN(date.getTime()) ? date.toISOString() : null,
    messageId: text("message-id"),
    inReplyTo: text("in-reply-to"),
    references: refs ? ([] as unknown[]).concat(refs).map(String) : [],
    listId: list.id?.id ? String(list.id.id) : null,
    contentType: type?.value ? String(type.value).toLowerCase() : "text/plain",
  };
}

function parse(raw: Buffer, headersOnly: boolean): Promise<ParsedMessage> {
  return new Promise((resolve, reject) => {
    const parser = new MailParser({
      skipImageLinks: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      checksumAlgo: false,
      maxChildNodes: limits.maxParts,
      maxHeadSize: limits.maxHeaderBytes,
      maxHtmlLengthToParse: limits.maxHtmlToText,
    });
    let headers: Headers | null = null;
    let lines: HeaderLines = [];
    let body = { text: "", html: "", textCut: false, htmlCut: false, conversionError: null as string | null };
    let attachmentCount = 0;
    const attachments: AttachmentFacts[] = [];
    parser.on("headers", (h) => (headers = h));
    parser.on("headerLines", (l) => (lines = l ?? []));
    parser.on("data", (d) => {
      if (d.type === "attachment") {
        attachmentCount++;
        let size = 0;
        d.content.on("data", (c: Buffer) => (size += c.length));
        d.content.on("end", () => {
          if (attachments.length < limits.maxAttachments)
            attachments.push({ partId: d.partId ?? null, filename: d.filename ?? null, contentType: String(d.contentType || "application/octet-stream").toLowerCase(), size, disposition: d.contentDisposition ?? null, cid: d.cid ?? null, related: Boolean(d.related) });
          d.release?.();
        });
        return;
      }
      let plain = typeof d.text === "string" ? d.text : "";
      let conversionError = d.textConversionError ? String(d.textConversionError.message).slice(0, 200) : null;
      if (!plain.trim() && d.html) {
        const converted = htmlText(d.html);
        plain = converted.text;
        conversionError ??= converted.error;
      }
      const t = cut(plain, limits.maxTextChars);
      const h = cut(d.html, limits.maxHtmlChars);
      body = { text: t.text, html: h.text, textCut: t.cut, htmlCut: h.cut, conversionError };
    });
    parser.on("error", reject);
    parser.on("end", () => {
      if (!headers) return reject(new Error("it has no header section"));
      const head = summary(headers, lines);
      const otp = (parser as unknown as { otp?: { code?: unknown } }).otp;
      const filtered = filterMail({
        subject: head.subject,
        text: headersOnly ? null : body.text,
        html: headersOnly ? null : body.html || null,
        otpCode: typeof otp?.code === "string" ? otp.code : null,
      });
      // Only the filtered text leaves the worker: the raw body stays here.
      resolve({ ...head, text: "", html: "", textCut: body.textCut, htmlCut: body.htmlCut, conversionError: body.conversionError, attachments, attachmentCount, headersOnly, filtered });
    });
    parser.end(raw);
  });
}

const port = parentPort;
if (!port) throw new Error("mail-worker.ts runs as a worker thread (see parse-pool.ts)");
port.on("message", ({ id, raw, headersOnly }: WorkerRequest) => {
  port.postMessage({ id, started: true } satisfies WorkerAnswer);
  parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), headersOnly).then(
    (result) => port.postMessage({ id, result } satisfies WorkerAnswer),
    (err: unknown) => port.postMessage({ id, error: String(err instanceof Error ? err.message : err).slice(0, 300) } satisfies WorkerAnswer),
  );
});
