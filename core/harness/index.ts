/**
 * The harness: the LLM tool loop of one activation and the pieces it is made of. Context assembly
 * (persona, memory, history within the token budget) happens before; journaling and Sentinel wrap
 * each call through `executeTool`.
 */
export { runToolLoop, DEFAULT_MAX_INVALID_CALLS_PER_TOOL } from "./loop.js";
export { repairHistory, unansweredToolCalls, toolResultMessage, INTERRUPTED_RESULT } from "./history.js";
export { toChatTool, ToolDispatcher } from "./tool-dispatch.js";
export { wrapUntrusted, untrustedToolResult, escapeDelimiters } from "./untrusted.js";
export type * from "./types.js";
