/**
 * The tool contract: what a tool is (`ToolDefinition`, its context and result), what it declares to
 * Sentinel (`ToolPolicy`, `PersistencePolicy`, action descriptions for tools whose effect depends
 * on outside state), the closed set of tool error codes, and how untrusted content is wrapped for
 * the model. Tools themselves live with what they act on (core/runtime, connectors, sandbox).
 */
export { ActionUnavailableError, actionDigest, type ActionDescription } from "./action.js";
export {
  isToolErrorCode,
  type EgressFailureCode,
  type JailErrorCode,
  type LoopToolErrorCode,
  type MailErrorCode,
  type SecretErrorCode,
  type ToolErrorCode,
} from "./error-codes.js";
export {
  defineTool,
  type FollowUp,
  type FollowUpVerdict,
  type PersistencePolicy,
  type ToolContext,
  type ToolDefinition,
  type ToolPolicy,
  type ToolResult,
} from "./tool.js";
export { ToolRegistry } from "./registry.js";
export { untrustedToolResult, wrapUntrusted } from "./untrusted.js";
