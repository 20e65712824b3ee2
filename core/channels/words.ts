import type { ChannelName } from "./records.js";

const NAMES: Record<ChannelName, string> = { local: "the web chat", telegram: "Telegram", slack: "Slack", discord: "Discord", whatsapp: "WhatsApp" };
const byName = new Map<string, string>(Object.entries(NAMES));

/**
 * A channel as a person reads it: `local` is "the web chat" (the page and the local chat API),
 * the messengers by their own names ("Telegram"). Unknown names are returned as they are.
 */
export function channelInWords(channel: string): string {
  return byName.get(channel) ?? channel;
}
