import { webApi } from "@slack/bolt";
import { DeliveryError } from "../../core/channels/index.js";

/**
 * Slack Web API error codes that mean the person cannot be reached in this conversation (Slack API
 * reference for chat.postMessage / chat.update): the conversation is gone or closed to the bot, the
 * person left or was deactivated.
 */
const RECIPIENT_GONE = new Set(["channel_not_found", "not_in_channel", "is_archived", "account_inactive", "user_not_found", "user_disabled", "cannot_dm_bot"]);

/** Codes that reject this payload (or this edit) only: the outbox re-renders or sends it as new. */
const PAYLOAD_REJECTED = new Set([
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
  "invalid_metadata_format",
  "invalid_metadata_schema",
  "metadata_too_large",
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
 * Maps a failed Web API call to a `DeliveryError`: `recipient_gone` and `payload_rejected` for the
 * codes above; `rate_limited` (with `retryAfterMs` when Slack said how long) for rate limits that
 * outlived the WebClient's own Retry-After waits; `transient` for everything else — 5xx, network,
 * and token problems (invalid_auth, token_revoked, missing_scope) the operator fixes, after which
 * the message itself is fine. The message names the method and Slack's code, never the token.
 */
export function toDeliveryError(method: string, err: unknown, retryAfterSec?: number): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const code = slackErrorCode(err);
  if (code !== null) {
    const outcome = RECIPIENT_GONE.has(code) ? "recipient_gone" : PAYLOAD_REJECTED.has(code) ? "payload_rejected" : code === "ratelimited" ? "rate_limited" : "transient";
    return new DeliveryError(`Slack ${method} failed: ${code}`, outcome, {
      cause: err,
      retryAfterMs: code === "ratelimited" && retryAfterSec ? retryAfterSec * 1000 : undefined,
    });
  }
  const e = err as { code?: unknown; retryAfter?: unknown; statusCode?: unknown; original?: { message?: unknown } };
  if (e?.code === webApi.ErrorCode.RateLimitedError && typeof e.retryAfter === "number") {
    return new DeliveryError(`Slack ${method} rate limited`, "rate_limited", { cause: err, retryAfterMs: e.retryAfter * 1000 });
  }
  // After its own Retry-After waits, WebClient gives up with a request error wrapping
  // "A rate limit was exceeded (…)" (web-api 8.2, WebClient.makeRequest).
  const original = e?.code === webApi.ErrorCode.RequestError ? e.original?.message : undefined;
  const rateLimited = typeof original === "string" && original.startsWith("A rate limit was exceeded");
  const detail = rateLimited ? "rate limited" : e?.code === webApi.ErrorCode.HTTPError ? `HTTP ${String(e.statusCode)}` : "request failed";
  return new DeliveryError(`Slack ${method} failed: ${detail}`, rateLimited ? "rate_limited" : "transient", {
    cause: err,
    retryAfterMs: rateLimited && retryAfterSec ? retryAfterSec * 1000 : undefined,
  });
}

/** Thrown by `createSlackChannel` / `start` when the settings cannot work; names the setting, never its value. */
export class SlackSetupError extends Error {
  readonly code = "CONFIG_INVALID" as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SlackSetupError";
  }
}

/** auth.test / apps.connections.open codes meaning "this token is not valid" (Slack API reference). */
export const TOKEN_REJECTED = new Set(["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "user_removed_from_team", "team_disabled"]);
