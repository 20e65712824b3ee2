import { EgressDeniedError, EgressFailedError, type EgressResponse } from "../../core/egress/index.js";
import type { ToolResult } from "../../core/tools/index.js";

/** Most characters of a response the model gets (the rest is cut with a note). */
export const DEFAULT_MAX_CHARS = 20_000;

/**
 * The readable text of a response: HTML through `html-to-text` (links kept, images dropped), other
 * text and JSON as is, binary content described instead of shown. Cut at `maxChars` characters.
 */
export async function responseText(response: EgressResponse, maxChars: number): Promise<string> {
  const type = (response.headers["content-type"] ?? "").toLowerCase();
  let text: string;
  if (type.includes("html")) {
    // Loaded when the first HTML page arrives, not at start.
    const { convert } = await import("html-to-text");
    text = convert(response.body.toString("utf8"), { wordwrap: false, selectors: [{ selector: "img", format: "skip" }] });
  } else if (type === "" || type.startsWith("text/") || type.includes("json") || type.includes("xml")) {
    text = response.body.toString("utf8");
  } else {
    text = `(${response.body.length} bytes of ${type}; not shown)`;
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}\n… (cut at ${maxChars} of ${text.length} characters)` : text;
}

/** Turns egress errors into structured tool errors; rethrows anything else. */
export function egressErrorResult(error: unknown): ToolResult {
  if (error instanceof EgressDeniedError) {
    return {
      ok: false,
      code: "egress_denied",
      error: `${error.message}. Nothing was sent there.`,
      data: { reason: error.code, url: error.url, address: error.address },
    };
  }
  if (error instanceof EgressFailedError) return { ok: false, code: error.code, error: error.message, data: { url: error.url } };
  throw error;
}
