import escapeHtml from "escape-html";
import {
  type Format,
  type LayoutRules,
  type Run,
  renderMarkdown,
  renderPlain,
  type Emitter,
  type RenderedPart,
} from "../../core/markdown/index.js";

/**
 * Telegram's emitter: the shared markdown IR as Telegram HTML (`parse_mode: "HTML"`).
 *
 * Telegram Bot API (sendMessage): text is 1–4096 characters **after entity parsing**, so a part is
 * measured by its visible text, not its HTML (escaping `&` → `&amp;` grows the payload, not what
 * Telegram counts). Counted in UTF-16 code units, as Telegram's entity offsets are, which is never
 * fewer than code points.
 *
 * Telegram Bot API (formatting options, HTML style): only the tags b, i, u, s, tg-spoiler, a, code,
 * pre, blockquote; `<`, `>`, `&` escaped outside tags; bold, italic, strike may nest in anything
 * except pre and code; a, code and pre cannot contain each other; blockquotes cannot nest. Formats
 * outside those rules are dropped here (their text stays).
 */

/** Telegram Bot API: a message text is at most 4096 characters after entity parsing. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/** URL schemes Telegram accepts in `<a href>`; any other link shows its address as text. */
const LINK_SCHEME = /^(https?|tg|mailto):/i;

const RULES: LayoutRules = {
  bullet: "•",
  indent: "   ",
  heading: () => ({ kind: "strong" }),
  table: { kind: "lines" },
  linkable: (href) => LINK_SCHEME.test(href),
};

/** One Telegram HTML tag. */
type Tag = { name: "b" | "i" | "s" | "code" | "blockquote" } | { name: "a"; href: string } | { name: "pre"; language: string | null };

/** What Telegram counts: the visible text's UTF-16 length (tags and entities excluded). */
const visibleLength = (runs: readonly Run[]): number => runs.reduce((n, r) => n + r.text.length, 0);

const EMITTER: Emitter<string> = {
  rules: RULES,
  render: (runs) => ({ body: runsToHtml(runs), size: visibleLength(runs) }),
  size: visibleLength,
};

/**
 * Renders markdown as Telegram HTML parts, each at most `limit` visible UTF-16 code units, in order
 * (see `splitLaid` for where parts break). No parts for markdown with nothing visible.
 */
export function renderTelegram(markdown: string, limit = TELEGRAM_TEXT_LIMIT): RenderedPart<string>[] {
  return renderMarkdown(markdown, EMITTER, limit);
}

/** The HTML of each part of `renderTelegram`. */
export function renderTelegramHtml(markdown: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  return renderTelegram(markdown, limit).map((part) => part.body);
}

/** `text` as typed (sent without a parse mode), in parts of at most `limit` characters. */
export function renderTelegramPlain(text: string, limit = TELEGRAM_TEXT_LIMIT): RenderedPart<string>[] {
  return renderPlain(text, (t) => ({ body: t, size: t.length }), limit);
}

/** The Telegram tags for a run's formats, outermost first, within Telegram's nesting rules. */
function tags(formats: readonly Format[]): Tag[] {
  const out: Tag[] = [];
  const open = (name: Tag["name"]) => out.some((t) => t.name === name);
  for (const f of formats) {
    if (open("code") || open("pre")) break; // nothing inside code
    switch (f.kind) {
      case "strong":
      case "heading":
        if (!open("b")) out.push({ name: "b" });
        break;
      case "emphasis":
        if (!open("i")) out.push({ name: "i" });
        break;
      case "strike":
        if (!open("s")) out.push({ name: "s" });
        break;
      case "quote":
        if (!open("blockquote")) out.push({ name: "blockquote" });
        break;
      case "code":
        if (!open("a")) out.push({ name: "code" });
        break;
      case "pre":
        if (!open("a") && !open("blockquote")) out.push({ name: "pre", language: f.language });
        break;
      case "link":
        if (!open("a")) out.push({ name: "a", href: f.href });
        break;
    }
  }
  return out;
}

function sameTag(a: Tag, b: Tag): boolean {
  if (a.name !== b.name) return false;
  if (a.name === "a" && b.name === "a") return a.href === b.href;
  if (a.name === "pre" && b.name === "pre") return a.language === b.language;
  return true;
}

/**
 * Runs as Telegram HTML: text escaped with `escape-html`; tags shared by neighbouring runs stay
 * open; every tag opened is closed, innermost first, so the result always parses.
 */
export function runsToHtml(runs: readonly Run[]): string {
  let open: Tag[] = [];
  let html = "";
  for (const run of runs) {
    const next = tags(run.formats);
    let common = 0;
    while (common < open.length && common < next.length && sameTag(open[common]!, next[common]!)) common++;
    for (let k = open.length - 1; k >= common; k--) html += closeTag(open[k]!);
    for (let k = common; k < next.length; k++) html += openTag(next[k]!);
    open = next;
    html += escapeHtml(run.text);
  }
  for (let k = open.length - 1; k >= 0; k--) html += closeTag(open[k]!);
  return html;
}

function openTag(tag: Tag): string {
  if (tag.name === "a") return `<a href="${escapeHtml(tag.href)}">`;
  if (tag.name === "pre") return tag.language ? `<pre><code class="language-${escapeHtml(tag.language)}">` : "<pre>";
  return `<${tag.name}>`;
}

function closeTag(tag: Tag): string {
  if (tag.name === "pre") return tag.language ? "</code></pre>" : "</pre>";
  return `</${tag.name}>`;
}
