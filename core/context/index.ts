/**
 * Context assembly: what the model sees in one request — persona and instructions, settings and
 * local time, relevant memory, goals, the task, the rolling summary, recent turns, media — within
 * the token budget, counted with the tokenizer. It reads the store, never writes to it except the
 * rolling summary, and never calls tools.
 */
export { assembleContext, type AssembledContext, type ConversationView } from "./assemble.js";
export { attachmentNoun, type ContextMedia } from "./attachments.js";
export { RollingSummaries, updateRollingSummary, type RollingSummariesDeps } from "./summary.js";
export { createTokenCounter, type TokenCounter } from "./tokens.js";
export type { UntrustedContent } from "./untrusted.js";
