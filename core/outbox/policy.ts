import type { OutboundPart, RenderOptions } from "../channels/index.js";
import type { OutboxMessage } from "./records.js";

/** Backoff before attempt `n` (1-based), ms: 2 s, 4 s, … capped at 10 min (and at the give-up deadline). */
export function retryDelayMs(attempt: number): number {
  return Math.min(2_000 * 2 ** (attempt - 1), 600_000);
}

/**
 * Rendering levels, tried in order after the platform rejects a part's payload: the platform's own
 * formatting, then the part's plain text, then its plain text in quarter-size parts.
 */
export const renderLevels: readonly RenderOptions[] = [
  { style: "rich", scale: 1 },
  { style: "plain", scale: 1 },
  { style: "plain", scale: 0.25 },
];

/**
 * Told to the person when a part that must not be repeated (a card, a message with buttons) may not
 * have arrived (a crash mid-send on a platform that cannot be checked).
 */
export const uncertainNotice =
  "I was restarted while sending you a message with buttons and can't tell whether it arrived. If a card or a question with buttons seems missing, open the dashboard or ask me to show it again.";

/** Heads a part sent again after a crash cut its send short on a platform that cannot be checked. */
export const repeatMark = "↻ Sent again after a restart — you may already have this part:";

/**
 * Whether a part cut short by a crash may be sent again where the platform cannot say whether it
 * arrived: text and files may (a repeat costs a moment's reading and is marked); a card or a part
 * carrying buttons may not (two live cards for one decision, a second press of a payment).
 */
export function mayRepeat(message: Pick<OutboxMessage, "card">, part: OutboundPart): boolean {
  return message.card === null && !part.buttons;
}
