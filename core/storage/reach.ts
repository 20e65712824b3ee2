import { channelNames, type ChannelName, type Person } from "./types.js";

/**
 * Where Familiar reaches a person with a message it starts itself (a message meant for "wherever
 * they are": reminders, check-ins, digests, files):
 * - `last`: the chat they last used, where the web chat counts only while one of its pages is open;
 *   otherwise their most recently used messenger (the default);
 * - `messenger`: the chosen messenger (`channel`) while it is linked and reachable, else as `last`;
 * - `all`: every chat of theirs that is linked and reachable, the web chat included.
 * Replies to a message always go to the chat it came from.
 */
export type ReachPreference = Person["reach"];

/** The stored form of a {@link ReachPreference}: `last`, `all` or `messenger:<channel>`. */
export function reachText(reach: ReachPreference): string {
  return reach.mode === "messenger" ? `messenger:${reach.channel}` : reach.mode;
}

/** Reads the stored form of a {@link ReachPreference}; anything unknown reads as `last`. */
export function parseReach(text: string | null | undefined): ReachPreference {
  if (text === "all") return { mode: "all" };
  const channel = text?.startsWith("messenger:") ? text.slice("messenger:".length) : null;
  if (channel && (channelNames as readonly string[]).includes(channel)) return { mode: "messenger", channel: channel as ChannelName };
  return { mode: "last" };
}
