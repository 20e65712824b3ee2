import DOMPurify from "dompurify";
import { Marked } from "marked";
import { boundedAutolink } from "../core/markdown/index.js";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Markdown → HTML for messages. Raw HTML in a message is *escaped* (shown as typed, `<angle
 * brackets>` included), never dropped; links keep only http(s) and mailto targets. DOMPurify runs
 * last as a second fence.
 */
const marked = new Marked({
  gfm: true,
  breaks: true,
  // The same autolink boundary as the messengers' renderer (core/markdown/autolink.ts).
  tokenizer: { url: boundedAutolink },
  renderer: {
    html: ({ text }) => escapeHtml(text),
    link({ href, title, tokens }) {
      const inner = this.parser.parseInline(tokens);
      if (!/^(https?:|mailto:)/i.test(href)) return `${inner} (${escapeHtml(href)})`;
      return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ""} target="_blank" rel="noopener noreferrer">${inner}</a>`;
    },
    image: ({ href, text }) => escapeHtml(`![${text}](${href})`),
  },
});

/** Safe HTML of a message's markdown. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, { ADD_ATTR: ["target"] });
}
