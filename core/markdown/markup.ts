import { sameFormat, type Format, type Run } from "./layout.js";

/**
 * Runs → text in a markdown-like markup (Discord markdown, WhatsApp formatting, Slack mrkdwn, plain
 * text). A `MarkupDialect` says how each format is written; this module does the rest the same way
 * for all of them:
 * - inline formats (bold, italic, strike, code, links) are opened and closed within one line, their
 *   markers hugging the words (leading and trailing spaces move outside: `* x *` formats nothing on
 *   WhatsApp or Slack), nested in the order the runs carry them;
 * - a code block (`pre`) is written whole by the dialect, with its fences;
 * - quoted lines start with the dialect's quote prefix, heading lines with its heading prefix.
 * Every marker opened in a part is closed in it, so each part is well-formed on its own.
 */
export interface MarkupDialect {
  /** Escapes characters the model typed (`syntax` = characters the layout added). `lineStart`: the text begins a line. */
  text(text: string, context: { syntax: boolean; lineStart: boolean }): string;
  /** Open and close markers of bold, italic, strike; `null` = not shown (the text stays). */
  strong: readonly [string, string] | null;
  emphasis: readonly [string, string] | null;
  strike: readonly [string, string] | null;
  /** An inline code span with raw `code`. */
  code(code: string): string;
  /** A link with its label already written (`label`) and as plain characters (`plain`). */
  link(href: string, label: string, plain: string): string;
  /** Whether formats inside a link are written (Slack's `<url|label>` takes plain text only). */
  formatsInLinks: boolean;
  /** A code block with raw `code`; `prefix` is what each of its lines must start with (a quote's). */
  pre(language: string | null, code: string, prefix: string): string;
  /** Line prefix inside a quote (e.g. `> `), and of a heading line of `level` (e.g. `# `). */
  quotePrefix: string;
  headingPrefix(level: number): string;
}

/** A node of one line's inline tree. */
interface Node {
  format: Format | null;
  children: (Node | Run)[];
}

const INLINE = new Set<Format["kind"]>(["strong", "emphasis", "strike", "code", "link"]);

/** Writes `runs` in `dialect`. Deterministic; never throws. */
export function writeMarkup(runs: readonly Run[], dialect: MarkupDialect): string {
  let out = "";
  let line: Run[] = [];
  let lineHasText = false;
  let lastNewlineQuoted = false;

  const flush = (): void => {
    if (line.length === 0) return;
    out += writeLine(line, dialect, !lineHasText);
    lineHasText = true;
    line = [];
  };

  for (const run of runs) {
    const pre = run.formats.find((f) => f.kind === "pre");
    const quoted = run.formats.some((f) => f.kind === "quote");
    if (pre && pre.kind === "pre") {
      flush();
      const prefix = quoted ? dialect.quotePrefix : "";
      out += (lineHasText ? "" : prefix) + dialect.pre(pre.language, run.text, prefix);
      lineHasText = true;
      continue;
    }
    run.text.split("\n").forEach((piece, i) => {
      if (i > 0) {
        flush();
        // A blank line inside a quote stays inside it.
        if (!lineHasText && quoted && lastNewlineQuoted) out += dialect.quotePrefix.trimEnd();
        out += "\n";
        lineHasText = false;
        lastNewlineQuoted = quoted;
      }
      if (piece) line.push({ ...run, text: piece });
    });
  }
  flush();
  return out;
}

/** One line (no newlines in its runs): block prefixes, then the inline tree. */
function writeLine(runs: readonly Run[], dialect: MarkupDialect, lineStart: boolean): string {
  let prefix = "";
  let prefixed = false;
  let body = "";
  let start = 0;
  // Prefixes go before the first run that carries the quote / heading (normally the line's first).
  const firstBlock = runs.findIndex((r) => r.formats.some((f) => f.kind === "quote" || f.kind === "heading"));
  if (firstBlock >= 0) {
    const formats = runs[firstBlock]!.formats;
    if (formats.some((f) => f.kind === "quote")) prefix += dialect.quotePrefix;
    const heading = formats.find((f) => f.kind === "heading");
    if (heading && heading.kind === "heading") prefix += dialect.headingPrefix(heading.level);
    body += writeInline(runs.slice(0, firstBlock), dialect, lineStart);
    start = firstBlock;
    prefixed = true;
  }
  const rest = writeInline(runs.slice(start), dialect, lineStart && body === "");
  return prefixed ? body + prefix + rest : rest;
}

function writeInline(runs: readonly Run[], dialect: MarkupDialect, lineStart: boolean): string {
  if (runs.length === 0) return "";
  const root: Node = { format: null, children: [] };
  const path: Node[] = [root];
  for (const run of runs) {
    const formats = inlineFormats(run.formats, dialect);
    let common = 0;
    while (common < path.length - 1 && common < formats.length && sameFormat(path[common + 1]!.format!, formats[common]!)) common++;
    path.length = common + 1;
    for (let k = common; k < formats.length; k++) {
      const node: Node = { format: formats[k]!, children: [] };
      path.at(-1)!.children.push(node);
      path.push(node);
    }
    path.at(-1)!.children.push(run);
  }
  const state = { lineStart };
  return writeNode(root, dialect, state);
}

/** The inline formats of a run that the dialect writes, outermost first. */
function inlineFormats(formats: readonly Format[], dialect: MarkupDialect): Format[] {
  const out: Format[] = [];
  for (const f of formats) {
    if (!INLINE.has(f.kind)) continue;
    if (!dialect.formatsInLinks && out.some((o) => o.kind === "link")) continue;
    out.push(f);
    if (f.kind === "code") break; // nothing is formatted inside code
  }
  return out;
}

function writeNode(node: Node, dialect: MarkupDialect, state: { lineStart: boolean }): string {
  const format = node.format;
  if (format?.kind === "code") {
    const code = plainOf(node);
    state.lineStart = false;
    return hug(code, (core) => dialect.code(core));
  }
  let inner = "";
  for (const child of node.children) {
    if ("format" in child) inner += writeNode(child, dialect, state);
    else {
      inner += dialect.text(child.text, { syntax: Boolean(child.syntax), lineStart: state.lineStart });
      if (child.text) state.lineStart = false;
    }
  }
  if (!format) return inner;
  if (format.kind === "link") return dialect.link(format.href, inner, plainOf(node));
  const markers = format.kind === "strong" ? dialect.strong : format.kind === "emphasis" ? dialect.emphasis : format.kind === "strike" ? dialect.strike : null;
  return markers ? hug(inner, (core) => `${markers[0]}${core}${markers[1]}`) : inner;
}

/** Wraps the text of `s` without its leading and trailing whitespace; whitespace-only text is left as it is. */
function hug(s: string, wrap: (core: string) => string): string {
  // Scanned by hand: `/\s*$/` backtracks at every position of a long run without trailing spaces.
  let from = 0;
  while (from < s.length && /\s/.test(s[from]!)) from++;
  if (from === s.length) return s;
  let to = s.length;
  while (/\s/.test(s[to - 1]!)) to--;
  return s.slice(0, from) + wrap(s.slice(from, to)) + s.slice(to);
}

function plainOf(node: Node): string {
  return node.children.map((c) => ("format" in c ? plainOf(c) : c.text)).join("");
}
