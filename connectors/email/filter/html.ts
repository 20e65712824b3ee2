/**
 * HTML → text for the mail-safety filter, with `html-to-text` (htmlparser2 underneath: linear,
 * entities decoded), plus where each link's anchor text is and which href it has, so the link
 * rules can read "Reset your password" on a button whose href is an opaque click tracker.
 *
 * Layout choices: no word-wrap (a code or URL is never broken across lines), headings keep their
 * case, table cells are separated by a space and rows by a line break (a code split over cells
 * reads "4 8 2 9 1 7", which the code rules join), images show their alt text only (never `src`:
 * tracking pixels), `<head>`, `<style>`, `<script>` are skipped. Limits: input capped at
 * `maxChars` characters; tags nested deeper than 200 are dropped (their text kept); at most
 * 20,000 children per element are converted (the rest is cut, marked "…").
 *
 * Anchors are marked in html-to-text's output with private-use characters, which are stripped
 * from the mail first (raw and as numeric entities) so a mail cannot forge them.
 */
import { compile, type FormatCallback } from "html-to-text";
import { cleanText, isPrivateUse } from "./normalize.js";

/** A link in the converted text: its anchor text is text[start, end). */
export interface Anchor {
  start: number;
  end: number;
  href: string;
}

/** Converted text (already passed through `cleanText`) and its anchors, in text order. */
export interface HtmlText {
  text: string;
  anchors: Anchor[];
}

const OPEN = "\uE000";
const CLOSE = "\uE001";
const END = "\uE002";
const DIGIT0 = 0xe010;

interface Meta {
  hrefs: string[];
}

function encodeId(id: number): string {
  return [...String(id)].map((d) => String.fromCharCode(DIGIT0 + Number(d))).join("");
}

/** An element's attribute as a string ("" when absent). html-to-text types `attribs` loosely. */
function attribute(elem: { attribs?: unknown }, name: string): string {
  const attribs = elem.attribs as Record<string, unknown> | undefined;
  const value = attribs?.[name];
  return typeof value === "string" ? value.trim() : "";
}

const anchorFormatter: FormatCallback = (elem, walk, builder) => {
  const href = attribute(elem, "href");
  const meta = (builder as unknown as { metadata: Meta }).metadata;
  if (!href || href.startsWith("#")) {
    walk(elem.children, builder);
    return;
  }
  const id = meta.hrefs.push(href) - 1;
  builder.addLiteral(OPEN + encodeId(id) + END);
  walk(elem.children, builder);
  builder.addLiteral(CLOSE + encodeId(id) + END);
};

const imageFormatter: FormatCallback = (elem, _walk, builder) => {
  const alt = attribute(elem, "alt");
  if (alt) builder.addInline(alt);
};

const stripPrivateUse = (s: string): string => s.replace(/[\uE000-\uF8FF]/g, "");

function converterFor(maxChars: number): (html: string, meta: Meta) => string {
  return compile({
    wordwrap: false,
    // html-to-text accepts a function here (its types only know the dictionary form).
    encodeCharacters: stripPrivateUse as unknown as Record<string, string>,
    formatters: { familiarAnchor: anchorFormatter, familiarImage: imageFormatter },
    limits: { maxInputLength: maxChars, maxDepth: MAX_HTML_DEPTH + 8, maxChildNodes: 20_000, ellipsis: "…" },
    selectors: [
      { selector: "a", format: "familiarAnchor" },
      { selector: "img", format: "familiarImage" },
      { selector: "head", format: "skip" },
      { selector: "style", format: "skip" },
      { selector: "script", format: "skip" },
      { selector: "title", format: "skip" },
      ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: "table", format: "block" },
      { selector: "tr", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
      { selector: "td", format: "inlineSurround", options: { suffix: " " } },
      { selector: "th", format: "inlineSurround", options: { suffix: " " } },
    ],
  });
}

const converters = new Map<number, (html: string, meta: Meta) => string>();

/** Numeric character references to private-use code points (U+E000–U+F8FF), any leading zeros. */
const privateUseEntity = /&#(?:[xX]0*(?:[eE][0-9a-fA-F]{3}|[fF][0-8][0-9a-fA-F]{2})|0*(?:5734[4-9]|573[5-9]\d|57[4-9]\d\d|5[89]\d{3}|6[0-2]\d{3}|63[0-6]\d\d|637[0-3]\d|6374[0-3]));?/g;

const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]);
/** Deepest element nesting kept; deeper tags are dropped (their text stays). */
export const MAX_HTML_DEPTH = 200;

/**
 * Drops tags nested deeper than `maxDepth` (keeping all text), in one linear pass, so the HTML
 * parser never builds a pathologically deep tree (htmlparser2 + html-to-text slow down badly
 * beyond ~20,000 levels). Comments are kept whole.
 */
export function flattenDeepHtml(html: string, maxDepth = MAX_HTML_DEPTH): string {
  const out: string[] = [];
  let depth = 0;
  let i = 0;
  let nextClose = -1;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt < 0) break;
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      const stop = end < 0 ? html.length : end + 3;
      out.push(html.slice(i, stop));
      i = stop;
      continue;
    }
    if (nextClose < lt) nextClose = html.indexOf(">", lt);
    if (nextClose < 0) break;
    const tag = html.slice(lt, nextClose + 1);
    out.push(html.slice(i, lt));
    i = nextClose + 1;
    const m = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/.exec(tag);
    if (!m) {
      out.push(tag);
      continue;
    }
    const closing = m[1] === "/";
    const isVoid = VOID.has(m[2]!.toLowerCase()) || tag.endsWith("/>");
    if (closing) {
      if (depth <= maxDepth) out.push(tag);
      depth = Math.max(0, depth - 1);
    } else if (isVoid) {
      if (depth < maxDepth) out.push(tag);
    } else {
      depth++;
      if (depth <= maxDepth) out.push(tag);
    }
  }
  out.push(html.slice(i));
  return out.join("");
}

/** Reads the marker id after position `i` (an OPEN/CLOSE char); returns [id, next index] or null. */
function readId(text: string, i: number): [number, number] | null {
  let id = 0;
  let j = i + 1;
  for (; j < text.length && j < i + 9; j++) {
    const c = text.charCodeAt(j);
    if (c === END.charCodeAt(0)) return j > i + 1 ? [id, j + 1] : null;
    if (c < DIGIT0 || c > DIGIT0 + 9) return null;
    id = id * 10 + (c - DIGIT0);
  }
  return null;
}

/**
 * Converts `html` (at most `maxChars` characters are read) to clean text and its anchors. Never
 * throws for bad HTML (htmlparser2 is forgiving); an anchor whose marks went missing is dropped
 * from `anchors` but its href is still in `hrefs`, so the caller can judge every link.
 */
export function htmlToText(html: string, maxChars: number): HtmlText & { hrefs: string[] } {
  let convert = converters.get(maxChars);
  if (!convert) {
    convert = converterFor(maxChars);
    converters.set(maxChars, convert);
  }
  const meta: Meta = { hrefs: [] };
  const input = flattenDeepHtml(stripPrivateUse(html.length > maxChars ? html.slice(0, maxChars) : html).replace(privateUseEntity, ""));
  const raw = convert(input, meta);
  const marked = cleanKeepingMarks(raw);
  let text = "";
  const anchors: Anchor[] = [];
  const open = new Map<number, number>();
  let from = 0;
  for (let i = 0; i < marked.length; i++) {
    const c = marked.charCodeAt(i);
    if (!isPrivateUse(c)) continue;
    text += marked.slice(from, i);
    from = i + 1;
    if (c !== OPEN.charCodeAt(0) && c !== CLOSE.charCodeAt(0)) continue;
    const read = readId(marked, i);
    if (!read) continue;
    const [id, next] = read;
    if (c === OPEN.charCodeAt(0)) open.set(id, text.length);
    else if (open.has(id) && meta.hrefs[id] !== undefined) {
      anchors.push({ start: open.get(id)!, end: text.length, href: meta.hrefs[id] });
      open.delete(id);
    }
    i = next - 1;
    from = next;
  }
  text += marked.slice(from);
  return { text, anchors: anchors.sort((a, b) => a.start - b.start), hrefs: meta.hrefs };
}

/** `cleanText` without removing the filter's own marks (U+E000–U+E01F). */
function cleanKeepingMarks(text: string): string {
  const parts = text.split(/([\uE000-\uE01F]+)/);
  return parts.map((p, k) => (k % 2 === 1 ? p : cleanText(p))).join("");
}
