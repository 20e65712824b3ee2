import type { ChannelAdapter, ChannelTarget, OutboundContent } from "./port.js";

/**
 * Sends `content` right away, all its parts in order, outside the outbox: for the few answers that
 * have no person to queue them for (a pairing code to a stranger) and for tests of an adapter.
 * `key` prefixes each part's key (unique per message). Returns the platform ids. Throws the adapter's DeliveryError at the first part that fails.
 */
export async function sendDirect(adapter: ChannelAdapter, target: ChannelTarget, content: OutboundContent, key: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, part] of adapter.render(content, { style: "rich", scale: 1 }).entries()) ids.push(await adapter.sendPart(target, part, `${key}#${i}`));
  return ids;
}
