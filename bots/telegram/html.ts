import escapeHtml from "escape-html";
import { markdownToRuns, sameFormat, type Format, type Run } from "./markdown.js";

/**
 * Telegram Bot API (sendMessage): text is 1–4096 characters after entity parsing. Counted here in
 * UTF-16 code units (what Telegram's entity offsets use), which is never fewer than code points.
 */
export const TELEGRAM_TEXT_LIMIT = 4096;

/** A part never ends with less than this share of the limit when a paragraph or line break can be found. */
const MIN_PART_SHARE = 0.25;

/**
 * Renders the model's markdown as Telegram HTML (`parse_mode: "HTML"`), split into messages whose
 * visible length (the text Telegram counts after parsing the tags and entities) is at most `limit`
 * UTF-16 code units. Parts break at a blank line, else a line break, else a space, else anywhere
 * outside a surrogate pair; a format running across a break is closed at the end of one part and
 * reopened at the start of the next, so every part is well-formed on its own. Text is escaped with
 * `escape-html` (`&`, `<`, `>`, `"`, `'`), which grows the payload but not the visible length.
 * Returns no parts for markdown that renders to whitespace only.
 */
export function renderTelegramHtml(markdown: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  return splitRuns(markdownToRuns(markdown), limit).map(runsToHtml);
}

/** The visible text of runs, as Telegram shows (and counts) it. */
export function visibleText(runs: readonly Run[]): string {
  return runs.map((r) => r.text).join("");
}

/**
 * Cuts runs into parts of at most `limit` visible UTF-16 code units each, in order. Line breaks
 * and spaces at a cut are dropped (Telegram trims them anyway); whitespace-only parts are dropped.
 */
export function splitRuns(runs: readonly Run[], limit: number): Run[][] {
  if (!Number.isInteger(limit) || limit < 2) throw new RangeError(`split limit must be an integer ≥ 2, got ${limit}`);
  const text = visibleText(runs);
  const parts: Run[][] = [];
  let start = skipBreaks(text, 0);
  while (start < text.length) {
    const end = text.length - start <= limit ? text.length : cutPoint(text, start, limit);
    let last = end;
    while (last > start && /\s/.test(text[last - 1]!)) last--;
    if (last > start) parts.push(sliceRuns(runs, start, last));
    start = skipBreaks(text, end);
  }
  return parts;
}

/** Where a part that starts at `start` ends: the last good break within `limit`. */
function cutPoint(text: string, start: number, limit: number): number {
  const max = start + limit;
  const min = start + Math.floor(limit * MIN_PART_SHARE);
  for (const separator of ["\n\n", "\n", " "]) {
    const at = text.lastIndexOf(separator, max - separator.length);
    if (at > min) return at;
  }
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

function skipBreaks(text: string, from: number): number {
  let i = from;
  while (i < text.length && (text[i] === "\n" || text[i] === " ")) i++;
  return i;
}

/** The runs covering visible offsets [from, to). */
function sliceRuns(runs: readonly Run[], from: number, to: number): Run[] {
  const out: Run[] = [];
  let offset = 0;
  for (const run of runs) {
    const end = offset + run.text.length;
    if (end > from && offset < to) {
      out.push({ text: run.text.slice(Math.max(0, from - offset), Math.min(run.text.length, to - offset)), formats: run.formats });
    }
    offset = end;
    if (offset >= to) break;
  }
  return out;
}

/**
 * Serializes runs to Telegram HTML using only Telegram's tags (b, i, u, s, code, pre, a,
 * blockquote, tg-spoiler). Formats shared by neighbouring runs stay open; every tag opened is
 * closed, innermost first, so the result always parses.
 */
export function runsToHtml(runs: readonly Run[]): string {
  let open: readonly Format[] = [];
  let html = "";
  for (const run of runs) {
    let common = 0;
    while (common < open.length && common < run.formats.length && sameFormat(open[common]!, run.formats[common]!)) common++;
    for (let k = open.length - 1; k >= common; k--) html += closeTag(open[k]!);
    for (let k = common; k < run.formats.length; k++) html += openTag(run.formats[k]!);
    open = run.formats;
    html += escapeHtml(run.text);
  }
  for (let k = open.length - 1; k >= 0; k--) html += closeTag(open[k]!);
  return html;
}

function openTag(format: Format): string {
  if (format.kind === "a") return `<a href="${escapeHtml(format.href)}">`;
  if (format.kind === "pre") return format.language ? `<pre><code class="language-${escapeHtml(format.language)}">` : "<pre>";
  return `<${format.kind}>`;
}

function closeTag(format: Format): string {
  if (format.kind === "pre") return format.language ? "</code></pre>" : "</pre>";
  return `</${format.kind}>`;
}
