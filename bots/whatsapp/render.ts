import {
  type LayoutRules,
  writeMarkup,
  type MarkupDialect,
  PLAIN,
  renderMarkdown,
  renderPlain,
  type Emitter,
  type RenderedPart,
} from "../../core/markdown/index.js";

/**
 * WhatsApp's emitter: the shared markdown IR as WhatsApp formatting.
 *
 * WhatsApp formats `*bold*`, `_italic_`, `~strike~` and ```` ```monospace``` ```` (WhatsApp Help
 * Center, "How to format your messages"); a marker only formats when it touches the words it
 * wraps, so spaces stay outside it. Everything else is adapted: headings become bold lines, links
 * `label (url)` (no masked links: the address must stay visible), tables a monospaced block, rules
 * a line of box characters, lists and quotes `- ` / `1. ` / `> ` as typed. WhatsApp has no escape
 * character: a literal `*word*` the model typed shows as bold, which loses nothing.
 */

/** Characters per WhatsApp message Familiar sends (a readability budget: longer texts are cut behind "Read more"). */
export const WHATSAPP_MESSAGE_LIMIT = 4000;

const RULES: LayoutRules = {
  bullet: "-",
  indent: "   ",
  heading: () => ({ kind: "strong" }),
  table: { kind: "pre", rule: false },
  linkable: () => false,
};

const FENCE = "```";
/** A fence inside monospace would end it early; a zero-width space keeps it literal. */
const breakFences = (code: string): string => code.replace(/```/g, "`\u200b``");

/** WhatsApp formatting. */
export const WHATSAPP_DIALECT: MarkupDialect = {
  text: (text) => text,
  strong: ["*", "*"],
  emphasis: ["_", "_"],
  strike: ["~", "~"],
  code: (code) => `${FENCE}${breakFences(code)}${FENCE}`,
  link: (href, label, plain) => PLAIN.link(href, label, plain),
  formatsInLinks: true,
  pre: (_language, code, prefix) => `${FENCE}${breakFences(code).split("\n").join(`\n${prefix}`)}${FENCE}`,
  quotePrefix: "> ",
  headingPrefix: () => "",
};

const EMITTER: Emitter<string> = {
  rules: RULES,
  render: (runs) => {
    const body = writeMarkup(runs, WHATSAPP_DIALECT);
    return { body, size: body.length };
  },
};

/** Renders markdown as WhatsApp message texts of at most `limit` characters each, in order. */
export function renderWhatsApp(markdown: string, limit = WHATSAPP_MESSAGE_LIMIT): RenderedPart<string>[] {
  return renderMarkdown(markdown, EMITTER, limit);
}

/** The texts of `renderWhatsApp`'s parts. */
export function renderWhatsAppMessages(markdown: string, limit = WHATSAPP_MESSAGE_LIMIT): string[] {
  return renderWhatsApp(markdown, limit).map((part) => part.body);
}

/** `text` as typed, in parts of at most `limit` characters. */
export function renderWhatsAppPlain(text: string, limit = WHATSAPP_MESSAGE_LIMIT): RenderedPart<string>[] {
  return renderPlain(text, (t) => ({ body: t, size: t.length }), limit);
}
