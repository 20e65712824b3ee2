/**
 * What an artifact's version holds, made from a workspace file or from text, by kind:
 * - `document`: markdown text, kept as `.md`;
 * - `pdf`: a PDF file kept as it is, or HTML / markdown printed by the shared Chromium (an HTML
 *   page's own script runs first; markdown never runs any);
 * - `page`: HTML made self-contained (workspace images, styles, scripts inlined), or markdown as a
 *   page without script;
 * - `data`: the bytes as they are (CSV, JSON, text, spreadsheets …);
 * - `image`: PNG, JPEG, GIF, WebP or SVG, checked by content.
 *
 * A version is made from what Familiar may read: workspace files through the jail (never a link,
 * never a hardlink), and the taint of every file it was made from (see sandbox/exec's file taints).
 */
import { posix } from "node:path";
import type { ArtifactKind } from "../../core/artifacts/index.js";
import type { Workspace } from "../workspace/index.js";
import { bundleHtml } from "./bundle.js";
import { looksLikeHtml, markdownDocument } from "./document.js";
import { extensionFor, isText, mimeTypeOf } from "./kinds.js";
import type { PdfOptions, RenderedPdf } from "./pdf.js";

/** Prints self-contained HTML to PDF (the shared Chromium; wired by the composition root). */
export type PdfPrinter = (html: string, options: PdfOptions) => Promise<RenderedPdf>;

/** Largest version kept, bytes. */
export const MAX_ARTIFACT_BYTES = 50 * 1024 * 1024;

/** Where a version's content comes from. */
export type ArtifactFrom = { path: string } | { content: string };

/** A made version, ready to save. */
export interface MadeVersion {
  bytes: Buffer;
  mimeType: string;
  name: string;
  /** Workspace files it was made from (the source and what was inlined), for their taint. */
  readFrom: string[];
  /** Pages, for a PDF. */
  pages?: number;
}

/** The content cannot make an artifact of that kind (wrong type, too large, empty). */
export class ArtifactContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArtifactContentError";
  }
}

const IMAGE_MAGIC: Array<[string, (b: Buffer) => boolean]> = [
  ["image/png", (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ["image/jpeg", (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ["image/gif", (b) => b.subarray(0, 6).toString("latin1") === "GIF87a" || b.subarray(0, 6).toString("latin1") === "GIF89a"],
  ["image/webp", (b) => b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP"],
  ["image/svg+xml", (b) => /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg[^>]*>\s*)?<svg[\s>]/i.test(b.subarray(0, 4096).toString("utf8"))],
];

function fileName(title: string, kind: ArtifactKind, mimeType: string, given?: string): string {
  const ext = extensionFor(kind, mimeType);
  if (given && /\.[a-z0-9]{1,8}$/i.test(given)) return given;
  const base = (given ?? title).replace(/[^\p{L}\p{N}._ -]+/gu, "").trim().replace(/\s+/g, "-").slice(0, 80) || "artifact";
  return base.toLowerCase().endsWith(ext) ? base : `${base}${ext}`;
}

async function readSource(ws: Workspace, from: ArtifactFrom): Promise<{ bytes: Buffer; path: string | null }> {
  if ("content" in from) return { bytes: Buffer.from(from.content, "utf8"), path: null };
  return { bytes: await ws.readBytes(from.path, MAX_ARTIFACT_BYTES), path: from.path };
}

/**
 * Makes a version of kind `kind` titled `title` from `from`. `name` is an optional file name (its
 * extension tells a data file's type). @throws ArtifactContentError, JailError (a path refused),
 * PdfError (printing failed)
 */
export async function makeVersion(input: { ws: Workspace; kind: ArtifactKind; title: string; from: ArtifactFrom; name?: string; printPdf: PdfPrinter }): Promise<MadeVersion> {
  const { ws, kind, title, from } = input;
  const source = await readSource(ws, from);
  if (source.bytes.length === 0) throw new ArtifactContentError("the content is empty");
  if (source.bytes.length > MAX_ARTIFACT_BYTES) throw new ArtifactContentError(`the content is ${source.bytes.length} bytes; an artifact holds at most ${MAX_ARTIFACT_BYTES}`);
  const sourceType = source.path ? mimeTypeOf(source.path) : input.name ? mimeTypeOf(input.name) : null;
  const baseDir = source.path ? posix.dirname(source.path).replace(/^\.$/, "") : "";
  const readFrom = source.path ? [source.path] : [];
  const text = () => source.bytes.toString("utf8");
  const isHtml = sourceType === "text/html" || (sourceType === null || sourceType === "text/plain" ? looksLikeHtml(text()) : false);
  const reader = async (path: string) => ws.readBytes(path, 5 * 1024 * 1024).catch(() => null);
  const page = async (): Promise<string> => {
    const html = isHtml ? text() : markdownDocument(text(), title);
    const bundled = await bundleHtml(html, baseDir, reader);
    readFrom.push(...bundled.inlined);
    return bundled.html;
  };
  switch (kind) {
    case "document": {
      if (sourceType !== null && !isText(sourceType)) throw new ArtifactContentError(`a document is markdown text; ${source.path ?? input.name} is ${sourceType}`);
      return { bytes: source.bytes, mimeType: "text/markdown", name: fileName(title, kind, "text/markdown", input.name), readFrom };
    }
    case "pdf": {
      if (source.bytes.subarray(0, 5).toString("latin1") === "%PDF-") return { bytes: source.bytes, mimeType: "application/pdf", name: fileName(title, kind, "application/pdf", input.name), readFrom };
      if (sourceType !== null && !isText(sourceType)) throw new ArtifactContentError(`a PDF is made from HTML or markdown (or is a PDF file); ${source.path ?? input.name} is ${sourceType}`);
      const pdf = await input.printPdf(await page(), { scripts: isHtml });
      return { bytes: pdf.bytes, mimeType: "application/pdf", name: fileName(title, kind, "application/pdf"), readFrom, pages: pdf.pages };
    }
    case "page": {
      if (sourceType !== null && !isText(sourceType)) throw new ArtifactContentError(`a web page is HTML (or markdown); ${source.path ?? input.name} is ${sourceType}`);
      return { bytes: Buffer.from(await page(), "utf8"), mimeType: "text/html", name: fileName(title, kind, "text/html"), readFrom };
    }
    case "image": {
      const type = IMAGE_MAGIC.find(([, test]) => test(source.bytes))?.[0];
      if (type === undefined) throw new ArtifactContentError("an image is PNG, JPEG, GIF, WebP or SVG, and this is none of them");
      return { bytes: source.bytes, mimeType: type, name: fileName(title, kind, type, input.name ?? (source.path ? posix.basename(source.path) : undefined)), readFrom };
    }
    case "data": {
      const type = sourceType ?? (looksLikeHtml(text()) ? "text/html" : "text/plain");
      return { bytes: source.bytes, mimeType: type, name: fileName(title, kind, type, input.name ?? (source.path ? posix.basename(source.path) : undefined)), readFrom };
    }
  }
}
