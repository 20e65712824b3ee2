import { DiscordAPIError, HTTPError, RESTJSONErrorCodes } from "discord.js";
import { DeliveryError } from "../../core/channels/port.js";

/**
 * Discord REST refusals that mean "this payload will never be accepted here": resending the same
 * payload cannot help (Discord API "JSON Error Codes").
 * - 50007 Cannot send messages to this user (DMs closed, bot blocked, no shared server);
 * - 10003 Unknown Channel, 10008 Unknown Message, 10013 Unknown User;
 * - 50001 Missing Access, 50013 Missing Permissions;
 * - 50035 Invalid Form Body (content over 2,000 characters, too many components, bad custom_id);
 * - 50006 Cannot send an empty message.
 */
export const PERMANENT_DISCORD_CODES: ReadonlySet<number> = new Set([
  RESTJSONErrorCodes.CannotSendMessagesToThisUser,
  RESTJSONErrorCodes.UnknownChannel,
  RESTJSONErrorCodes.UnknownMessage,
  RESTJSONErrorCodes.UnknownUser,
  RESTJSONErrorCodes.MissingAccess,
  RESTJSONErrorCodes.MissingPermissions,
  RESTJSONErrorCodes.InvalidFormBodyOrContentType,
  RESTJSONErrorCodes.CannotSendAnEmptyMessage,
]);

/** Whether `err` is a Discord REST error with JSON error code `code`. */
export function isDiscordCode(err: unknown, code: number): boolean {
  return err instanceof DiscordAPIError && err.code === code;
}

/**
 * Maps whatever discord.js threw while delivering to a `DeliveryError`: the permanent codes above,
 * any other 4xx except 429 (a request Discord will keep refusing) and RangeErrors are permanent
 * (builder validation is mapped where the builders run); 5xx after @discordjs/rest's own retries,
 * 429s, timeouts and network failures are not.
 * The message names the operation and Discord's code, never the token.
 */
export function toDeliveryError(err: unknown, what: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof DiscordAPIError) {
    const code = typeof err.code === "number" ? err.code : Number.NaN;
    const permanent = PERMANENT_DISCORD_CODES.has(code) || (err.status >= 400 && err.status < 500 && err.status !== 429);
    const retryAfter = (err.rawError as { retry_after?: unknown }).retry_after;
    return new DeliveryError(`Discord refused to ${what}: ${err.status} ${err.code} ${err.message}`, permanent, {
      cause: err,
      ...(typeof retryAfter === "number" ? { retryAfterMs: Math.ceil(retryAfter * 1000) } : {}),
    });
  }
  if (err instanceof HTTPError) {
    return new DeliveryError(`Discord failed to ${what}: HTTP ${err.status}`, err.status < 500 && err.status !== 429, { cause: err });
  }
  if (err instanceof RangeError) {
    return new DeliveryError(`Discord payload invalid, could not ${what}: ${err.message}`, true, { cause: err });
  }
  return new DeliveryError(`Discord: could not ${what}: ${(err as Error)?.message ?? String(err)}`, false, { cause: err });
}
