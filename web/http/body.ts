/**
 * Request bodies read safely, before any signature check or parser looks at them:
 * - a declared `Content-Length` over the limit is refused (413) without reading a byte;
 * - a body read in chunks (chunked transfer encoding) is aborted the moment it passes the limit —
 *   the answer is 413 with `Connection: close` and the connection is closed, so an endless body
 *   costs nothing more (body-parser would keep draining it);
 * - a body in a content coding (gzip, deflate, br) is decoded while streaming, the limit holding for
 *   the decoded bytes too; one that is not in the coding it claims is refused (400), an unknown
 *   coding too (415) — never taken as plain;
 * - JSON is parsed only after its nesting depth was checked by a linear scan (deeply nested input
 *   costs the parser stack and time), at most {@link MAX_JSON_DEPTH} levels.
 * Every refusal goes to `onRefused` (the composition root audits it).
 */
import type { Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { NextFunction, Request, RequestHandler, Response } from "express";

/** Deepest JSON nesting accepted (objects and arrays). Platform payloads use fewer than 15 levels. */
export const MAX_JSON_DEPTH = 32;

/** Why a request was refused at the door, for the audit log. Never carries the body or a secret. */
export interface Refusal {
  /** Where: `telegram`, `slack`, `hooks`, `local`, `dashboard`. */
  source: string;
  reason: "bad_signature" | "too_large" | "too_deep" | "bad_json" | "stale" | "bad_encoding" | "bad_content_type";
  detail: string;
}

/** Receives refusals (audit). Must not throw. */
export type RefusalSink = (refusal: Refusal) => void;

/** The raw body kept on the request by {@link readBody}. */
export interface WithRawBody {
  rawBody?: Buffer;
}

/** The deepest nesting of `[`/`{` in a JSON text, ignoring brackets inside strings. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** Parses JSON no deeper than `maxDepth`. */
export function parseBoundedJson(text: string, maxDepth = MAX_JSON_DEPTH): { ok: true; value: unknown } | { ok: false; reason: "too_deep" | "bad_json"; detail: string } {
  const depth = jsonDepth(text);
  if (depth > maxDepth) return { ok: false, reason: "too_deep", detail: `JSON nested ${depth} levels deep; the limit is ${maxDepth}` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: "bad_json", detail: `not valid JSON: ${(error as Error).message.slice(0, 120)}` };
  }
}

/** Decoders for the content codings a body may arrive in (RFC 9110 §8.4); `identity` needs none. */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => createGunzip(),
  "x-gzip": () => createGunzip(),
  deflate: () => createInflate(),
  br: () => createBrotliDecompress(),
};

/** The one decoder a `Content-Encoding` header asks for: null for none/identity, "unsupported" otherwise (a list of several codings included). */
function decoderFor(header: string | undefined): (() => Transform) | null | "unsupported" {
  const codings = (header ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return null;
  if (codings.length > 1) return "unsupported";
  return DECODERS[codings[0]!] ?? "unsupported";
}

/**
 * Middleware: reads the whole body into `req.rawBody` (a Buffer, decoded when it came with
 * `Content-Encoding: gzip`, `deflate` or `br`), at most `limit` bytes both as sent and as decoded
 * (see module doc). Refusals, each answered by the middleware itself and reported to `onRefused`:
 * 413 over the limit (declared, while streaming, or while decoding — a decompression bomb stops at
 * the limit), 415 for a content coding it cannot decode, 400 for a body that is not in the coding it
 * claims (e.g. "gzip" that is not gzip).
 */
export function readBody(options: { limit: number; source: string; onRefused?: RefusalSink }): RequestHandler {
  return (req: Request & WithRawBody, res: Response, next: NextFunction) => {
    let done = false;
    const refuse = (status: 400 | 413 | 415, reason: Refusal["reason"], detail: string, message: string) => {
      if (done) return;
      done = true;
      req.off("data", onData);
      req.pause();
      options.onRefused?.({ source: options.source, reason, detail });
      res.set("Connection", "close");
      res.status(status).json({ error: message });
      res.once("finish", () => req.socket.destroy());
    };
    const tooLarge = (detail: string) => refuse(413, "too_large", detail, `The request body is larger than ${options.limit} bytes.`);
    const declared = Number(req.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared > options.limit) return void tooLarge(`declared ${declared} bytes; the limit is ${options.limit}`);
    const makeDecoder = decoderFor(req.get("content-encoding"));
    if (makeDecoder === "unsupported") {
      const coding = (req.get("content-encoding") ?? "").slice(0, 40);
      return void refuse(415, "bad_encoding", `unsupported Content-Encoding ${JSON.stringify(coding)}`, "Unsupported Content-Encoding: send the body as identity, gzip, deflate or br (one coding).");
    }
    const decoder = makeDecoder?.();
    const chunks: Buffer[] = [];
    let sent = 0;
    let decoded = 0;
    const keep = (chunk: Buffer) => {
      if (done) return;
      decoded += chunk.length;
      if (decoded > options.limit) return void tooLarge(`more than ${options.limit} bytes after decoding (aborted while decoding)`);
      chunks.push(chunk);
    };
    const finish = () => {
      if (done) return;
      done = true;
      req.rawBody = Buffer.concat(chunks);
      next();
    };
    function onData(chunk: Buffer): void {
      if (done) return;
      sent += chunk.length;
      if (sent > options.limit) return void tooLarge(`more than ${options.limit} bytes sent (aborted while reading)`);
      if (decoder) decoder.write(chunk);
      else keep(chunk);
    }
    if (decoder) {
      decoder.on("data", keep);
      decoder.once("end", finish);
      decoder.once("error", (error: Error) => {
        decoder.destroy();
        refuse(400, "bad_encoding", `the body is not valid ${req.get("content-encoding")}: ${error.message.slice(0, 80)}`, `The request body is not valid ${req.get("content-encoding")} data, as its Content-Encoding says.`);
      });
    }
    req.on("data", onData);
    req.once("end", () => (decoder ? decoder.end() : finish()));
    req.once("error", (error) => {
      if (done) return;
      done = true;
      decoder?.destroy();
      next(error);
    });
  };
}

/**
 * Middleware: refuses with 415 (before a byte of the body is read) a request whose `Content-Type`
 * is not `type` (for endpoints whose platform always sends one type, e.g. Telegram's webhook sends
 * `application/json`, Telegram Bot API: setWebhook). The refusal is reported as `bad_content_type`.
 */
export function requireContentType(type: string, options: { source: string; onRefused?: RefusalSink }): RequestHandler {
  return (req, res, next) => {
    if (req.is(type)) return next();
    const given = (req.get("content-type") ?? "none").slice(0, 80);
    options.onRefused?.({ source: options.source, reason: "bad_content_type", detail: `Content-Type ${JSON.stringify(given)}; expected ${type}` });
    res.set("Connection", "close");
    res.status(415).json({ error: `Unsupported Content-Type ${JSON.stringify(given)}: this endpoint takes ${type}.` });
    res.once("finish", () => req.socket.destroy());
  };
}

/**
 * Middleware for JSON APIs: {@link readBody} then a depth-checked parse into `req.body`. An empty
 * body becomes `{}`. Bad or too deep JSON answers 400 (and is reported to `onRefused`).
 */
export function boundedJson(options: { limit: number; source: string; maxDepth?: number; onRefused?: RefusalSink }): RequestHandler[] {
  return [
    readBody(options),
    (req: Request & WithRawBody, res: Response, next: NextFunction) => {
      const text = (req.rawBody ?? Buffer.alloc(0)).toString("utf8");
      if (!req.is("application/json")) {
        // Not declared as JSON: left unparsed (the route's validation says what it expects).
        req.body = undefined;
        next();
        return;
      }
      if (text.trim() === "") {
        req.body = {};
        next();
        return;
      }
      const parsed = parseBoundedJson(text, options.maxDepth);
      if (!parsed.ok) {
        options.onRefused?.({ source: options.source, reason: parsed.reason, detail: parsed.detail });
        res.status(400).json({ error: parsed.reason === "too_deep" ? `The request body is nested too deeply (${parsed.detail}).` : "The request body is not valid JSON." });
        return;
      }
      req.body = parsed.value;
      next();
    },
  ];
}
