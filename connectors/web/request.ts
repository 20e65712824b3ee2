import { z } from "zod";
import type { EgressGuard } from "../../core/egress/index.js";
import { defineTool, type ToolDefinition } from "../../core/tools/index.js";
import { DEFAULT_MAX_CHARS, egressErrorResult, responseText } from "./response.js";

/**
 * `http_request`: POST/PUT/PATCH/DELETE with a body, through the egress guard. Redirects are not
 * followed (a body must not travel on to a place Sentinel did not judge); a 3xx is returned as is.
 * Header values may hold `{{secret:NAME}}` references, which Sentinel replaces at execution time
 * only when the URL's origin is bound to the secret. The response is untrusted content.
 *
 * Sentinel: capability `web.request`, write, destination `url`, data-carrying `body` and `headers`.
 */
export function httpRequestTool(egress: EgressGuard, options: { maxChars?: number } = {}): ToolDefinition {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  return defineTool({
    name: "http_request",
    description: "Send an HTTP POST, PUT, PATCH or DELETE request with an optional body and headers. Secrets are written as {{secret:NAME}}.",
    parameters: z.object({
      url: z.string().min(1).max(4096).describe("Absolute http(s) URL"),
      method: z.enum(["POST", "PUT", "PATCH", "DELETE"]),
      headers: z.record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/), z.string().max(8192)).optional(),
      body: z.string().max(1_000_000).optional(),
    }),
    sideEffect: true,
    capability: "web.request",
    policy: {
      capability: "web.request",
      access: "write",
      method: { arg: "method" },
      destinationArgs: ["url"],
      headerArgs: ["headers"],
      bodyArgs: ["body"],
      exfiltrationArgs: ["body", "headers"],
    },
    async execute(args, context) {
      try {
        const headers: Record<string, string> = { "idempotency-key": context.idempotencyKey, ...args.headers };
        const response = await egress.request(args.url, {
          method: args.method,
          headers,
          ...(args.body === undefined ? {} : { body: args.body }),
          signal: context.signal,
          followRedirects: false,
        });
        const location = response.headers.location ? `\nLocation: ${response.headers.location} (not followed)` : "";
        return {
          ok: true,
          content: `HTTP ${response.status} from ${response.url}${location}\n\n${await responseText(response, maxChars)}`,
          data: { status: response.status, url: response.url },
          untrusted: { source: response.url },
        };
      } catch (error) {
        return egressErrorResult(error);
      }
    },
  });
}
