import { parseMarkdown } from "./ir.js";
import { layout, type Laid, type LayoutRules, type Run } from "./layout.js";
import { writeMarkup, type MarkupDialect } from "./markup.js";
import { splitLaid, type PartRenderer } from "./split.js";

/**
 * Markdown → parts for one platform: parse once into the IR, lay it out by the platform's rules,
 * split by what the platform counts, render each part with the platform's emitter. The pieces an
 * adapter supplies are small: its `LayoutRules` and a `render(runs)` giving payload and size.
 */

/** A platform's emitter: how it lays text out, and how it renders (and counts) a part's runs. */
export interface Emitter<B> extends PartRenderer<B> {
  rules: LayoutRules;
}

/** One rendered part: the platform payload and the part as plain text (links with their address). */
export interface RenderedPart<B> {
  body: B;
  plain: string;
}

/**
 * Renders `markdown` with `emitter` into parts of at most `limit` (as the emitter counts), in order.
 * If a part cannot be made small enough with clickable links (an address longer than the limit),
 * links are laid out as `label (address)` text instead. No parts when nothing visible remains.
 * Throws RangeError for a limit below 1.
 */
export function renderMarkdown<B>(markdown: string, emitter: Emitter<B>, limit: number): RenderedPart<B>[] {
  const blocks = parseMarkdown(markdown);
  let parts = splitLaid(layout(blocks, emitter.rules), limit, emitter);
  if (parts.some((part) => part.rendered.size > limit)) {
    // A link whose address alone is longer than a part cannot be cut as a link: show it as text, which can.
    parts = splitLaid(layout(blocks, { ...emitter.rules, linkable: () => false }), limit, emitter);
  }
  return parts.map((part) => ({ body: part.rendered.body, plain: plainText(part.runs) }));
}

/**
 * Splits `text` exactly as typed (no markdown read) into parts of at most `limit` as `render`
 * counts them, preferring blank lines, then line breaks, then spaces. Used for plain style: the
 * fallback after a platform refused a formatted payload.
 */
export function renderPlain<B>(text: string, render: (text: string) => { body: B; size: number }, limit: number): RenderedPart<B>[] {
  const laid: Laid = { runs: text ? [{ text, formats: [] }] : [], text, blockBreaks: [] };
  for (const match of text.matchAll(/\n[ \t]*\n/g)) laid.blockBreaks.push(match.index);
  return splitLaid(laid, limit, { render: (runs) => render(runs.map((r) => r.text).join("")) }).map((part) => ({
    body: part.rendered.body,
    plain: part.runs.map((r) => r.text).join(""),
  }));
}

/** Plain text: no markers; a link shows its label and, when different, its address; quoted lines keep `> `. */
export const PLAIN: MarkupDialect = {
  text: (text) => text,
  strong: null,
  emphasis: null,
  strike: null,
  code: (code) => code,
  link: (href, label, plain) => (plain.trim() === href || `mailto:${plain.trim()}` === href ? label : `${label} (${href})`),
  formatsInLinks: true,
  pre: (_language, code, prefix) => code.split("\n").join(`\n${prefix}`),
  quotePrefix: "> ",
  headingPrefix: () => "",
};

/** The runs as plain text (see `PLAIN`). */
export function plainText(runs: readonly Run[]): string {
  return writeMarkup(runs, PLAIN);
}
