import { sendDirect } from "../../core/channels/send.js";
import type { ChannelAdapter, ChannelTarget, OutboundContent } from "../../core/channels/port.js";

let sequence = 0;

/** Sends content through an adapter part by part, as the outbox does (tests of one adapter). */
export async function send(adapter: ChannelAdapter, target: ChannelTarget, content: OutboundContent): Promise<{ platformIds: string[] }> {
  return { platformIds: await sendDirect(adapter, target, content, content.deliveryKey ?? `test:${++sequence}`) };
}
