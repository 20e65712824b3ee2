/**
 * Web connector: `http_fetch` (read) and `http_request` (write), both through Sentinel's egress
 * guard and declared to Sentinel with their capability, access and destination arguments.
 */
import type { EgressGuard } from "../../core/egress/index.js";
import type { ToolDefinition } from "../../core/tools/index.js";
import { httpFetchTool } from "./fetch.js";
import { httpRequestTool } from "./request.js";

export { httpFetchTool } from "./fetch.js";
export { httpRequestTool } from "./request.js";
export { responseText, egressErrorResult, DEFAULT_MAX_CHARS } from "./response.js";

/** Both web tools over one egress guard. */
export function webTools(egress: EgressGuard, options: { maxChars?: number } = {}): ToolDefinition[] {
  return [httpFetchTool(egress, options), httpRequestTool(egress, options)];
}
