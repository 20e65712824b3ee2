import { DiscordAPIError, HTTPError, RESTJSONErrorCodes } from "discord.js";
import { DeliveryError } from "../../core/channels/index.js";

/**
 * Discord REST refusals that mean the person cannot be reached there (Discord API "JSON Error
 * Codes"): 50007 Cannot send messages to this user (DMs closed, bot blocked, no shared server),
 * 10003 Unknown Channel, 10013 Unknown User, 50001 Missing Access. Other 4xx (50035 Invalid Form
 * Body: content over 2,000 characters, bad components; 50006 empty message; 10008 Unknown Message
 * for an edit; 50013 Missing Permissions) reject this payload only.
 */
export const RECIPIENT_GONE_DISCORD_CODES: ReadonlySet<number> = new Set([
  RESTJSONErrorCodes.CannotSendMessagesToThisUser,
  RESTJSONErrorCodes.UnknownChannel,
  RESTJSONErrorCodes.UnknownUser,
  RESTJSONErrorCodes.MissingAccess,
]);

/** Whether `err` is a Discord REST error with JSON error code `code`. */
export function isDiscordCode(err: unknown, code: number): boolean {
  return err instanceof DiscordAPIError && err.code === code;
}

/**
 * Maps whatever discord.js threw while delivering to a `DeliveryError`: `recipient_gone` for the
 * codes above; `payload_rejected` for any other 4xx except 429 and for RangeErrors (builder
 * validation); `rate_limited` for 429 with Discord's `retry_after`; `transient` for 5xx after
 * @discordjs/rest's own retries, timeouts and network failures. The message names the operation
 * and Discord's code, never the token.
 */
export function toDeliveryError(err: unknown, what: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof DiscordAPIError) {
    const code = typeof err.code === "number" ? err.code : Number.NaN;
    const retryAfter = (err.rawError as { retry_after?: unknown }).retry_after;
    const outcome = RECIPIENT_GONE_DISCORD_CODES.has(code)
      ? "recipient_gone"
      : err.status === 429
        ? "rate_limited"
        : err.status >= 400 && err.status < 500
          ? "payload_rejected"
          : "transient";
    return new DeliveryError(`Discord refused to ${what}: ${err.status} ${err.code} ${err.message}`, outcome, {
      cause: err,
      ...(typeof retryAfter === "number" ? { retryAfterMs: Math.ceil(retryAfter * 1000) } : {}),
    });
  }
  if (err instanceof HTTPError) {
    const outcome = err.status === 429 ? "rate_limited" : err.status < 500 ? "payload_rejected" : "transient";
    return new DeliveryError(`Discord failed to ${what}: HTTP ${err.status}`, outcome, { cause: err });
  }
  if (err instanceof RangeError) {
    return new DeliveryError(`Discord payload invalid, could not ${what}: ${err.message}`, "payload_rejected", { cause: err });
  }
  return new DeliveryError(`Discord: could not ${what}: ${(err as Error)?.message ?? String(err)}`, "transient", { cause: err });
}
