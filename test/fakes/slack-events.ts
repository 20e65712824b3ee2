import { createHmac } from "node:crypto";

/**
 * Builds and posts Slack Events API / interactivity requests to our `/slack/events`, signed the way
 * Slack signs them: `X-Slack-Signature: v0=HMAC-SHA256(signingSecret, "v0:" + ts + ":" + rawBody)`
 * with `X-Slack-Request-Timestamp: ts` (seconds). Options make wrong and stale signatures.
 */

export interface SignedPostOptions {
  signingSecret: string;
  /** Request timestamp in seconds (default now). */
  timestampSec?: number;
  /** Sign with this secret instead (a wrong signature). */
  signWith?: string;
  /** Slack's retry headers for a redelivery. */
  retryNum?: number;
  retryReason?: string;
}

export interface PostResult {
  status: number;
  /** Wall time until the response arrived, ms. */
  ms: number;
}

/** Signs `rawBody` as Slack does. */
export function slackSignature(secret: string, timestampSec: number, rawBody: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestampSec}:${rawBody}`).digest("hex")}`;
}

/** Posts a raw body with its content type, signed; resolves with the status and the time it took. */
export async function postSigned(url: string, rawBody: string, contentType: string, opts: SignedPostOptions): Promise<PostResult> {
  const ts = opts.timestampSec ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    "content-type": contentType,
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": slackSignature(opts.signWith ?? opts.signingSecret, ts, rawBody),
  };
  if (opts.retryNum !== undefined) headers["x-slack-retry-num"] = String(opts.retryNum);
  if (opts.retryReason !== undefined) headers["x-slack-retry-reason"] = opts.retryReason;
  const started = Date.now();
  const res = await fetch(url, { method: "POST", headers, body: rawBody });
  await res.text();
  return { status: res.status, ms: Date.now() - started };
}

/** An Events API `event_callback` envelope around `event`, as JSON text. */
export function eventBody(event: Record<string, unknown>, eventId: string): string {
  return JSON.stringify({
    token: "verification-token-unused",
    team_id: "T1",
    api_app_id: "A1",
    event,
    type: "event_callback",
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: "T1", user_id: "UBOT", is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  });
}

/** Posts a signed Events API delivery of `event`. */
export function postEvent(url: string, event: Record<string, unknown>, eventId: string, opts: SignedPostOptions): Promise<PostResult> {
  return postSigned(url, eventBody(event, eventId), "application/json", opts);
}

/** A `block_actions` payload for a press of the button with `value` on message `messageTs`. */
export function blockActionsPayload(p: { user: string; channel: string; messageTs: string; actionId: string; value: string; actionTs: string }): Record<string, unknown> {
  return {
    type: "block_actions",
    team: { id: "T1", domain: "fake" },
    user: { id: p.user, username: "ada", name: "ada", team_id: "T1" },
    api_app_id: "A1",
    token: "verification-token-unused",
    container: { type: "message", message_ts: p.messageTs, channel_id: p.channel, is_ephemeral: false },
    trigger_id: `trig-${p.actionTs}`,
    channel: { id: p.channel, name: "directmessage" },
    message: { type: "message", ts: p.messageTs, text: "card", user: "UBOT", bot_id: "BBOT" },
    response_url: "http://127.0.0.1:9/unused",
    actions: [{ type: "button", action_id: p.actionId, block_id: "b1", value: p.value, text: { type: "plain_text", text: "Approve" }, action_ts: p.actionTs }],
  };
}

/** Posts a signed interactivity request (form-encoded `payload=<json>`), as Slack does for button presses. */
export function postInteraction(url: string, payload: Record<string, unknown>, opts: SignedPostOptions): Promise<PostResult> {
  return postSigned(url, new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), "application/x-www-form-urlencoded", opts);
}
