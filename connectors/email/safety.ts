/**
 * Mail safety — the one door (placeholder doc; the full rules are written below in the final version).
 */
export { filterMail, MAX_BODY_CHARS, MAX_HTML_CHARS, MAX_SUBJECT_CHARS } from "./filter/redact.js";
export { contentOf, filterMailSource, MailReadError, MAX_SOURCE_BYTES, parseMailSource, type ParsedSource } from "./filter/parse.js";
export { MARKERS, type FilteredMail, type MailContent, type RemovedItem, type RemovedKind } from "./filter/types.js";
