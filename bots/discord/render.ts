import {
  type LayoutRules,
  writeMarkup,
  type MarkupDialect,
  renderMarkdown,
  renderPlain,
  type Emitter,
  type RenderedPart,
} from "../../core/markdown/index.js";

/**
 * Discord's emitter: the shared markdown IR as Discord markdown.
 *
 * Discord's markdown is close to CommonMark (bold, italic, strike, inline code, fenced code, block
 * quotes, lists, `#`–`###` headings, masked links `[label](https://…)`); what it lacks is adapted:
 * headings 4–6 become bold lines, tables an aligned code block, rules a line of box characters.
 * Characters the model typed that Discord would read as markup are escaped with a backslash, which
 * Discord shows as the character itself: every `\ * _ ~ ` | [ ]`, a `>`, `#`, `-`, `+` or `1.`
 * starting a line, and a `<` that would start a mention, channel, emoji or timestamp tag.
 * (discord.js's `escapeMarkdown` is heuristic: it leaves one `*` of `****` unescaped.)
 *
 * Discord API (Create Message): content is at most 2,000 characters, counted on the rendered
 * markdown (discord.js does not check it). Measured here in UTF-16 code units, never fewer than
 * Discord's own count.
 */

/** Discord API: message content is at most 2,000 characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;

const RULES: LayoutRules = {
  bullet: "-",
  indent: "  ",
  heading: (level) => (level <= 3 ? { kind: "heading", level } : { kind: "strong" }),
  table: { kind: "pre", rule: true },
  linkable: (href) => /^https?:\/\//i.test(href),
};

/** A fence inside code would close the block early; a zero-width space keeps it literal. */
const breakFences = (code: string): string => code.replace(/```/g, "`\u200b``");

function escapeText(text: string, lineStart: boolean): string {
  let out = text.replace(/[\\*_~`|[\]]/g, "\\$&").replace(/<(?=[@#:]|a:|t:|\/)/g, "\\<");
  if (lineStart) out = out.replace(/^(\s*)(>|#{1,3}\s|[-+]\s)/, "$1\\$2").replace(/^(\s*\d+)([.)]\s)/, "$1\\$2");
  return out;
}

/** Discord markdown. */
export const DISCORD_DIALECT: MarkupDialect = {
  text: (text, { syntax, lineStart }) => (syntax ? text : escapeText(text, lineStart)),
  strong: ["**", "**"],
  emphasis: ["*", "*"],
  strike: ["~~", "~~"],
  code: (code) => (code.includes("`") ? `\`\` ${code} \`\`` : `\`${code}\``),
  link: (href, label, plain) => {
    const text = plain.trim();
    if (!text || text === href) return href;
    return `[${label.replace(/[[\]]/g, "\\$&")}](${href.replace(/\(/g, "%28").replace(/\)/g, "%29").replace(/\s/g, "%20")})`;
  },
  formatsInLinks: true,
  pre: (language, code, prefix) => `\`\`\`${language ?? ""}\n${prefix}${breakFences(code).split("\n").join(`\n${prefix}`)}\n${prefix}\`\`\``,
  quotePrefix: "> ",
  headingPrefix: (level) => `${"#".repeat(level)} `,
};

const EMITTER: Emitter<string> = {
  rules: RULES,
  render: (runs) => {
    const body = writeMarkup(runs, DISCORD_DIALECT);
    return { body, size: body.length };
  },
};

/** Renders markdown as Discord message contents of at most `limit` characters each, in order. */
export function renderDiscord(markdown: string, limit = DISCORD_MESSAGE_LIMIT): RenderedPart<string>[] {
  return renderMarkdown(markdown, EMITTER, limit);
}

/** The contents of `renderDiscord`'s parts. */
export function renderDiscordMessages(markdown: string, limit = DISCORD_MESSAGE_LIMIT): string[] {
  return renderDiscord(markdown, limit).map((part) => part.body);
}

/** `text` as typed, in parts of at most `limit` characters. */
export function renderDiscordPlain(text: string, limit = DISCORD_MESSAGE_LIMIT): RenderedPart<string>[] {
  return renderPlain(text, (t) => ({ body: t, size: t.length }), limit);
}
