/**
 * Artifacts: what the person keeps — documents (markdown), PDFs (printed by the shared Chromium),
 * web pages (HTML with its own script: small apps, shown under a policy that forbids every request),
 * data files and images — in versions, with title, kind, task, goal and taint; the tools that make,
 * list and send them; how they are rendered (markdown as a page, a page made self-contained, HTML
 * to PDF) and the policy a web page is served under. It owns no network access and no browser:
 * printing is handed in (`PdfPrinter`, the browser's), serving is web/api's.
 */
export { ArtifactShelf, ARTIFACTS_FOLDER, safeFileName, type ArtifactInput, type ArtifactSink, type ArtifactSource } from "./shelf.js";
export { artifactTools, describeArtifact, type ArtifactToolsDeps } from "./tools.js";
export { makeVersion, ArtifactContentError, MAX_ARTIFACT_BYTES, type ArtifactFrom, type MadeVersion, type PdfPrinter } from "./make.js";
export { renderPdf, countPdfPages, PdfError, type PdfOptions, type RenderedPdf } from "./pdf.js";
export { bundleHtml, resolveReference, type WorkspaceReader } from "./bundle.js";
export { markdownDocument, looksLikeHtml, DOCUMENT_CSS } from "./document.js";
export { ARTIFACT_KINDS, mimeTypeOf, kindOf, isText } from "./kinds.js";
export { guardedPage, inertTags, pageHeaders, framePageHeaders, PAGE_CSP, FRAME_PAGE_CSP, INERT_TAGS } from "./page-policy.js";
