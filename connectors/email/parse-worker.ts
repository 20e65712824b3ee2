/**
 * The source of the mail-parsing worker thread (run with `eval: true`, see parse-pool.ts). It
 * streams one message at a time through mailparser's `MailParser` — attachments are counted and
 * discarded, never buffered — and posts back plain JSON: header lines, decoded addresses, text,
 * HTML and attachment facts. mailparser comes from node_modules by URL, so the worker works the
 * same from the sources and from the bundle.
 */

/** Limits the worker applies; the pool passes them in `workerData.limits`. */
export interface ParseLimits {
  /** Most MIME parts in one message (mailparser `maxChildNodes`). */
  maxParts: number;
  /** Largest header block of one part, bytes (mailparser `maxHeadSize`). */
  maxHeaderBytes: number;
  /** Longest HTML converted to text, characters. */
  maxHtmlToText: number;
  /** Longest text and HTML posted back, characters (the rest is cut and marked). */
  maxTextChars: number;
  maxHtmlChars: number;
  /** Most attachments listed. */
  maxAttachments: number;
}

export const PARSE_WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const ready = Promise.all([import(workerData.mailparserUrl), import(workerData.htmlToTextUrl)]).then(([m, h]) => ({ MailParser: m.MailParser, convert: h.convert }));
const L = workerData.limits;

// mailparser turns HTML into text only for a root or alternative-less HTML part; a multipart/mixed
// with only HTML would have no text, so the worker converts it itself (html-to-text, as mailparser).
function htmlText(convert, html) {
  if (!html || html.length > L.maxHtmlToText) return { text: "", error: html ? "the HTML is too long to turn into text" : null };
  try {
    return { text: convert(html, { wordwrap: false, limits: { maxDepth: 200 } }), error: null };
  } catch (err) {
    return { text: "", error: "the HTML could not be turned into text" };
  }
}

function addresses(value) {
  const out = [];
  const visit = (list) => {
    for (const a of list || []) {
      if (a.group) visit(a.group);
      else if (a.address) out.push({ name: a.name || "", address: String(a.address).toLowerCase() });
    }
  };
  for (const obj of [].concat(value || [])) if (obj && obj.value) visit(obj.value);
  return out;
}

function cut(text, max) {
  if (typeof text !== "string") return { text: "", cut: false };
  return text.length > max ? { text: text.slice(0, max), cut: true } : { text, cut: false };
}

function summary(headers, lines) {
  const get = (k) => headers.get(k);
  const date = get("date");
  const list = get("list") || {};
  const refs = get("references");
  return {
    headerLines: lines.map((l) => ({ key: l.key, line: l.line })),
    subject: typeof get("subject") === "string" ? get("subject") : "",
    from: addresses(get("from")),
    to: addresses(get("to")),
    cc: addresses(get("cc")),
    bcc: addresses(get("bcc")),
    replyTo: addresses(get("reply-to")),
    sender: addresses(get("sender")),
    date: date instanceof Date && !isNaN(date.getTime()) ? date.toISOString() : null,
    messageId: typeof get("message-id") === "string" ? get("message-id") : null,
    inReplyTo: typeof get("in-reply-to") === "string" ? get("in-reply-to") : null,
    references: refs ? [].concat(refs).map(String) : [],
    listId: list.id && list.id.id ? String(list.id.id) : null,
    contentType: get("content-type") && get("content-type").value ? String(get("content-type").value).toLowerCase() : "text/plain",
  };
}

function parse(raw, headersOnly) {
  return ready.then(({ MailParser, convert }) => new Promise((resolve, reject) => {
    const parser = new MailParser({
      skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true, checksumAlgo: false,
      maxChildNodes: L.maxParts, maxHeadSize: L.maxHeaderBytes, maxHtmlLengthToParse: L.maxHtmlToText,
    });
    let headers = null, lines = [];
    let body = { text: "", html: "" };
    let textCut = false, htmlCut = false, conversion = null, attachmentCount = 0;
    const attachments = [];
    parser.on("headers", (h) => { headers = h; });
    parser.on("headerLines", (l) => { lines = l || []; });
    parser.on("data", (d) => {
      if (d.type === "attachment") {
        attachmentCount++;
        let size = 0;
        d.content.on("data", (c) => { size += c.length; });
        d.content.on("end", () => {
          if (attachments.length < L.maxAttachments) attachments.push({
            partId: d.partId || null, filename: d.filename || null, contentType: String(d.contentType || "application/octet-stream").toLowerCase(),
            size, disposition: d.contentDisposition || null, cid: d.cid || null, related: !!d.related,
          });
          d.release();
        });
      } else if (d.type === "text") {
        let plain = typeof d.text === "string" ? d.text : "";
        if (d.textConversionError) conversion = String(d.textConversionError.message || d.textConversionError).slice(0, 200);
        if (!plain.trim() && d.html) {
          const converted = htmlText(convert, d.html);
          plain = converted.text;
          conversion = conversion || converted.error;
        }
        const t = cut(plain, L.maxTextChars), h = cut(d.html, L.maxHtmlChars);
        body = { text: t.text, html: h.text };
        textCut = t.cut; htmlCut = h.cut;
      }
    });
    parser.on("error", reject);
    parser.on("end", () => {
      if (!headers) return reject(new Error("no header section"));
      resolve({ ...summary(headers, lines), text: body.text, html: body.html, textCut, htmlCut, conversionError: conversion, attachments, attachmentCount, headersOnly });
    });
    parser.end(raw);
  }));
}

parentPort.on("message", ({ id, raw, headersOnly }) => {
  // The pool's time limit starts once the libraries are loaded, not while a new worker starts.
  ready.then(() => parentPort.postMessage({ id, started: true }), () => undefined);
  parse(Buffer.from(raw), headersOnly).then(
    (result) => parentPort.postMessage({ id, result }),
    (err) => parentPort.postMessage({ id, error: String((err && err.message) || err).slice(0, 300) }),
  );
});
`;
