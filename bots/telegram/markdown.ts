import { Lexer, type Token, type Tokens } from "marked";

/**
 * Markdown → formatted runs: the model's markdown, parsed by marked's lexer, flattened into plain
 * text runs that each carry the Telegram formats around them. Runs are what `splitRuns` cuts by
 * visible length and `runsToHtml` serializes; keeping text and formats apart is what lets a split
 * never land inside a tag.
 *
 * Telegram Bot API (formatting options): bold, italic, underline, strikethrough and spoiler may nest
 * in anything except pre and code; blockquotes cannot nest; all other entities (a, code, pre) cannot
 * contain each other. The renderer only produces combinations inside those rules.
 */

/** One Telegram HTML format. `pre` carries the code block's language, `a` its target URL. */
export type Format =
  | { kind: "b" | "i" | "u" | "s" | "code" | "blockquote" | "tg-spoiler" }
  | { kind: "pre"; language: string | null }
  | { kind: "a"; href: string };

/** Plain (unescaped) text shown with `formats` applied, outermost first. */
export interface Run {
  text: string;
  formats: readonly Format[];
}

/** What headings, rules and list items become in a messenger without block elements. */
export const HORIZONTAL_RULE = "──────────";
const BULLET = "•";
const INDENT = "   ";

/** URL schemes Telegram accepts in `<a href>`; anything else is shown as text. */
const LINK_SCHEME = /^(https?|tg|mailto):/i;

/** Whether two formats are the same tag with the same attributes. */
export function sameFormat(a: Format, b: Format): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "a" && b.kind === "a") return a.href === b.href;
  if (a.kind === "pre" && b.kind === "pre") return a.language === b.language;
  return true;
}

/** Collects runs, merging neighbours with identical formats. */
class RunWriter {
  readonly runs: Run[] = [];

  push(text: string, formats: readonly Format[]): void {
    if (text === "") return;
    const last = this.runs[this.runs.length - 1];
    if (last && last.formats.length === formats.length && last.formats.every((f, i) => sameFormat(f, formats[i]!))) {
      last.text += text;
    } else {
      this.runs.push({ text, formats });
    }
  }

}

/** Where content sits: the formats around it, outermost first. */
interface Scope {
  formats: readonly Format[];
}

const has = (scope: Scope, kind: Format["kind"]) => scope.formats.some((f) => f.kind === kind);
const within = (scope: Scope, format: Format): Scope => ({ formats: [...scope.formats, format] });

/**
 * Parses `markdown` (GitHub-flavoured, as marked reads it) into runs. Headings become bold lines,
 * lists become bullet or numbered lines (nested lists indented), horizontal rules a line of `─`,
 * tables lines of cells joined by ` | `, raw HTML is shown as the literal text it is. Blocks are
 * separated by one blank line. Never throws: any input renders to something.
 */
export function markdownToRuns(markdown: string): Run[] {
  const writer = new RunWriter();
  blocks(writer, Lexer.lex(markdown), { formats: [] }, "");
  return writer.runs;
}

function blocks(w: RunWriter, tokens: readonly Token[], scope: Scope, indent: string): void {
  let first = true;
  for (const token of tokens) {
    if (token.type === "space" || token.type === "def") continue;
    const rendered = new RunWriter();
    block(rendered, token, scope, indent);
    if (rendered.runs.length === 0) continue; // a block that shows nothing gets no blank line either
    if (!first) w.push("\n\n", scope.formats);
    for (const run of rendered.runs) w.push(run.text, run.formats);
    first = false;
  }
}

function block(w: RunWriter, token: Token, scope: Scope, indent: string): void {
  switch (token.type) {
    case "heading":
      w.push(indent, scope.formats);
      inline(w, (token as Tokens.Heading).tokens, within(scope, { kind: "b" }));
      return;
    case "paragraph":
      w.push(indent, scope.formats);
      inline(w, (token as Tokens.Paragraph).tokens, scope);
      return;
    case "hr":
      w.push(indent + HORIZONTAL_RULE, scope.formats);
      return;
    case "code": {
      const code = token as Tokens.Code;
      // Telegram: only bold-like entities may contain pre; a code block in a quote is shown as text.
      const inside = has(scope, "blockquote");
      const language = code.lang && /^[\w#+.-]{1,32}$/.test(code.lang) ? code.lang : null;
      w.push(code.text, inside ? scope.formats : [...scope.formats, { kind: "pre", language }]);
      return;
    }
    case "blockquote":
      blocks(w, (token as Tokens.Blockquote).tokens, has(scope, "blockquote") ? scope : within(scope, { kind: "blockquote" }), indent);
      return;
    case "list":
      list(w, token as Tokens.List, scope, indent);
      return;
    case "table":
      table(w, token as Tokens.Table, scope, indent);
      return;
    case "html":
      w.push(indent + (token as Tokens.HTML).text.trimEnd(), scope.formats);
      return;
    default:
      if ("tokens" in token && Array.isArray(token.tokens)) inline(w, token.tokens, scope);
      else if ("text" in token && typeof token.text === "string") w.push(token.text, scope.formats);
  }
}

function list(w: RunWriter, token: Tokens.List, scope: Scope, indent: string): void {
  const start = typeof token.start === "number" ? token.start : 1;
  token.items.forEach((item, index) => {
    if (index > 0) w.push(token.loose ? "\n\n" : "\n", scope.formats);
    const marker = token.ordered ? `${start + index}.` : BULLET;
    w.push(`${indent}${marker} `, scope.formats);
    let firstPart = true;
    for (const part of item.tokens) {
      if (part.type === "space") continue;
      if (part.type === "checkbox") {
        w.push((part as Tokens.Checkbox).checked ? "☑ " : "☐ ", scope.formats);
        continue;
      }
      if (part.type === "list") {
        w.push("\n", scope.formats);
        list(w, part as Tokens.List, scope, indent + INDENT);
      } else {
        if (!firstPart) w.push(token.loose ? "\n\n" : "\n", scope.formats);
        block(w, part, scope, firstPart ? "" : indent + INDENT);
      }
      firstPart = false;
    }
  });
}

function table(w: RunWriter, token: Tokens.Table, scope: Scope, indent: string): void {
  const row = (cells: Tokens.TableCell[], cellScope: Scope) => {
    w.push(indent, scope.formats);
    cells.forEach((cell, i) => {
      if (i > 0) w.push(" | ", scope.formats);
      inline(w, cell.tokens, cellScope);
    });
  };
  row(token.header, within(scope, { kind: "b" }));
  for (const cells of token.rows) {
    w.push("\n", scope.formats);
    row(cells, scope);
  }
}

function inline(w: RunWriter, tokens: readonly Token[], scope: Scope): void {
  for (const token of tokens) {
    switch (token.type) {
      case "strong":
        inline(w, (token as Tokens.Strong).tokens, within(scope, { kind: "b" }));
        break;
      case "em":
        inline(w, (token as Tokens.Em).tokens, within(scope, { kind: "i" }));
        break;
      case "del":
        inline(w, (token as Tokens.Del).tokens, within(scope, { kind: "s" }));
        break;
      case "codespan": {
        // Telegram: code cannot sit inside a link; there it is plain text.
        const text = (token as Tokens.Codespan).text;
        w.push(text, has(scope, "a") ? scope.formats : [...scope.formats, { kind: "code" }]);
        break;
      }
      case "br":
        w.push("\n", scope.formats);
        break;
      case "link":
      case "image":
        link(w, token as Tokens.Link | Tokens.Image, scope);
        break;
      case "html":
      case "escape":
      case "text":
        if (token.type === "text" && "tokens" in token && token.tokens) inline(w, token.tokens, scope);
        else w.push((token as Tokens.Text).text, scope.formats);
        break;
      default:
        if ("tokens" in token && Array.isArray(token.tokens)) inline(w, token.tokens, scope);
        else if ("text" in token && typeof token.text === "string") w.push(token.text, scope.formats);
    }
  }
}

function link(w: RunWriter, token: Tokens.Link | Tokens.Image, scope: Scope): void {
  const label: Token[] = token.tokens.length > 0 ? token.tokens : [{ type: "text", raw: token.href, text: token.type === "image" ? "image" : token.href }];
  if (has(scope, "a")) {
    inline(w, label, scope);
    return;
  }
  if (LINK_SCHEME.test(token.href)) {
    inline(w, label, within(scope, { kind: "a", href: token.href }));
    return;
  }
  // Not a URL Telegram links (relative path, javascript:, …): keep the target visible as text.
  inline(w, label, scope);
  if (token.href && token.href !== token.text) w.push(` (${token.href})`, scope.formats);
}
