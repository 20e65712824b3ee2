/** The stored form of a person's reach preference (core/persons), read and written by both adapters. */
import { channelNames, type ChannelName } from "../channels/records.js";
import type { ReachPreference } from "../persons/records.js";

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
