import { escapeMarkdown } from "discord.js";
import { Lexer, type Token, type Tokens } from "marked";
import { packBlocks, splitPieces, words, wrapPieces, type Piece } from "../shared/split.js";

/**
 * Model markdown → Discord markdown, split into messages.
 *
 * Discord's markdown is close to CommonMark (bold, italic, strike, inline code, fenced code, block
 * quotes, lists, `#`–`###` headings, masked links), so most of the text passes through; what differs
 * is adapted: `__x__` means underline on Discord (rendered as `**x**`), headings 4–6 become bold lines,
 * tables become a monospaced code block, images become links, horizontal rules a line of box characters,
 * literal markdown characters in plain text are escaped with discord.js's `escapeMarkdown`.
 *
 * Splitting happens **after** rendering (Discord counts the rendered content: a message is at most
 * 2,000 characters — Discord API "Create Message": content up to 2000 characters; discord.js does not
 * check it). Parts break between blocks, then between words; a formatted run (bold, link, inline code)
 * is never cut; a code block that does not fit is closed and reopened with the same language.
 */

/** Discord API: message content is at most 2,000 characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** A rendered block: prose (breakable between pieces) or a fenced code block (breakable between lines). */
type Block = { kind: "text"; pieces: Piece[] } | { kind: "code"; lang: string; code: string };

const HR = "──────────";

/**
 * Renders `markdown` for Discord and splits it into message contents of at most `limit` characters
 * (UTF-16 code units, which is never fewer than Discord's own count), in order. Returns `[]` for text
 * that renders to nothing (whitespace only).
 */
export function renderDiscordMessages(markdown: string, limit = DISCORD_MESSAGE_LIMIT): string[] {
  const blocks = renderBlocks(new Lexer({ gfm: true }).lex(markdown));
  return pack(blocks, limit);
}

function renderBlocks(tokens: Token[]): Block[] {
  const out: Block[] = [];
  for (const token of tokens) {
    const t = token as Token & { type: string };
    switch (t.type) {
      case "space":
      case "def":
        break;
      case "code": {
        const c = t as Tokens.Code;
        out.push({ kind: "code", lang: (c.lang ?? "").split(/\s/)[0] ?? "", code: c.text });
        break;
      }
      case "heading": {
        const h = t as Tokens.Heading;
        const inner = inline(h.tokens);
        const text = inner.map((p) => p.text).join("");
        out.push({ kind: "text", pieces: [{ text: h.depth <= 3 ? `${"#".repeat(h.depth)} ${text}` : `**${text}**`, fallback: inner }] });
        break;
      }
      case "paragraph":
      case "text": {
        const p = t as Tokens.Paragraph | Tokens.Text;
        out.push({ kind: "text", pieces: p.tokens ? inline(p.tokens) : words(escapeMarkdown(p.text)) });
        break;
      }
      case "list":
        out.push({ kind: "text", pieces: list(t as Tokens.List, 0) });
        break;
      case "blockquote": {
        const inner = renderBlocks((t as Tokens.Blockquote).tokens);
        const lines = inner.map(blockText).join("\n\n").split("\n");
        out.push({ kind: "text", pieces: lines.flatMap((line, i) => [...(i ? [{ text: "\n" }] : []), ...words(`> ${line}`)]) });
        break;
      }
      case "table":
        out.push({ kind: "code", lang: "", code: table(t as Tokens.Table) });
        break;
      case "hr":
        out.push({ kind: "text", pieces: [{ text: HR }] });
        break;
      case "html":
        out.push({ kind: "text", pieces: words(escapeMarkdown((t as Tokens.HTML).text.trim())) });
        break;
      default:
        if ("text" in t && typeof t.text === "string") out.push({ kind: "text", pieces: words(escapeMarkdown(t.text)) });
    }
  }
  return out;
}

function list(l: Tokens.List, depth: number): Piece[] {
  const pieces: Piece[] = [];
  const indent = "  ".repeat(depth);
  const start = typeof l.start === "number" ? l.start : 1;
  l.items.forEach((item, i) => {
    if (pieces.length) pieces.push({ text: "\n" });
    const marker = l.ordered ? `${start + i}. ` : "- ";
    const check = item.task ? (item.checked ? "☑ " : "☐ ") : "";
    pieces.push({ text: `${indent}${marker}${check}` });
    let first = true;
    for (const child of item.tokens) {
      if (child.type === "list") {
        pieces.push({ text: "\n" }, ...list(child as Tokens.List, depth + 1));
      } else if (child.type === "checkbox" || child.type === "space") {
        continue;
      } else {
        const rendered = renderBlocks([child]);
        for (const b of rendered) {
          if (!first) pieces.push({ text: `\n${indent}  ` });
          pieces.push(...(b.kind === "text" ? b.pieces : [codePiece(b.lang, b.code)]));
          first = false;
        }
      }
    }
  });
  return pieces;
}

function codePiece(lang: string, code: string): Piece {
  return { text: fence(lang, code), fallback: code.split("\n").map((line) => ({ text: `${line}\n` })) };
}

function fence(lang: string, code: string): string {
  // A fence inside the code would close the block early; a zero-width space keeps it literal.
  return `\`\`\`${lang}\n${code.replace(/```/g, "`\u200b``")}\n\`\`\``;
}

function table(t: Tokens.Table): string {
  const rows = [t.header.map((c) => c.text), ...t.rows.map((r) => r.map((c) => c.text))];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? "").length)));
  const line = (r: string[]): string => r.map((cell, col) => cell.padEnd(widths[col] ?? 0)).join(" | ").trimEnd();
  return [line(rows[0]!), widths.map((w) => "-".repeat(Math.max(w, 1))).join("-|-"), ...rows.slice(1).map(line)].join("\n");
}

/** Inline tokens → pieces; formatted runs are whole pieces whose fallback is their plain content. */
function inline(tokens: Token[]): Piece[] {
  const out: Piece[] = [];
  for (const token of tokens) {
    const t = token as Token & { type: string };
    switch (t.type) {
      case "text": {
        const x = t as Tokens.Text;
        out.push(...(x.tokens ? inline(x.tokens) : words(escapeMarkdown(x.text))));
        break;
      }
      case "escape":
        out.push({ text: escapeMarkdown((t as Tokens.Escape).text) });
        break;
      case "strong":
        out.push(wrap("**", inline((t as Tokens.Strong).tokens)));
        break;
      case "em":
        out.push(wrap("*", inline((t as Tokens.Em).tokens)));
        break;
      case "del":
        out.push(wrap("~~", inline((t as Tokens.Del).tokens)));
        break;
      case "codespan": {
        const code = (t as Tokens.Codespan).text;
        const ticks = code.includes("`") ? "``" : "`";
        out.push({ text: `${ticks}${ticks === "``" ? ` ${code} ` : code}${ticks}`, fallback: words(code) });
        break;
      }
      case "br":
        out.push({ text: "\n" });
        break;
      case "link": {
        const l = t as Tokens.Link;
        const label = inline(l.tokens).map((p) => p.text).join("");
        const plainLabel = l.text.trim();
        if (!plainLabel || plainLabel === l.href || `mailto:${plainLabel}` === l.href) out.push({ text: l.href });
        else out.push({ text: `[${label}](${l.href})`, fallback: [...words(escapeMarkdown(plainLabel)), { text: " " }, { text: l.href }] });
        break;
      }
      case "image": {
        const img = t as Tokens.Image;
        out.push(img.text ? { text: `[${escapeMarkdown(img.text)}](${img.href})`, fallback: [{ text: img.href }] } : { text: img.href });
        break;
      }
      case "html":
        out.push(...words(escapeMarkdown((t as Tokens.HTML).text)));
        break;
      default:
        if ("text" in t && typeof t.text === "string") out.push(...words(escapeMarkdown(t.text)));
    }
  }
  return out;
}

const wrap = wrapPieces;

function blockText(b: Block): string {
  return b.kind === "code" ? fence(b.lang, b.code) : b.pieces.map((p) => p.text).join("");
}

/** Packs blocks into parts of at most `limit` characters: whole blocks first, then split blocks. */
function pack(blocks: Block[], limit: number): string[] {
  return packBlocks(blocks, limit, {
    text: blockText,
    split: (block, max) => (block.kind === "code" ? splitCode(block.lang, block.code, max) : splitPieces(block.pieces, max)),
  });
}

function splitCode(lang: string, code: string, limit: number): string[] {
  const overhead = `\`\`\`${lang}\n`.length + "\n```".length;
  const budget = Math.max(1, limit - overhead);
  const chunks: string[] = [];
  let lines: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (lines.length) chunks.push(fence(lang, lines.join("\n")));
    lines = [];
    size = 0;
  };
  for (const raw of code.replace(/```/g, "`\u200b``").split("\n")) {
    const segments = raw.length > budget ? (raw.match(new RegExp(`[\\s\\S]{1,${budget}}`, "g")) ?? [raw]) : [raw];
    for (const line of segments) {
      const added = lines.length ? size + 1 + line.length : line.length;
      if (added > budget) flush();
      size = lines.length ? size + 1 + line.length : line.length;
      lines.push(line);
    }
  }
  flush();
  return chunks;
}
