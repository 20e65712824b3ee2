import { Lexer, type MarkedToken, type Token, type Tokens } from "marked";
import { BoundedAutolinkTokenizer } from "./autolink.js";

/**
 * The model's markdown as a small typed intermediate representation (IR): what every messenger's
 * renderer starts from. Parsed once with marked's lexer (GitHub-flavoured markdown); nothing the
 * model wrote is dropped here: raw HTML and unknown syntax become literal text, images become links
 * (label = alt text), task list items keep their check state. Presentation choices (bullets, how a
 * heading or table looks, which links can be clickable) belong to the layout, not to the IR.
 */

/** Inline content: text and the formats around it. `text` is exactly the characters to show (no escapes). */
export type Inline =
  | { type: "text"; text: string }
  | { type: "strong" | "emphasis" | "strike"; children: Inline[] }
  | { type: "code"; text: string }
  | { type: "link"; href: string; children: Inline[] }
  | { type: "break" };

/** One list item: its blocks, and for a task item (`- [x] done`) whether it is checked. */
export interface ListItem {
  checked: boolean | null;
  blocks: Block[];
}

/** Block content. Heading levels are 1–6; `start` is the number of an ordered list's first item. */
export type Block =
  | { type: "paragraph"; content: Inline[] }
  | { type: "heading"; level: number; content: Inline[] }
  | { type: "list"; ordered: boolean; start: number; loose: boolean; items: ListItem[] }
  | { type: "code"; language: string | null; text: string }
  | { type: "quote"; blocks: Block[] }
  | { type: "rule" }
  | { type: "table"; header: Inline[][]; rows: Inline[][][] };

/** Token types marked's lexer emits without extensions; anything else is shown as its raw text. */
const MARKED_TYPES: Record<MarkedToken["type"], true> = {
  blockquote: true, br: true, checkbox: true, code: true, codespan: true, def: true, del: true, em: true,
  escape: true, heading: true, hr: true, html: true, image: true, link: true, list: true, list_item: true,
  paragraph: true, space: true, strong: true, table: true, text: true,
};

function known(token: Token): token is MarkedToken {
  return Object.hasOwn(MARKED_TYPES, token.type);
}

/** A code block's language as a fence / `language-…` class can carry it: the first word, if it is a plain identifier. */
function language(lang: string | undefined): string | null {
  const first = (lang ?? "").trim().split(/\s/)[0] ?? "";
  return /^[\w#+.-]{1,32}$/.test(first) ? first : null;
}

/**
 * Parses `markdown` into blocks. Never throws: input the lexer cannot read becomes one paragraph of
 * its literal text. Link reference definitions (`[x]: url`) are resolved into their links and not
 * shown themselves.
 */
export function parseMarkdown(markdown: string): Block[] {
  let tokens: Token[];
  try {
    // Bare URLs end at quotes and the like (autolink.ts), not at the next space.
    tokens = new Lexer({ gfm: true, tokenizer: new BoundedAutolinkTokenizer() }).lex(markdown);
  } catch {
    return markdown.trim() ? [{ type: "paragraph", content: [{ type: "text", text: markdown }] }] : [];
  }
  return blocks(tokens);
}

function blocks(tokens: readonly Token[]): Block[] {
  const out: Block[] = [];
  for (const token of tokens) {
    const block = toBlock(token);
    if (block) out.push(block);
  }
  return out;
}

function toBlock(token: Token): Block | null {
  if (!known(token)) return rawParagraph(token.raw);
  switch (token.type) {
    case "space":
    case "def":
    case "checkbox":
      return null;
    case "paragraph":
      return { type: "paragraph", content: inlines(token.tokens) };
    case "text":
      return { type: "paragraph", content: token.tokens ? inlines(token.tokens) : [{ type: "text", text: token.text }] };
    case "heading":
      return { type: "heading", level: Math.min(6, Math.max(1, token.depth)), content: inlines(token.tokens) };
    case "code":
      return { type: "code", language: language(token.lang), text: token.text };
    case "blockquote":
      return { type: "quote", blocks: blocks(token.tokens) };
    case "hr":
      return { type: "rule" };
    case "list":
      return list(token);
    case "table":
      return { type: "table", header: token.header.map((cell) => inlines(cell.tokens)), rows: token.rows.map((row) => row.map((cell) => inlines(cell.tokens))) };
    case "html":
      return rawParagraph(token.text.trimEnd());
    default:
      // An inline token at block level (never produced by marked itself): keep its characters.
      return rawParagraph(token.raw);
  }
}

function rawParagraph(text: string): Block | null {
  return text.trim() ? { type: "paragraph", content: [{ type: "text", text }] } : null;
}

function list(token: Tokens.List): Block {
  const start = typeof token.start === "number" ? token.start : 1;
  const items = token.items.map((item): ListItem => ({ checked: item.task ? Boolean(item.checked) : null, blocks: blocks(item.tokens) }));
  return { type: "list", ordered: token.ordered, start, loose: token.loose, items };
}

function inlines(tokens: readonly Token[]): Inline[] {
  const out: Inline[] = [];
  for (const token of tokens) out.push(...inline(token));
  return out;
}

function inline(token: Token): Inline[] {
  if (!known(token)) return token.tokens ? inlines(token.tokens) : [{ type: "text", text: token.raw }];
  switch (token.type) {
    case "text":
      return token.tokens ? inlines(token.tokens) : [{ type: "text", text: token.text }];
    case "escape":
    case "html":
      return [{ type: "text", text: token.text }];
    case "strong":
      return [{ type: "strong", children: inlines(token.tokens) }];
    case "em":
      return [{ type: "emphasis", children: inlines(token.tokens) }];
    case "del":
      return [{ type: "strike", children: inlines(token.tokens) }];
    case "codespan":
      return [{ type: "code", text: token.text }];
    case "br":
      return [{ type: "break" }];
    case "link":
      return [{ type: "link", href: token.href, children: inlines(token.tokens) }];
    case "image":
      return [{ type: "link", href: token.href, children: token.text ? [{ type: "text", text: token.text }] : [] }];
    default:
      return [{ type: "text", text: token.raw }];
  }
}

/** The characters of inline content, without formats (links show only their label). */
export function inlineText(content: readonly Inline[]): string {
  return content.map((node) => (node.type === "text" || node.type === "code" ? node.text : node.type === "break" ? "\n" : inlineText(node.children))).join("");
}
