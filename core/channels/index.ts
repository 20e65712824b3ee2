/**
 * Channels: the port every messenger adapter implements (`ChannelAdapter`), the shapes that cross
 * it (inbound events, outbound content and parts, delivery outcomes), the approval card's view
 * model that every surface renders, and small helpers on that boundary (direct sends, attachment
 * errors, chat-log ids, channel names in words). It knows no messenger library and holds no state.
 */
export { AttachmentError, formatBytes } from "./attachments.js";
export {
  cardViewSchema,
  parseCardView,
  renderCardMarkdown,
  type CardButton,
  type CardField,
  type CardView,
} from "./card-view.js";
export { chatLogId } from "./chat-log-id.js";
export {
  DeliveryError,
  fileOfPart,
  filePart,
  isPhoto,
  sendsAsDocument,
  type AttachmentSource,
  type BotAccount,
  type ChannelAdapter,
  type ChannelTarget,
  type InboundAttachment,
  type InboundEvent,
  type InboundMessage,
  type InboundOutcome,
  type InboundPress,
  type InboundSink,
  type OutboundAttachment,
  type OutboundContent,
  type OutboundPart,
  type RenderOptions,
} from "./port.js";
export { ChannelRegistry, type ChannelsStarted } from "./registry.js";
export { sendDirect } from "./send.js";
export { TypingIndicators } from "./typing.js";
export { channelInWords } from "./words.js";
export { channelNames, type Button, type ChannelName, type LocalAttachment, type LocalMessage, type NewLocalMessage } from "./records.js";
