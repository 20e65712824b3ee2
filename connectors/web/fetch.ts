import { z } from "zod";
import type { EgressGuard } from "../../core/sentinel/egress.js";
import { defineTool, type ToolDefinition } from "../../core/tools/tool.js";
import { DEFAULT_MAX_CHARS, egressErrorResult, responseText } from "./response.js";

/**
 * `http_fetch`: GET a web page or API through the egress guard (redirects re-checked on every hop,
 * byte and time limits). HTML becomes text. The result is untrusted content with the final URL as
 * its source, so it taints the activation.
 *
 * Sentinel: capability `web.fetch`, read, destination `url`.
 */
export function httpFetchTool(egress: EgressGuard, options: { maxChars?: number } = {}): ToolDefinition {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  return defineTool({
    name: "http_fetch",
    description: "Fetch a web page or URL with GET and return its text (HTML converted to plain text).",
    parameters: z.object({ url: z.string().min(1).max(4096).describe("Absolute http(s) URL") }),
    sideEffect: false,
    capability: "web.fetch",
    policy: { capability: "web.fetch", access: "read", destinationArgs: ["url"], exfiltrationArgs: [] },
    async execute(args, context) {
      try {
        const response = await egress.request(args.url, { method: "GET", signal: context.signal, followRedirects: true });
        const text = await responseText(response, maxChars);
        return {
          ok: true,
          content: `HTTP ${response.status} from ${response.url}\n\n${text}`,
          data: { status: response.status, url: response.url, redirects: response.redirects },
          untrusted: { source: response.url },
        };
      } catch (error) {
        return egressErrorResult(error);
      }
    },
  });
}
