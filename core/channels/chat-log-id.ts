import { createHash } from "node:crypto";
import type { ChannelName } from "./records.js";

/**
 * The id of an entry in a person's chat log (the web app's view of every channel): derived from
 * what was said — direction, channel and the platform's id — so recording the same thing twice
 * stores it once, and so Sentinel can tell that a press in the web chat was made on the logged
 * copy of the very message an approval card was delivered as.
 */
export function chatLogId(direction: "in" | "out", channel: ChannelName, platformId: string): string {
  return `cl_${createHash("sha256").update(`${direction}\u0000${channel}\u0000${platformId}`).digest("hex").slice(0, 32)}`;
}
