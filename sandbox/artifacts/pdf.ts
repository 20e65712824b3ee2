/**
 * HTML to PDF in the shared Chromium: a fresh browser context of its own (no person's profile, no
 * cookies), every request aborted (the page must be self-contained: see bundle.ts), service
 * workers blocked, scripts only when asked (a page artifact may draw its chart with script; a
 * markdown document never runs any), the print media type, A4 unless the page sets its own size.
 * The context is closed afterwards, whatever happened.
 */
import type { Browser } from "playwright-core";

/** Options of {@link renderPdf}. */
export interface PdfOptions {
  /** Run the page's own scripts before printing (default false). */
  scripts?: boolean;
  /** Time limit for loading and printing, ms (default 30 000). */
  timeoutMs?: number;
  /** Largest PDF accepted, bytes (default 50 MiB). */
  maxBytes?: number;
}

/** A rendered PDF. */
export interface RenderedPdf {
  bytes: Buffer;
  /** Pages in the document. */
  pages: number;
}

/** The PDF was not made (too large, timed out, the browser failed). */
export class PdfError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PdfError";
  }
}

/** Pages of a PDF made by Chromium (its page objects are `/Type /Page`, the tree nodes `/Type /Pages`). */
export function countPdfPages(bytes: Buffer): number {
  return bytes.toString("latin1").match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
}

/**
 * Prints self-contained HTML to PDF. @throws PdfError when it takes too long, is too large, or the
 * browser fails
 */
export async function renderPdf(browser: Browser, html: string, options: PdfOptions = {}): Promise<RenderedPdf> {
  const timeout = options.timeoutMs ?? 30_000;
  const context = await browser.newContext({ javaScriptEnabled: options.scripts ?? false, serviceWorkers: "block", acceptDownloads: false });
  try {
    context.setDefaultTimeout(timeout);
    await context.route("**/*", (route) => route.abort("blockedbyclient"));
    const page = await context.newPage();
    await page.setContent(html, { waitUntil: "load", timeout });
    await page.emulateMedia({ media: "print" });
    const bytes = await page.pdf({ format: "A4", printBackground: true, preferCSSPageSize: true, margin: { top: "16mm", bottom: "16mm", left: "14mm", right: "14mm" } });
    const max = options.maxBytes ?? 50 * 1024 * 1024;
    if (bytes.length > max) throw new PdfError(`the PDF would be ${bytes.length} bytes; at most ${max} are kept`);
    return { bytes, pages: countPdfPages(bytes) };
  } catch (error) {
    if (error instanceof PdfError) throw error;
    throw new PdfError(`the PDF could not be made: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`, { cause: error });
  } finally {
    await context.close().catch(() => undefined);
  }
}
