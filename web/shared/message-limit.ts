/**
 * The longest message a person can send Familiar in one go through the web chat or the local chat
 * API, in characters (UTF-16 code units, what a browser's `value.length` counts). One constant: the
 * web page's composer (webui/chat.tsx) and both servers (web/api/chat-api.ts, web/local/chat-routes.ts)
 * use it, so the page never lets through what the server would refuse, and nothing is ever cut.
 * 32,000 characters is about 20 pages of text, and well inside a model's context.
 */
export const MESSAGE_TEXT_MAX = 32_000;

/** How many characters before the limit the composer starts showing its counter. */
export const MESSAGE_COUNTER_FROM = MESSAGE_TEXT_MAX - 4_000;

/**
 * Request body limit (bytes) of an API that takes one message: the text's worst-case JSON size
 * (6 bytes a character, for `\u0000`-escaped control characters) plus room for the other fields.
 */
export const MESSAGE_BODY_MAX_BYTES = MESSAGE_TEXT_MAX * 6 + 16 * 1024;

/** `32000` → "32,000" (the same on server and page, whatever the locale). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** The sentence for a message over the limit, e.g. "This message is 48,000 characters long; …". */
export function tooLongMessage(length: number): string {
  return `This message is ${formatCount(length)} characters long; Familiar takes at most ${formatCount(MESSAGE_TEXT_MAX)} in one message. Shorten it or send it in parts — nothing was sent.`;
}
