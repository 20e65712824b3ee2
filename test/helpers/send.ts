import { sendDirect } from "../../core/channels/send.js";
import { filePart, type ChannelAdapter, type ChannelTarget, type OutboundAttachment, type OutboundContent } from "../../core/channels/port.js";

let sequence = 0;

/**
 * Sends content through an adapter part by part, as the outbox does (tests of one adapter): the text
 * parts the adapter renders, then one part per attachment.
 */
export async function send(adapter: ChannelAdapter, target: ChannelTarget, content: OutboundContent & { attachments?: OutboundAttachment[] }): Promise<{ platformIds: string[] }> {
  const key = content.deliveryKey ?? `test:${++sequence}`;
  const ids = await sendDirect(adapter, target, content, key);
  for (const [i, file] of (content.attachments ?? []).entries()) ids.push(await adapter.sendPart(target, filePart(file), `${key}#file${i}`));
  return { platformIds: ids };
}
