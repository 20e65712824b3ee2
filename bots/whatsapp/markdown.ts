import { Lexer, type Token, type Tokens } from "marked";
import { packBlocks, splitPieces, words, type Piece } from "../shared/split.js";

/**
 * Model markdown → WhatsApp text, split into messages.
 *
 * WhatsApp formats `*bold*`, `_italic_`, `~strike~` and ```` ```monospace``` ````, and shows `- ` / `1. `
 * lists and `> ` quotes as typed (WhatsApp Help Center, "How to format your messages"). Everything else
 * is adapted: headings become bold lines, links `label (url)`, tables a monospaced block, rules a line
 * of box characters. A marker only formats when it touches the words it wraps, so inner whitespace
 * is trimmed. WhatsApp has no escape character: a literal `*word*` in the model's plain text shows as
 * bold, which is harmless.
 *
 * Splitting happens after rendering, ≤ `WHATSAPP_MESSAGE_LIMIT` characters per message (WhatsApp
 * accepts far longer texts, but long ones are cut behind "Read more" and hard to read on a phone),
 * between blocks, then between words; a formatted run is never cut; a monospaced block that does not
 * fit is closed and reopened.
 */

/** Characters per WhatsApp message Familiar sends (a readability budget, not a platform maximum). */
export const WHATSAPP_MESSAGE_LIMIT = 4000;

type Block = { kind: "text"; pieces: Piece[] } | { kind: "mono"; code: string };

const FENCE = "```";

/** Renders `markdown` for WhatsApp and splits it into parts of at most `limit` characters, in order. */
export function renderWhatsAppMessages(markdown: string, limit = WHATSAPP_MESSAGE_LIMIT): string[] {
  return pack(blocks(new Lexer({ gfm: true }).lex(markdown)), limit);
}

function blocks(tokens: Token[]): Block[] {
  const out: Block[] = [];
  for (const token of tokens) {
    const t = token as Token & { type: string };
    if (t.type === "space" || t.type === "def") continue;
    if (t.type === "code") out.push({ kind: "mono", code: (t as Tokens.Code).text });
    else if (t.type === "table") out.push({ kind: "mono", code: table(t as Tokens.Table) });
    else if (t.type === "heading") out.push({ kind: "text", pieces: [wrap("*", inline((t as Tokens.Heading).tokens))] });
    else if (t.type === "list") out.push({ kind: "text", pieces: list(t as Tokens.List, 0) });
    else if (t.type === "hr") out.push({ kind: "text", pieces: [{ text: "──────────" }] });
    else if (t.type === "blockquote") {
      const lines = blocks((t as Tokens.Blockquote).tokens).map(blockText).join("\n\n").split("\n");
      out.push({ kind: "text", pieces: lines.flatMap((line, i) => [...(i ? [{ text: "\n" }] : []), ...words(`> ${line}`)]) });
    } else {
      const p = t as Token & { tokens?: Token[]; text?: string };
      if (p.tokens) out.push({ kind: "text", pieces: inline(p.tokens) });
      else if (typeof p.text === "string") out.push({ kind: "text", pieces: words(p.text) });
    }
  }
  return out;
}

function list(l: Tokens.List, depth: number): Piece[] {
  const pieces: Piece[] = [];
  const indent = "   ".repeat(depth);
  const start = typeof l.start === "number" ? l.start : 1;
  l.items.forEach((item, i) => {
    if (pieces.length) pieces.push({ text: "\n" });
    pieces.push({ text: `${indent}${l.ordered ? `${start + i}.` : "-"} ${item.task ? (item.checked ? "☑ " : "☐ ") : ""}` });
    let first = true;
    for (const child of item.tokens) {
      if (child.type === "list") pieces.push({ text: "\n" }, ...list(child as Tokens.List, depth + 1));
      else if (child.type !== "checkbox" && child.type !== "space") {
        for (const b of blocks([child])) {
          if (!first) pieces.push({ text: `\n${indent}   ` });
          pieces.push(...(b.kind === "text" ? b.pieces : [{ text: mono(b.code), fallback: words(b.code) }]));
          first = false;
        }
      }
    }
  });
  return pieces;
}

function table(t: Tokens.Table): string {
  const rows = [t.header.map((c) => c.text), ...t.rows.map((r) => r.map((c) => c.text))];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? "").length)));
  return rows.map((r) => r.map((cell, col) => cell.padEnd(widths[col] ?? 0)).join(" | ").trimEnd()).join("\n");
}

function inline(tokens: Token[]): Piece[] {
  const out: Piece[] = [];
  for (const token of tokens) {
    const t = token as Token & { type: string };
    switch (t.type) {
      case "strong":
        out.push(wrap("*", inline((t as Tokens.Strong).tokens)));
        break;
      case "em":
        out.push(wrap("_", inline((t as Tokens.Em).tokens)));
        break;
      case "del":
        out.push(wrap("~", inline((t as Tokens.Del).tokens)));
        break;
      case "codespan": {
        const code = (t as Tokens.Codespan).text;
        out.push({ text: `${FENCE}${code}${FENCE}`, fallback: words(code) });
        break;
      }
      case "br":
        out.push({ text: "\n" });
        break;
      case "link": {
        const l = t as Tokens.Link;
        const label = l.text.trim();
        out.push(...(!label || label === l.href || `mailto:${label}` === l.href ? [{ text: l.href }] : [...inline(l.tokens), { text: " " }, { text: `(${l.href})` }]));
        break;
      }
      case "image": {
        const img = t as Tokens.Image;
        out.push(...(img.text ? [...words(img.text), { text: " " }] : []), { text: img.href });
        break;
      }
      default: {
        const x = t as Token & { tokens?: Token[]; text?: string };
        if (x.tokens) out.push(...inline(x.tokens));
        else if (typeof x.text === "string") out.push(...words(x.text));
      }
    }
  }
  return out;
}

function wrap(marker: string, inner: Piece[]): Piece {
  const text = inner.map((p) => p.text).join("").trim();
  return text ? { text: `${marker}${text}${marker}`, fallback: inner } : { text: "" };
}

function mono(code: string): string {
  return `${FENCE}${code}${FENCE}`;
}

function blockText(b: Block): string {
  return b.kind === "mono" ? mono(b.code) : b.pieces.map((p) => p.text).join("");
}

function pack(list: Block[], limit: number): string[] {
  return packBlocks(list, limit, {
    text: blockText,
    split: (block, max) => (block.kind === "mono" ? splitMono(block.code, max) : splitPieces(block.pieces, max)),
  });
}

function splitMono(code: string, limit: number): string[] {
  const budget = Math.max(1, limit - 2 * FENCE.length);
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const raw of code.split("\n")) {
    for (let i = 0; i < Math.max(raw.length, 1); i += budget) {
      const line = raw.slice(i, i + budget);
      if (current.length && size + 1 + line.length > budget) {
        chunks.push(mono(current.join("\n")));
        current = [];
        size = 0;
      }
      size = current.length ? size + 1 + line.length : line.length;
      current.push(line);
    }
  }
  if (current.length) chunks.push(mono(current.join("\n")));
  return chunks;
}
