/**
 * Request bodies read safely, before any signature check or parser looks at them:
 * - a declared `Content-Length` over the limit is refused (413) without reading a byte;
 * - a body read in chunks (chunked transfer encoding) is aborted the moment it passes the limit —
 *   the answer is 413 with `Connection: close` and the connection is closed, so an endless body
 *   costs nothing more (body-parser would keep draining it);
 * - JSON is parsed only after its nesting depth was checked by a linear scan (deeply nested input
 *   costs the parser stack and time), at most {@link MAX_JSON_DEPTH} levels.
 * Every refusal goes to `onRefused` (the composition root audits it).
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";

/** Deepest JSON nesting accepted (objects and arrays). Platform payloads use fewer than 15 levels. */
export const MAX_JSON_DEPTH = 32;

/** Why a request was refused at the door, for the audit log. Never carries the body or a secret. */
export interface Refusal {
  /** Where: `telegram`, `slack`, `hooks`, `local`, `dashboard`. */
  source: string;
  reason: "bad_signature" | "too_large" | "too_deep" | "bad_json" | "stale";
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

/**
 * Middleware: reads the whole body into `req.rawBody` (a Buffer), at most `limit` bytes (see module
 * doc); on refusal answers 413 itself and calls `onRefused`.
 */
export function readBody(options: { limit: number; source: string; onRefused?: RefusalSink }): RequestHandler {
  return (req: Request & WithRawBody, res: Response, next: NextFunction) => {
    const refuse = (detail: string) => {
      options.onRefused?.({ source: options.source, reason: "too_large", detail });
      res.set("Connection", "close");
      res.status(413).json({ error: `The request body is larger than ${options.limit} bytes.` });
      res.once("finish", () => req.socket.destroy());
    };
    const declared = Number(req.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared > options.limit) {
      refuse(`declared ${declared} bytes; the limit is ${options.limit}`);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > options.limit) {
        done = true;
        req.off("data", onData);
        req.pause();
        refuse(`more than ${options.limit} bytes sent (aborted while reading)`);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => {
      if (done) return;
      done = true;
      req.rawBody = Buffer.concat(chunks);
      next();
    });
    req.once("error", (error) => {
      if (done) return;
      done = true;
      next(error);
    });
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
