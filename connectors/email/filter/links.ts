/**
 * Links in a mail: where they are in the text, and which ones are access links.
 *
 * A link is removed when
 * 1. its URL (or a target unwrapped from a click tracker) says so by itself — a reset, sign-in,
 *    magic-link, verify, activate, recover or unlock path with a token or code, or a parameter named
 *    like a credential (`token=`, `otp=`, `oobCode=`, `reset_password_token=`, `mode=resetPassword`);
 * 2. its anchor text says reset / sign in / verify / confirm your e-mail / recover / "it was me" /
 *    "create a password" — or, when the anchor text says nothing ("click here", a bare URL, an
 *    image without alt), the text around it says so — and the URL carries a token or a code, or is
 *    an opaque click tracker (its target cannot be seen, so it may be the reset link);
 * 3. the mail is an access mail and the URL carries a token or code (fail closed), unless its anchor
 *    is an unsubscribe / privacy / help link;
 * 4. it carries a code that was removed from the text.
 * Meeting join links (Zoom `pwd=`, Teams, Meet, Webex) and mailto:/tel: links always pass.
 */
import { hitsIn, type Hit } from "./keywords.js";
import type { Purpose } from "./lexicon.js";
import { inspectUrl, type UrlFacts } from "./urls.js";

/** What the words of a span say about a link there. */
interface Phrase {
  access: Purpose | null;
  harmless: boolean;
  /** Nothing specific ("click here", "button", empty, a bare URL), or only "Confirm": the text around decides. */
  generic: boolean;
  /** The anchor has words of its own (then only its own line is read around it). */
  says: boolean;
}

function phraseOf(hits: readonly Hit[], text: string): Phrase {
  let access: Purpose | null = null;
  let weak = false;
  let object = false;
  let harmless = false;
  let specific = false;
  for (const h of hits) {
    const i = h.info;
    if (i.link === "strong" || (i.code === "strong" && i.purpose)) access ??= i.purpose ?? "sign-in";
    else if (i.code === "secret" && i.purpose === "password") access ??= "reset";
    if (i.link === "weak") weak = true;
    if (i.link === "object") object = true;
    if (i.link === "harmless") harmless = true;
    if (i.link !== "generic") specific = true;
  }
  if (!access && weak && object) access = "verification";
  const bare = /^\s*(https?:\/\/|www\.)\S*\s*$/i.test(text) || !/[\p{L}\p{N}]/u.test(text);
  const onlyGeneric = hits.length > 0 ? !specific : !/\p{L}{3}|[\u3040-\u9fff]{2}/u.test(text);
  const unsure = weak && !object && !access;
  return { access, harmless, generic: bare || onlyGeneric || unsure, says: !(bare || onlyGeneric) };
}

/** A link to judge: its URLs (href, and a URL shown as its text) and where its text and context are. */
export interface LinkSpot {
  urls: string[];
  /** The anchor text (or the bare URL itself) in the text. */
  start: number;
  end: number;
  /** An HTML anchor (`urls[0]` is its href), not a bare URL in the text. */
  anchor: boolean;
}

/** The verdict on one link. */
export interface LinkVerdict {
  remove: boolean;
  purpose: Purpose | null;
  facts: UrlFacts[];
}

/** Start of the line holding `pos`, looking back at most `limit` characters (-1 when not found). */
export function lineStart(text: string, pos: number, limit: number): number {
  for (let i = pos - 1; i >= 0 && pos - i <= limit; i--) if (text.charCodeAt(i) === 0x0a) return i + 1;
  return pos - limit <= 0 ? 0 : -1;
}

/** End of the line holding `pos`, looking ahead at most `limit` characters (-1 when not found). */
export function lineEnd(text: string, pos: number, limit: number): number {
  for (let i = pos; i < text.length && i - pos <= limit; i++) if (text.charCodeAt(i) === 0x0a) return i;
  return pos + limit >= text.length ? text.length : -1;
}

/**
 * Span of the line around [start, end) (at most 200 before, 100 after) and, when `previousLine`
 * and nothing stands before the link on its line, the previous non-empty line too.
 */
function contextSpan(text: string, start: number, end: number, previousLine: boolean): { start: number; end: number } {
  let from = lineStart(text, start, 200);
  if (previousLine && from >= 0 && !/\p{L}{3}/u.test(text.slice(from, start))) {
    // Also the previous non-empty line ("Reset your password:\n\nhttps://…").
    let k = from - 1;
    while (k > 0 && text.charCodeAt(k - 1) === 0x0a && start - k < 200) k--;
    from = k > 0 ? lineStart(text, k, 200 - (start - k)) : 0;
  }
  const to = lineEnd(text, end, 100);
  return { start: from < 0 ? Math.max(0, start - 200) : from, end: to < 0 ? Math.min(text.length, end + 100) : to };
}

/**
 * Judges one link. `secrets` are the canonical codes removed from the text (uppercase letters and
 * digits); `accessMail` switches on rule 3.
 */
export function judgeLink(spot: LinkSpot, text: string, hits: readonly Hit[], accessMail: boolean, secrets: ReadonlySet<string>, facts: UrlFacts[] = spot.urls.map(inspectUrl)): LinkVerdict {
  const keep: LinkVerdict = { remove: false, purpose: null, facts };
  if (facts.some((f) => f.meeting)) return keep;
  const own = facts.find((f) => f.access);
  if (own) return { remove: true, purpose: own.access, facts };
  for (const f of facts) for (const s of secrets) if (f.canonical.includes(` ${s} `)) return { remove: true, purpose: null, facts };
  const carries = facts.some((f) => f.longToken || f.shortCode);
  const opaque = facts.some((f) => f.opaque);
  const anchorText = text.slice(spot.start, spot.end);
  let phrase = phraseOf(hitsIn(hits, spot.start, spot.end), anchorText);
  if (phrase.generic && !phrase.harmless) {
    const around = contextSpan(text, spot.start, spot.end, !phrase.says);
    const context = phraseOf(hitsIn(hits, around.start, around.end), text.slice(around.start, around.end));
    phrase = { access: phrase.access ?? context.access, harmless: context.harmless && !context.access, generic: true, says: phrase.says };
  }
  if (phrase.harmless && !phrase.access) return keep;
  if (phrase.access && (carries || opaque)) return { remove: true, purpose: phrase.access, facts };
  if (accessMail && carries) return { remove: true, purpose: null, facts };
  return keep;
}

/** A bare URL in the text. */
export interface UrlSpan {
  start: number;
  end: number;
  url: string;
}

const bareUrl = /\b(?:https?:\/\/|www\.)[^\s<>"'`\u007f-\uffff]+/gi;

/**
 * Bare URLs in `text` (http, https, www.), trailing punctuation trimmed. A URL that ends a long
 * line and continues on the next (hard-wrapped plain text) includes the continuation.
 */
export function findUrls(text: string): UrlSpan[] {
  const out: UrlSpan[] = [];
  for (const m of text.matchAll(bareUrl)) {
    let url = m[0];
    const trimmed = /[.,;:!?)\]}>'"*]+$/.exec(url);
    if (trimmed && !(trimmed[0].startsWith(")") && url.includes("("))) url = url.slice(0, url.length - trimmed[0].length);
    const start = m.index;
    let end = start + url.length;
    if (text[end] === "\n" && url.length >= 60) {
      const next = /^[A-Za-z0-9%&=_\-./?~+#]{4,}(?=\s|$)/.exec(text.slice(end + 1, end + 400));
      if (next && /[%&=]|[A-Za-z0-9]{12}/.test(next[0])) end = end + 1 + next[0].length;
    }
    out.push({ start, end, url: url.startsWith("www.") || url.startsWith("WWW.") ? `https://${url}` : url });
  }
  return out;
}

/** Spans of e-mail addresses (local@domain.tld), found without backtracking regexes. */
export function findEmailAddresses(text: string): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const local = /[A-Za-z0-9._%+-]/;
  const domain = /[A-Za-z0-9.-]/;
  let at = text.indexOf("@");
  while (at >= 0) {
    let s = at;
    while (s > 0 && at - s < 64 && local.test(text[s - 1]!)) s--;
    let e = at + 1;
    while (e < text.length && e - at < 255 && domain.test(text[e]!)) e++;
    while (e > at + 1 && text[e - 1] === ".") e--;
    if (s < at && text.slice(at + 1, e).includes(".")) out.push({ start: s, end: e });
    at = text.indexOf("@", Math.max(at + 1, e));
  }
  return out;
}
