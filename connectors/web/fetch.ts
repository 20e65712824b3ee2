import { z } from "zod";
import type { EgressGuard } from "../../core/egress/index.js";
import { defineTool, type ToolDefinition } from "../../core/tools/index.js";
import { DEFAULT_MAX_CHARS, egressErrorResult, responseText } from "./response.js";

/**
 * `http_fetch`: GET a web page or API through the egress guard (redirects re-checked on every hop,
 * byte and time limits; a redirect to another origin is followed only when Sentinel's grants cover
 * it, else reported to the model). HTML becomes text. The result is untrusted content with the final URL as
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
    policy: { capability: "web.fetch", access: "read", method: { fixed: "GET" }, destinationArgs: ["url"], exfiltrationArgs: [] },
    async execute(args, context) {
      try {
        const authorize = context.authorizeFollowUp;
        const response = await egress.request(args.url, {
          method: "GET",
          signal: context.signal,
          followRedirects: true,
          // A redirect to another origin is a new action: only a grant that covers it lets it through.
          beforeCrossOrigin: async (next, from, method) =>
            authorize === undefined ? "stop" : (await authorize({ method, url: next.href, why: `redirect from ${from.href}` })).allowed ? "follow" : "stop",
        });
        const text = await responseText(response, maxChars);
        const stopped = response.stopped
          ? `\nRedirect to ${response.stopped.location} (another site) not followed: it needs its own approval. Fetch that URL with http_fetch if it is needed.`
          : "";
        return {
          ok: true,
          content: `HTTP ${response.status} from ${response.url}${stopped}\n\n${text}`,
          data: { status: response.status, url: response.url, redirects: response.redirects },
          untrusted: { source: response.url },
        };
      } catch (error) {
        return egressErrorResult(error);
      }
    },
  });
}
