/**
 * The kinds of artifact a person keeps, and how a file's name and type map to them:
 * - `document`: markdown (`.md`), shown rendered;
 * - `pdf`: a PDF (rendered from HTML or markdown by the shared Chromium, or kept as made);
 * - `page`: a web page, HTML with its own script and style (a small app), opened at its own URL
 *   under a policy that forbids every request;
 * - `data`: a data file (CSV, JSON, text, spreadsheets …), shown as text when it is text;
 * - `image`: PNG, JPEG, GIF, WebP or SVG.
 */
import mime from "mime-types";
import { extname } from "node:path";

/** An artifact's kind. */
export type ArtifactKind = "document" | "pdf" | "page" | "data" | "image";

/** Every kind, for schemas. */
export const ARTIFACT_KINDS = ["document", "pdf", "page", "data", "image"] as const satisfies readonly ArtifactKind[];

/** Image types shown inline (others are data files). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"]);

/** The MIME type of a workspace file by its name (`application/octet-stream` when unknown). */
export function mimeTypeOf(name: string): string {
  const ext = extname(name).toLowerCase();
  if (ext === ".md" || ext === ".markdown") return "text/markdown";
  const type = mime.lookup(name);
  return typeof type === "string" ? type : "application/octet-stream";
}

/** The kind a file would be kept as, from its MIME type. */
export function kindOf(mimeType: string): ArtifactKind {
  if (mimeType === "text/markdown") return "document";
  if (mimeType === "application/pdf") return "pdf";
  if (mimeType === "text/html") return "page";
  if (IMAGE_TYPES.has(mimeType)) return "image";
  return "data";
}

/** The file extension an artifact of this kind gets when its name has none (`.md`, `.pdf`, …). */
export function extensionFor(kind: ArtifactKind, mimeType: string): string {
  if (kind === "document") return ".md";
  if (kind === "pdf") return ".pdf";
  if (kind === "page") return ".html";
  const ext = mime.extension(mimeType);
  return ext ? `.${ext}` : "";
}

/** Whether bytes of this type read as text (markdown, HTML, CSV, JSON, SVG, plain text …). */
export function isText(mimeType: string): boolean {
  return mimeType.startsWith("text/") || mimeType === "application/json" || mimeType === "image/svg+xml" || mimeType === "application/xml";
}
