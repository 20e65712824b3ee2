/**
 * The conversation: a person's one continuous conversation across every messenger, its messages in
 * order (a gap-free `seq`), the files that came with them and the rolling summary. The room holds
 * the records; context assembly (core/context) reads them for the model. It must not reach a
 * messenger or the model.
 */
export { type AttachmentKind, type ConversationMessage, type ConversationSummary, type MessageAttachment, type NewConversationMessage } from "./records.js";
