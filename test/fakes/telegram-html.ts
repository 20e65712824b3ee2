/**
 * A strict reading of Telegram's HTML parse mode, for the fake Bot API: returns the visible text
 * (what Telegram shows and counts) or the error Telegram answers ("can't parse entities: …").
 *
 * Rules (Telegram Bot API, formatting options, HTML style; messages as TDLib words them):
 * - tags: b/strong, i/em, u/ins, s/strike/del, tg-spoiler, span class="tg-spoiler", a href, code,
 *   pre, code class="language-…" directly inside pre, blockquote [expandable], tg-emoji; any other
 *   tag → `Unsupported start tag "x" at byte offset N`;
 * - every `<` starts a tag, so a literal one must be `&lt;`; a start tag without `>` →
 *   `Unclosed start tag`; end tags must match the innermost open tag; open tags must be closed;
 * - entities: `&lt; &gt; &amp; &quot;` and numeric ones; another `&` stays a literal `&` (as Telegram does);
 * - nesting (entity rules): nothing inside code or pre except pre's language code, no blockquote
 *   inside a blockquote, no link inside a link. Telegram may repair some of these silently; the fake
 *   refuses them so a renderer that produces them fails its tests.
 */

const TAGS = new Set(["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "tg-spoiler", "span", "a", "code", "pre", "blockquote", "tg-emoji"]);

export type ParsedHtml = { ok: true; text: string } | { ok: false; error: string };

/** Parses `html` as Telegram does in `parse_mode: "HTML"`. Never throws. */
export function parseTelegramHtml(html: string): ParsedHtml {
  const fail = (detail: string): ParsedHtml => ({ ok: false, error: `Bad Request: can't parse entities: ${detail}` });
  const byteOffset = (i: number) => Buffer.byteLength(html.slice(0, i), "utf8");
  const open: { name: string; attrs: Record<string, string> }[] = [];
  let text = "";
  let i = 0;
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === "&") {
      const entity = ENTITY.exec(html.slice(i, i + 12));
      if (entity) {
        text += decodeEntity(entity[1]!);
        i += entity[0].length;
      } else {
        text += "&";
        i++;
      }
      continue;
    }
    if (ch !== "<") {
      text += ch;
      i++;
      continue;
    }
    const close = html.indexOf(">", i);
    if (html[i + 1] === "/") {
      if (close < 0) return fail(`Unclosed end tag at byte offset ${byteOffset(i)}`);
      const name = html.slice(i + 2, close).trim().toLowerCase();
      const top = open.pop();
      if (!top) return fail(`Unexpected end tag at byte offset ${byteOffset(i)}`);
      if (top.name !== name) return fail(`Unmatched end tag at byte offset ${byteOffset(i)}, expected "</${top.name}>", found "</${name}>"`);
      i = close + 1;
      continue;
    }
    const nameMatch = /^<([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(i, i + 40));
    if (!nameMatch) return fail(`Unsupported start tag "" at byte offset ${byteOffset(i)}`);
    const name = nameMatch[1]!.toLowerCase();
    if (!TAGS.has(name)) return fail(`Unsupported start tag "${name}" at byte offset ${byteOffset(i)}`);
    if (close < 0) return fail(`Unclosed start tag at byte offset ${byteOffset(i)}`);
    const attrs = parseAttributes(html.slice(i + nameMatch[0].length, close));
    if (attrs === null) return fail(`Unclosed start tag at byte offset ${byteOffset(i)}`);
    const parent = open[open.length - 1];
    if (parent && (parent.name === "code" || (parent.name === "pre" && name !== "code"))) {
      return fail(`tag "${name}" can't be inside "${parent.name}" at byte offset ${byteOffset(i)}`);
    }
    if (name === "code" && attrs.class !== undefined && parent?.name !== "pre") return fail(`"code" with a language must be inside "pre"`);
    if (name === "blockquote" && open.some((t) => t.name === "blockquote")) return fail(`blockquote can't be nested at byte offset ${byteOffset(i)}`);
    if (name === "a" && open.some((t) => t.name === "a")) return fail(`links can't be nested at byte offset ${byteOffset(i)}`);
    if (name === "span" && attrs.class !== "tg-spoiler") return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(i)}`);
    open.push({ name, attrs });
    i = close + 1;
  }
  const unclosed = open.pop();
  if (unclosed) return fail(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  return { ok: true, text };
}

function parseAttributes(source: string): Record<string, string> | null {
  const attrs: Record<string, string> = {};
  const pattern = /\s*([a-zA-Z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/y;
  let at = 0;
  while (source.slice(at).trim() !== "") {
    pattern.lastIndex = at;
    const m = pattern.exec(source);
    if (!m || m[0].length === 0) return null;
    attrs[m[1]!.toLowerCase()] = decodeAttribute(m[2] ?? m[3] ?? m[4] ?? "");
    at = pattern.lastIndex;
  }
  return attrs;
}

function decodeAttribute(value: string): string {
  return value.replace(ENTITY_GLOBAL, (_, name: string) => decodeEntity(name));
}

const ENTITY = /^&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/;
const ENTITY_GLOBAL = /&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g;

function decodeEntity(name: string): string {
  if (name === "lt") return "<";
  if (name === "gt") return ">";
  if (name === "amp") return "&";
  if (name === "quot") return '"';
  return String.fromCodePoint(name.startsWith("#x") ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10));
}
