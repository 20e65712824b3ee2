/**
 * The tool loop: one activation's conversation with the model — request, validate each tool call's
 * arguments, dispatch it through the executor it is given (Sentinel's gate), feed results back,
 * stop at the step limit — and the repair of histories a crash left unanswered. It knows no store
 * and no policy; it is handed both.
 */
export { ToolDispatcher, toChatTool } from "./dispatch.js";
export { INTERRUPTED_RESULT, repairHistory, unansweredToolCalls } from "./history.js";
export { runToolLoop } from "./loop.js";
export type { ExecuteTool, PlannedToolCall, ToolLoopEvent, ToolLoopInput, ToolLoopResult } from "./types.js";
