import { marked, type Token, type Tokens } from "marked";

/**
 * Markdown → Slack mrkdwn, as a list of chunks that are each safe to cut before and after: no
 * chunk ends inside a link, an `&amp;` entity, a code span, a code block or a bold/italic run
 * (a run too long for one chunk is closed at the cut and reopened in the next chunk).
 *
 * Why our own renderer on `marked`'s lexer: the converters on npm (slackify-markdown 5, the most
 * used) pass raw HTML such as `<NAME>` through unescaped, which Slack then parses as a link, leave
 * `<`/`>` unescaped inside code, and need Node 22; and splitting needs the token structure anyway.
 *
 * Slack rules used (Slack docs, "Formatting text for app surfaces"): `&`, `<`, `>` must be escaped
 * as `&amp;`, `&lt;`, `&gt;` everywhere, code blocks included; bold `*x*`, italic `_x_`, strike
 * `~x~`, code `` `x` ``, preformatted ```` ```x``` ````, quote `> `, links `<url|label>`; there are
 * no headings, tables or nested formatting markers of the same kind.
 */

/** One rendered piece. `sep` is what joins it to the previous chunk when both land in one section. */
export interface MrkdwnChunk {
  text: string;
  sep: "\n\n" | "\n" | " ";
}

/** Escapes Slack's three control characters (Slack docs: "Escaping text"). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A piece of a line: plain text under formatting marks, or an indivisible pre-rendered atom. */
type Run = { kind: "text"; text: string; marks: string } | { kind: "atom"; text: string };
/** One output line: a prefix (bullet, indentation, quote marker) and its runs. */
interface Line {
  prefix: string;
  /** Prefix of continuation chunks when the line is too long for one chunk. */
  contPrefix: string;
  runs: Run[];
}
/** A rendered block: text lines, or a preformatted code block (split by its own rules). */
type Block = { kind: "lines"; lines: Line[] } | { kind: "code"; code: string; prefix: string };

const SAFE_LINK = /^(https?:|mailto:)/i;

/**
 * Renders `markdown` to mrkdwn chunks of at most `maxChunk` characters each (JS string length, which
 * is ≥ Slack's character count, so the limit holds on Slack's side too).
 */
export function renderMrkdwn(markdown: string, maxChunk: number): MrkdwnChunk[] {
  const blocks = renderBlocks(marked.lexer(markdown), "");
  const chunks: MrkdwnChunk[] = [];
  for (const block of blocks) {
    const first = chunks.length;
    if (block.kind === "code") chunks.push(...codeChunks(block.code, block.prefix, maxChunk));
    else for (const line of block.lines) chunks.push(...lineChunks(line, maxChunk));
    if (chunks.length > first && first > 0) chunks[first]!.sep = "\n\n";
  }
  return chunks.filter((c) => c.text.trim() !== "");
}

/** Plain text of markdown (no markers), for notification fallbacks. */
export function plainText(markdown: string): string {
  const out: string[] = [];
  for (const block of renderBlocks(marked.lexer(markdown), "")) {
    if (block.kind === "code") out.push(block.code);
    else for (const line of block.lines) out.push(line.runs.map((r) => (r.kind === "text" ? r.text : atomPlain(r.text))).join(""));
  }
  return out.join("\n").replace(/\s+/g, " ").trim();
}

function atomPlain(atom: string): string {
  const link = /^<[^|>]*\|(.*)>$/.exec(atom);
  if (link) return unescape(link[1]!);
  return unescape(atom.replace(/^<|>$/g, "").replace(/^`|`$/g, ""));
}

function unescape(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

// ---------------------------------------------------------------------------------------------
// Blocks

function renderBlocks(tokens: Token[], prefix: string): Block[] {
  const blocks: Block[] = [];
  for (const token of tokens) blocks.push(...renderBlock(token, prefix));
  return blocks;
}

function renderBlock(token: Token, prefix: string): Block[] {
  switch (token.type) {
    case "space":
    case "def":
      return [];
    case "paragraph":
    case "text": {
      const t = token as Tokens.Paragraph | Tokens.Text;
      const runs = "tokens" in t && t.tokens ? inlineRuns(t.tokens, "") : [{ kind: "text" as const, text: t.text, marks: "" }];
      return [{ kind: "lines", lines: toLines(runs, prefix, prefix) }];
    }
    case "heading":
      return [{ kind: "lines", lines: toLines(inlineRuns((token as Tokens.Heading).tokens, "*"), prefix, prefix) }];
    case "code":
      return [{ kind: "code", code: (token as Tokens.Code).text, prefix }];
    case "hr":
      return [{ kind: "lines", lines: [{ prefix, contPrefix: prefix, runs: [{ kind: "text", text: "──────────", marks: "" }] }] }];
    case "blockquote":
      return renderBlocks((token as Tokens.Blockquote).tokens, `${prefix}> `);
    case "list":
      return [{ kind: "lines", lines: listLines(token as Tokens.List, prefix) }];
    case "table":
      return [{ kind: "code", code: tableText(token as Tokens.Table), prefix }];
    case "html":
      return [{ kind: "lines", lines: toLines([{ kind: "text", text: (token as Tokens.HTML).text.trimEnd(), marks: "" }], prefix, prefix) }];
    default: {
      const raw = (token as { raw?: string }).raw ?? "";
      return raw.trim() ? [{ kind: "lines", lines: toLines([{ kind: "text", text: raw.trimEnd(), marks: "" }], prefix, prefix) }] : [];
    }
  }
}

function listLines(list: Tokens.List, prefix: string): Line[] {
  const lines: Line[] = [];
  const start = typeof list.start === "number" ? list.start : 1;
  list.items.forEach((item, i) => {
    let bullet = list.ordered ? `${start + i}. ` : "• ";
    if (item.task) bullet += item.checked ? "☑ " : "☐ ";
    const indent = `${prefix}${" ".repeat(4)}`;
    const itemTokens = item.tokens.filter((t) => t.type !== "checkbox");
    let firstLine = true;
    for (const block of renderBlocks(itemTokens, indent)) {
      if (block.kind === "code") {
        // A code block inside a list item becomes an indented monospace line per code line.
        for (const codeLine of block.code.split("\n")) {
          lines.push({ prefix: firstLine ? `${prefix}${bullet}` : indent, contPrefix: indent, runs: [{ kind: "atom", text: codeSpan(codeLine) }] });
          firstLine = false;
        }
        continue;
      }
      for (const line of block.lines) {
        lines.push(firstLine ? { ...line, prefix: `${prefix}${bullet}` } : line);
        firstLine = false;
      }
    }
    if (firstLine) lines.push({ prefix: `${prefix}${bullet}`, contPrefix: indent, runs: [] });
  });
  return lines;
}

/** Tables have no mrkdwn form: render them as aligned monospace text (cells as plain text). */
function tableText(table: Tokens.Table): string {
  const rows = [table.header.map((c) => c.text), ...table.rows.map((r) => r.map((c) => c.text))];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? "").length)));
  const fmt = (r: string[]) => r.map((c, col) => c.padEnd(widths[col] ?? 0)).join(" | ").trimEnd();
  return [fmt(rows[0]!), widths.map((w) => "-".repeat(Math.max(w, 1))).join("-|-"), ...rows.slice(1).map(fmt)].join("\n");
}

// ---------------------------------------------------------------------------------------------
// Inline

function inlineRuns(tokens: Token[] | undefined, marks: string): Run[] {
  const runs: Run[] = [];
  for (const token of tokens ?? []) {
    switch (token.type) {
      case "text": {
        const t = token as Tokens.Text;
        if (t.tokens && t.tokens.length > 0) runs.push(...inlineRuns(t.tokens, marks));
        else runs.push({ kind: "text", text: t.text, marks });
        break;
      }
      case "escape":
      case "html":
        runs.push({ kind: "text", text: (token as Tokens.Escape).text, marks });
        break;
      case "strong":
        runs.push(...inlineRuns((token as Tokens.Strong).tokens, addMark(marks, "*")));
        break;
      case "em":
        runs.push(...inlineRuns((token as Tokens.Em).tokens, addMark(marks, "_")));
        break;
      case "del":
        runs.push(...inlineRuns((token as Tokens.Del).tokens, addMark(marks, "~")));
        break;
      case "codespan":
        runs.push({ kind: "atom", text: codeSpan((token as Tokens.Codespan).text) });
        break;
      case "br":
        runs.push({ kind: "text", text: "\n", marks: "" });
        break;
      case "link":
      case "image": {
        const t = token as Tokens.Link | Tokens.Image;
        const label = t.type === "image" ? t.text : plainOf(t.tokens) || t.text;
        if (!SAFE_LINK.test(t.href)) runs.push({ kind: "text", text: label, marks });
        else runs.push({ kind: "atom", text: linkAtom(t.href, label) });
        break;
      }
      default:
        runs.push({ kind: "text", text: (token as { raw?: string }).raw ?? "", marks });
    }
  }
  return runs;
}

function addMark(marks: string, mark: string): string {
  return marks.includes(mark) ? marks : marks + mark;
}

function plainOf(tokens: Token[] | undefined): string {
  return inlineRuns(tokens, "")
    .map((r) => (r.kind === "text" ? r.text : atomPlain(r.text)))
    .join("");
}

/** Slack link `<url|label>`: `|` and `>` cannot appear in the label, control characters are escaped. */
function linkAtom(href: string, label: string): string {
  const url = escapeMrkdwn(href.replace(/\|/g, "%7C"));
  const text = label.replace(/[|\n]/g, " ").trim();
  return !text || text === href ? `<${url}>` : `<${url}|${escapeMrkdwn(text)}>`;
}

/** Inline code: Slack code spans cannot contain backticks or newlines. */
function codeSpan(code: string): string {
  const text = code.replace(/`/g, "ˋ").replace(/\n/g, " ");
  return text.trim() ? `\`${escapeMrkdwn(text)}\`` : escapeMrkdwn(text);
}

/** Cuts runs at newlines into lines (mrkdwn formatting never spans a newline). */
function toLines(runs: Run[], prefix: string, contPrefix: string): Line[] {
  const lines: Line[] = [{ prefix, contPrefix, runs: [] }];
  for (const run of runs) {
    if (run.kind === "atom") {
      lines.at(-1)!.runs.push(run);
      continue;
    }
    run.text.split("\n").forEach((part, i) => {
      if (i > 0) lines.push({ prefix: contPrefix, contPrefix, runs: [] });
      if (part) lines.at(-1)!.runs.push({ kind: "text", text: part, marks: run.marks });
    });
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Rendering and cutting

/** Renders a text run: markers hug the words (Slack ignores `* x *`), surrounding spaces stay outside. */
function renderRun(run: Run): string {
  if (run.kind === "atom") return run.text;
  if (!run.marks || !run.text.trim()) return escapeMrkdwn(run.text);
  const lead = /^\s*/.exec(run.text)![0];
  const trail = /\s*$/.exec(run.text)![0];
  const core = run.text.slice(lead.length, run.text.length - trail.length);
  return `${lead}${run.marks}${escapeMrkdwn(core)}${[...run.marks].reverse().join("")}${trail}`;
}

function lineChunks(line: Line, max: number): MrkdwnChunk[] {
  const whole = line.prefix + line.runs.map(renderRun).join("");
  if (whole.length <= max) return [{ text: whole.trimEnd(), sep: "\n" }];
  // Too long: cut between words, atoms whole, marks closed and reopened.
  const pieces: Run[] = [];
  for (const run of line.runs) {
    if (run.kind === "atom") pieces.push(...splitAtom(run.text, max - line.contPrefix.length - 1));
    else for (const word of run.text.match(/\S+\s*|\s+/g) ?? []) pieces.push(...splitWord({ kind: "text", text: word, marks: run.marks }, max - line.contPrefix.length - 8));
  }
  const chunks: MrkdwnChunk[] = [];
  let current: Run[] = [];
  let prefix = line.prefix;
  const render = (runs: Run[]) => prefix + runs.map(renderRun).join("");
  for (const piece of pieces) {
    const merged = mergeRun(current, piece);
    if (current.length > 0 && render(merged).trimEnd().length > max) {
      chunks.push({ text: render(current).trimEnd(), sep: chunks.length === 0 ? "\n" : continuationSep(line) });
      prefix = line.contPrefix.includes(">") ? line.contPrefix : "";
      current = mergeRun([], { ...piece, text: piece.kind === "text" ? piece.text.trimStart() : piece.text } as Run);
    } else current = merged;
  }
  if (current.length > 0) chunks.push({ text: render(current).trimEnd(), sep: chunks.length === 0 ? "\n" : continuationSep(line) });
  return chunks;
}

/** A quoted line continues on a new quoted line; any other line continues after a space. */
function continuationSep(line: Line): MrkdwnChunk["sep"] {
  return line.contPrefix.includes(">") ? "\n" : " ";
}

/** Appends a run, merging it into the previous text run when the marks are equal. */
function mergeRun(runs: Run[], run: Run): Run[] {
  const last = runs.at(-1);
  if (last?.kind === "text" && run.kind === "text" && last.marks === run.marks) return [...runs.slice(0, -1), { ...last, text: last.text + run.text }];
  return [...runs, run];
}

/** A single word longer than a chunk (a URL-like blob): cut it, never inside an `&…;` entity. */
function splitWord(run: Run & { kind: "text" }, max: number, gap = " "): Run[] {
  if (escapeMrkdwn(run.text).length <= max) return [run];
  const out: Run[] = [];
  let rest = run.text;
  while (rest.length > 0) {
    let n = Math.min(rest.length, max);
    while (n > 1 && escapeMrkdwn(rest.slice(0, n)).length > max) n--;
    out.push({ ...run, text: rest.slice(0, n) + (n < rest.length ? gap : "") });
    rest = rest.slice(n);
  }
  return out;
}

/** An atom longer than a chunk: a code span is cut into several spans, a link falls back to its URL text. */
function splitAtom(atom: string, max: number): Run[] {
  if (atom.length <= max) return [{ kind: "atom", text: atom }];
  const code = /^`(.*)`$/s.exec(atom);
  const raw = code ? unescape(code[1]!) : unescape(atom.replace(/^<([^|>]*).*>$/s, "$1"));
  return splitWord({ kind: "text", text: raw, marks: "" }, max - 2).map((r) =>
    code ? { kind: "atom" as const, text: codeSpan((r as { text: string }).text.trimEnd()) + " " } : r,
  );
}

/** A code block as fenced chunks of whole lines (a single over-long line is cut); continuation keeps the fence. */
function codeChunks(code: string, prefix: string, max: number): MrkdwnChunk[] {
  const fence = (body: string) => ["```", ...escapeMrkdwn(body).split("\n"), "```"].map((l) => prefix + l).join("\n");
  const budget = max - fence("").length;
  const lines: string[] = [];
  for (const line of code.split("\n")) {
    if (escapeMrkdwn(line).length <= budget) lines.push(line);
    else for (const part of splitWord({ kind: "text", text: line, marks: "" }, budget, "")) lines.push((part as { text: string }).text);
  }
  const chunks: MrkdwnChunk[] = [];
  let current: string[] = [];
  for (const line of lines) {
    if (current.length > 0 && fence([...current, line].join("\n")).length > max) {
      chunks.push({ text: fence(current.join("\n")), sep: "\n" });
      current = [];
    }
    current.push(line);
  }
  if (current.length > 0 || chunks.length === 0) chunks.push({ text: fence(current.join("\n")), sep: "\n" });
  return chunks;
}
