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
 * Slack's emitter: the shared markdown IR as Slack mrkdwn, in pieces of at most a section's length.
 *
 * Slack rules used (Slack docs, "Formatting text for app surfaces"): `&`, `<`, `>` must be escaped
 * as `&amp;`, `&lt;`, `&gt;` everywhere, code blocks included; bold `*x*`, italic `_x_`, strike
 * `~x~`, code `` `x` `` (no backticks or line breaks inside), preformatted ```` ```x``` ````, quote
 * `> `, links `<url|label>` with a plain label; no headings or tables (bold lines and aligned code
 * blocks here). Formatting markers do not span lines, so each line opens and closes its own.
 */

/** Escapes Slack's three control characters (Slack docs: "Escaping text"). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const RULES: LayoutRules = {
  bullet: "•",
  indent: "    ",
  heading: () => ({ kind: "strong" }),
  table: { kind: "pre", rule: true },
  linkable: (href) => /^(https?|mailto):/i.test(href),
};

/** Slack mrkdwn. */
export const SLACK_DIALECT: MarkupDialect = {
  text: (text) => escapeMrkdwn(text),
  strong: ["*", "*"],
  emphasis: ["_", "_"],
  strike: ["~", "~"],
  code: (code) => {
    // Slack code spans cannot contain backticks or line breaks: a look-alike and a space stand in.
    const text = code.replace(/`/g, "ˋ").replace(/\n/g, " ");
    return text.trim() ? `\`${escapeMrkdwn(text)}\`` : escapeMrkdwn(text);
  },
  link: (href, _label, plain) => {
    const url = escapeMrkdwn(href.replace(/\|/g, "%7C"));
    const text = plain.replace(/[|\n]/g, " ").trim();
    return !text || text === href ? `<${url}>` : `<${url}|${escapeMrkdwn(text)}>`;
  },
  formatsInLinks: false,
  // A fence inside the code would end the block early; a zero-width space keeps it literal.
  pre: (_language, code, prefix) => ["```", ...escapeMrkdwn(code.replace(/```/g, "`\u200b``")).split("\n"), "```"].join(`\n${prefix}`),
  quotePrefix: "> ",
  headingPrefix: () => "",
};

const EMITTER: Emitter<string> = {
  rules: RULES,
  render: (runs) => {
    const body = writeMarkup(runs, SLACK_DIALECT);
    return { body, size: body.length };
  },
};

/**
 * Renders markdown as mrkdwn section texts of at most `limit` characters each (JS string length,
 * never less than Slack's count), in order.
 */
export function renderSlackSections(markdown: string, limit: number): RenderedPart<string>[] {
  return renderMarkdown(markdown, EMITTER, limit);
}

/** `text` as typed, escaped for a top-level `text` field, in parts of at most `limit` characters. */
export function renderSlackPlain(text: string, limit: number): RenderedPart<string>[] {
  return renderPlain(text, (t) => {
    const body = escapeMrkdwn(t);
    return { body, size: body.length };
  }, limit);
}
