import { GrammyError, HttpError } from "grammy";
import { DeliveryError } from "../../core/channels/index.js";
import { ConfigError, FamiliarError } from "../../core/errors.js";

/** Telegram's 400 descriptions that mean the chat itself is gone for the bot (not this payload). */
const CHAT_GONE = /chat not found|user not found|peer_id_invalid|group chat was (deactivated|deleted|upgraded)|chat was deleted/i;

/**
 * Maps a failed Bot API call to a `DeliveryError` with its outcome (Telegram Bot API error answers):
 * - `recipient_gone`: 403 ("bot was blocked by the user", "user is deactivated", "bot was kicked
 *   from the group chat") and the 400s that say the chat is gone ("chat not found", …);
 * - `payload_rejected`: every other 400 ("message is too long", "can't parse entities",
 *   "BUTTON_DATA_INVALID", "message text is empty", "message to edit not found", …) — this payload;
 *   the outbox re-renders it, the person stays reachable;
 * - `rate_limited`: 429, with `retryAfterMs` from `parameters.retry_after` (seconds → ms) once
 *   @grammyjs/auto-retry gave up;
 * - `transient`: 5xx, 401/404 (a token or API root problem the operator fixes; the message itself is
 *   fine), and network failures (`HttpError`). The network error is not kept as `cause`: its text can
 *   contain the request URL, which contains the bot token.
 *
 * Throws nothing; `what` names the call for the message ("sendMessage to chat 42").
 */
export function toDeliveryError(err: unknown, what: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof GrammyError) {
    const message = `telegram: ${what} failed (${err.error_code}: ${err.description})`;
    if (err.error_code === 403 || (err.error_code === 400 && CHAT_GONE.test(err.description))) return new DeliveryError(message, "recipient_gone", { cause: err });
    if (err.error_code === 400) return new DeliveryError(message, "payload_rejected", { cause: err });
    const retryAfter = err.parameters.retry_after;
    if (err.error_code === 429) return new DeliveryError(message, "rate_limited", { cause: err, retryAfterMs: typeof retryAfter === "number" ? retryAfter * 1000 : 1_000 });
    return new DeliveryError(message, "transient", { cause: err });
  }
  if (err instanceof HttpError) return new DeliveryError(`telegram: ${what} failed: ${err.message}`, "transient");
  return new DeliveryError(`telegram: ${what} failed: ${err instanceof Error ? err.message : String(err)}`, "transient");
}

/** Telegram's answer when an edit changes nothing (a retried edit): the card already shows it. */
export function isNotModified(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /message is not modified/i.test(err.description);
}

/** Telegram's answer to answerCallbackQuery once the press is older than its answer window. */
export function isStaleCallback(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /query is too old|query id is invalid/i.test(err.description);
}

/**
 * Explains why the bot could not start, naming the setting to check and never the token: 401
 * (revoked or wrong token) and 404 (Telegram's answer to a malformed token) point at
 * TELEGRAM_BOT_TOKEN as a `ConfigError`, a 400 from setWebhook at TELEGRAM_WEBHOOK_URL (Telegram Bot API
 * setWebhook: https only, ports 443, 80, 88 or 8443); a network failure points at TELEGRAM_API_ROOT.
 */
export function toStartError(err: unknown, step: string, apiRoot: string): Error {
  if (err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404)) {
    return new ConfigError(
      `TELEGRAM_BOT_TOKEN is set but rejected by Telegram (${err.error_code} ${err.description}) during ${step}: check the token with @BotFather`,
      [{ key: "TELEGRAM_BOT_TOKEN", expected: "a bot token from @BotFather (digits:letters)" }],
    );
  }
  if (err instanceof GrammyError && err.error_code === 400 && step === "setWebhook") {
    return new ConfigError(
      `TELEGRAM_WEBHOOK_URL or TELEGRAM_WEBHOOK_SECRET was refused by Telegram (${err.description}): Telegram posts only to a public https URL on port 443, 80, 88 or 8443`,
      [{ key: "TELEGRAM_WEBHOOK_URL", expected: "the public https URL Telegram posts updates to" }],
    );
  }
  if (err instanceof GrammyError) {
    return new FamiliarError("CHANNEL_ERROR", `telegram: ${step} was refused (${err.error_code}: ${err.description})`, { cause: err });
  }
  return new FamiliarError(
    "CHANNEL_ERROR",
    `telegram: ${step} could not reach the Bot API at ${apiRoot}: check TELEGRAM_API_ROOT and the network (${err instanceof Error ? err.message : String(err)})`,
  );
}
