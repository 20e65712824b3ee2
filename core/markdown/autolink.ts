import { Tokenizer, type Tokens } from "marked";

/**
 * Where a bare URL ends. marked follows GFM's extended autolinks, which run to the next space or `<`
 * and then drop trailing `?!.,:*_~` and an unbalanced `)`; in text a model writes (JSON, code-like
 * lines, quoted URLs) that swallows what follows — `"http://h/order","method":"POST"` became one
 * link. Quotes, backticks and `<>{}|\^` never occur unencoded in a URL (RFC 3986 §2), so the link
 * ends before the first of them; then GFM's trailing-punctuation rule runs again on what is left.
 */
const URL_STOP = /["`<>{}|\\^]/;

/**
 * marked's `url` tokenizer with the boundary above. Use as `tokenizer: { url: boundedAutolink }`
 * (marked.use / new Marked) or on a `Tokenizer` subclass for a `Lexer`. Returns what marked
 * returns (a link token, or undefined when `src` does not start with a URL).
 */
export function boundedAutolink(this: Tokenizer, src: string): Tokens.Link | undefined {
  const token = Tokenizer.prototype.url.call(this, src);
  if (!token) return token;
  const stop = token.raw.search(URL_STOP);
  if (stop === -1) return token;
  let raw = token.raw.slice(0, stop);
  // GFM's trailing punctuation (https://github.github.com/gfm/#extended-autolink-path-validation).
  for (;;) {
    const trimmed = raw.replace(/[?!.,:*_~'"]+$/, "");
    const open = (trimmed.match(/\(/g) ?? []).length;
    const close = (trimmed.match(/\)/g) ?? []).length;
    const next = trimmed.endsWith(")") && close > open ? trimmed.slice(0, -1) : trimmed;
    if (next === raw) break;
    raw = next;
  }
  if (!/^(?:https?:\/\/|www\.)[^/?#]*[A-Za-z0-9]/.test(raw) && !raw.includes("@")) return undefined;
  const href = token.href.startsWith("mailto:") ? `mailto:${raw}` : raw.startsWith("www.") ? `http://${raw}` : raw;
  return { ...token, raw, text: raw, href, tokens: [{ type: "text", raw, text: raw }] };
}

/** A marked Tokenizer with {@link boundedAutolink}, for `new Lexer({ tokenizer })`. */
export class BoundedAutolinkTokenizer extends Tokenizer {
  override url(src: string): Tokens.Link | undefined {
    return boundedAutolink.call(this, src);
  }
}
