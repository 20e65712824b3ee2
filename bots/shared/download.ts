import { AttachmentError, formatBytes } from "../../core/channels/index.js";

/** Options of {@link downloadLimited}. */
export interface DownloadOptions {
  /** Most bytes accepted; more is `AttachmentError("too_large")`. */
  maxBytes: number;
  /** What is being downloaded, for error messages ("Telegram file", "Slack file F0123"). Never a URL. */
  what: string;
  /** Request headers (e.g. Slack's `Authorization: Bearer …`). */
  headers?: Record<string, string>;
  /** Size the platform announced, bytes: refused before any request when over `maxBytes`. */
  announcedSize?: number | null;
  /** Whole download deadline, ms (default 60,000). */
  timeoutMs?: number;
  /**
   * When set, a `text/html` answer is refused with this message (reason `unavailable`): Slack
   * answers a file URL it will not serve with its sign-in page, status 200.
   */
  refuseHtml?: string;
}

/**
 * GETs `url` and returns the body, never holding more than `maxBytes` (+ one network chunk): a
 * `content-length` over the limit is refused before the body is read, and the read stops as soon as
 * the count passes it. Redirects are followed (fetch drops `Authorization` on a redirect to
 * another origin). Throws `AttachmentError`: `too_large`, or `download_failed` for a non-2xx answer,
 * a network error or the deadline. Error messages never contain the URL (Telegram's file URLs carry
 * the bot token).
 */
export async function downloadLimited(url: string, options: DownloadOptions): Promise<Buffer> {
  const { maxBytes, what } = options;
  const tooLarge = (size?: number) =>
    new AttachmentError("too_large", `${what} is ${size === undefined ? "larger than" : formatBytes(size) + ", over"} the ${formatBytes(maxBytes)} limit`, {
      limit: maxBytes,
      ...(size !== undefined && { size }),
    });
  if (options.announcedSize != null && options.announcedSize > maxBytes) throw tooLarge(options.announcedSize);
  let response: Response;
  try {
    response = await fetch(url, { headers: options.headers ?? {}, redirect: "follow", signal: AbortSignal.timeout(options.timeoutMs ?? 60_000) });
  } catch (err) {
    throw new AttachmentError("download_failed", `${what} could not be downloaded (${describe(err)})`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new AttachmentError("download_failed", `${what} could not be downloaded (HTTP ${response.status})`);
  }
  if (options.refuseHtml && /^text\/html\b/i.test(response.headers.get("content-type") ?? "")) {
    await response.body?.cancel().catch(() => undefined);
    throw new AttachmentError("unavailable", options.refuseHtml);
  }
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(declared);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    if (response.body) {
      // fetch (undici) yields Uint8Array chunks; the DOM typing says `any`.
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        total += chunk.byteLength;
        if (total > maxBytes) {
          await response.body.cancel().catch(() => undefined);
          throw tooLarge();
        }
        chunks.push(Buffer.from(chunk));
      }
    }
  } catch (err) {
    if (err instanceof AttachmentError) throw err;
    throw new AttachmentError("download_failed", `${what} could not be downloaded (${describe(err)})`);
  }
  return Buffer.concat(chunks, total);
}

/** The error's name and message without anything URL-shaped. */
function describe(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "[url]").slice(0, 200);
}
