/**
 * Markdown documents as HTML: GitHub-flavoured markdown (`marked`) inside a plain printable page
 * (a readable column, tables with rules, code in a monospace box, A4 margins when printed). Used
 * to render a document artifact in the dashboard and to print it, or a markdown source, as a PDF.
 * The page carries no script; what the markdown holds as raw HTML stays (it only ever renders
 * where no script runs and no request leaves: the PDF renderer's offline page, the dashboard's
 * sandboxed frame).
 */
import escapeHtml from "escape-html";
import { Marked } from "marked";

const marked = new Marked({ gfm: true, breaks: false });

/** Styles of a rendered document (screen and print). */
export const DOCUMENT_CSS = `
  :root { color-scheme: light; }
  body { font: 15px/1.55 "Liberation Sans", Arial, Helvetica, sans-serif; color: #1d1d1f; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
  h1, h2, h3 { line-height: 1.25; margin: 1.4em 0 .5em; }
  h1 { font-size: 1.9em; margin-top: 0; }
  table { border-collapse: collapse; margin: 1em 0; }
  th, td { border: 1px solid #c9c9ce; padding: .3em .6em; text-align: left; }
  th { background: #f2f2f5; }
  pre, code { font-family: "Liberation Mono", Menlo, monospace; font-size: .92em; }
  pre { background: #f5f5f7; padding: .8em 1em; overflow-x: auto; border-radius: 4px; }
  img, svg { max-width: 100%; height: auto; }
  blockquote { margin: 1em 0; padding-left: 1em; border-left: 3px solid #c9c9ce; color: #555; }
  @page { size: A4; margin: 16mm 14mm; }
  @media print { body { margin: 0; max-width: none; } pre { white-space: pre-wrap; } h1, h2, h3 { break-after: avoid; } tr, img, svg { break-inside: avoid; } }
`;

/** A complete HTML page for markdown text, titled `title`. */
export function markdownDocument(markdown: string, title: string): string {
  const body = marked.parse(markdown, { async: false });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${DOCUMENT_CSS}</style></head><body>${body}</body></html>`;
}

/** Whether text handed as a PDF or page source is a whole HTML page rather than markdown. */
export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(text);
}
