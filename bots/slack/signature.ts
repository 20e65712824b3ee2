import { createHmac, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { jsonDepth, MAX_JSON_DEPTH, readBody, type RefusalSink, type WithRawBody } from "../../web/http/index.js";

/** Largest Slack request accepted, bytes (events and interaction payloads are a few KB). */
export const SLACK_BODY_LIMIT = 256 * 1024;
/** Slack's replay window: a request older than this is refused (Slack docs, "Verifying requests"). */
const MAX_AGE_S = 5 * 60;

/**
 * Checks `v0=HMAC-SHA256(signingSecret, "v0:" + timestamp + ":" + body)` in constant time and the
 * 5-minute window (Slack docs, "Verifying requests from Slack"). Returns why it fails, or null.
 */
export function slackSignatureProblem(signingSecret: string, body: Buffer, headers: { signature?: string; timestamp?: string }, nowSeconds: number): string | null {
  const ts = Number(headers.timestamp);
  if (!headers.signature || !headers.timestamp || !Number.isFinite(ts)) return "missing X-Slack-Signature or X-Slack-Request-Timestamp";
  if (Math.abs(nowSeconds - ts) > MAX_AGE_S) return "timestamp outside the 5-minute window";
  const expected = Buffer.from(`v0=${createHmac("sha256", signingSecret).update(`v0:${headers.timestamp}:`).update(body).digest("hex")}`);
  const given = Buffer.from(headers.signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : "signature mismatch";
}

/** The JSON a Slack request carries: the body itself, or the form field `payload` (interactivity). */
function jsonOf(body: Buffer, contentType: string | undefined): string {
  const text = body.toString("utf8");
  if (contentType?.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams(text).get("payload") ?? "";
  return text;
}

/**
 * Middleware in front of Bolt's receiver: reads the body with a byte limit (aborting oversized and
 * endless chunked bodies) before the signature is checked, checks the signature and the replay
 * window, bounds the JSON nesting depth, and leaves the bytes in `req.rawBody` for Bolt (which
 * verifies again). Refusals answer 401/400/413 and are reported to `onRefused`.
 */
export function slackRequestGuard(options: { signingSecret: string; onRefused?: RefusalSink; now?: () => number }): RequestHandler[] {
  const source = "slack";
  return [
    readBody({ limit: SLACK_BODY_LIMIT, source, ...(options.onRefused && { onRefused: options.onRefused }) }),
    (req: Request & WithRawBody, res: Response, next: NextFunction) => {
      const body = req.rawBody ?? Buffer.alloc(0);
      const nowSeconds = Math.floor((options.now?.() ?? Date.now()) / 1000);
      const problem = slackSignatureProblem(options.signingSecret, body, { signature: req.get("x-slack-signature"), timestamp: req.get("x-slack-request-timestamp") }, nowSeconds);
      if (problem !== null) {
        options.onRefused?.({ source, reason: problem.startsWith("timestamp") ? "stale" : "bad_signature", detail: problem });
        res.status(401).send();
        return;
      }
      const depth = jsonDepth(jsonOf(body, req.get("content-type")));
      if (depth > MAX_JSON_DEPTH) {
        options.onRefused?.({ source, reason: "too_deep", detail: `JSON nested ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}` });
        res.status(400).send();
        return;
      }
      next();
    },
  ];
}
