import { webApi } from "@slack/bolt";
import { DeliveryError } from "../../core/channels/port.js";

/**
 * Slack Web API error codes after which the same payload must never be sent again (Slack API
 * reference for chat.postMessage / chat.update): the conversation is gone or closed to the bot,
 * the person left, the token is dead, or the payload itself is invalid.
 */
const PERMANENT = new Set([
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "account_inactive",
  "user_not_found",
  "user_disabled",
  "invalid_auth",
  "not_authed",
  "token_revoked",
  "token_expired",
  "msg_too_long",
  "no_text",
  "invalid_blocks",
  "invalid_blocks_format",
  "msg_blocks_too_long",
  "too_many_attachments",
  "cant_update_message",
  "message_not_found",
  "edit_window_closed",
  "restricted_action",
  "cannot_reply_to_message",
  "missing_scope",
]);

/** Block Kit rejections after which the text-only fallback is tried (S3). */
export const BLOCK_REJECTIONS = new Set(["invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long"]);

/** The Slack error code of a Web API platform error (`{ ok: false, error }`), else null. */
export function slackErrorCode(err: unknown): string | null {
  if (err instanceof Error && (err as { code?: unknown }).code === webApi.ErrorCode.PlatformError) {
    const data = (err as { data?: { error?: unknown } }).data;
    return typeof data?.error === "string" ? data.error : null;
  }
  return null;
}

/**
 * Maps a failed Web API call to a `DeliveryError`: `permanent` for the codes above, retryable for
 * everything else (5xx, network, rate limits that outlived the WebClient's own Retry-After waits),
 * with `retryAfterMs` when Slack said how long to wait. The message names the method and Slack's
 * code, never the token.
 */
export function toDeliveryError(method: string, err: unknown, retryAfterSec?: number): DeliveryError {
  const code = slackErrorCode(err);
  if (code !== null) {
    const permanent = PERMANENT.has(code);
    return new DeliveryError(`Slack ${method} failed: ${code}`, permanent, {
      cause: err,
      retryAfterMs: !permanent && code === "ratelimited" && retryAfterSec ? retryAfterSec * 1000 : undefined,
    });
  }
  const e = err as { code?: unknown; retryAfter?: unknown; statusCode?: unknown; original?: { message?: unknown } };
  if (e?.code === webApi.ErrorCode.RateLimitedError && typeof e.retryAfter === "number") {
    return new DeliveryError(`Slack ${method} rate limited`, false, { cause: err, retryAfterMs: e.retryAfter * 1000 });
  }
  // After its own Retry-After waits, WebClient gives up with a request error wrapping
  // "A rate limit was exceeded (…)" (web-api 8.2, WebClient.makeRequest).
  const original = e?.code === webApi.ErrorCode.RequestError ? e.original?.message : undefined;
  const rateLimited = typeof original === "string" && original.startsWith("A rate limit was exceeded");
  const detail = rateLimited ? "rate limited" : e?.code === webApi.ErrorCode.HTTPError ? `HTTP ${String(e.statusCode)}` : "request failed";
  return new DeliveryError(`Slack ${method} failed: ${detail}`, false, {
    cause: err,
    retryAfterMs: rateLimited && retryAfterSec ? retryAfterSec * 1000 : undefined,
  });
}
