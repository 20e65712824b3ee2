/**
 * The mail-safety filter end to end: subject + body → the text the model may see, with one-time
 * codes, passwords and access links replaced by markers. Pure (no I/O, no clock, no randomness)
 * and linear in the size of the mail. See `connectors/email/safety.ts` for the rules in words.
 */
import { findCandidates, harmlessShape, type Candidate } from "./candidates.js";
import { accessAround, judgeCandidates, purposeNear, unrecognisedAfter, type MailFacts, type Removal } from "./decide.js";
import { htmlToText, type Anchor } from "./html.js";
import { findWords, type Hit } from "./keywords.js";
import { findEmailAddresses, findUrls, judgeLink, lineEnd, lineStart, type LinkSpot } from "./links.js";
import { cleanText, foldText } from "./normalize.js";
import { kindFor, MARKERS, type FilteredMail, type MailContent, type RemovedItem } from "./types.js";

/** Characters of body text the filter reads; the rest is cut (and said so in the text). */
export const MAX_BODY_CHARS = 6_000_000;
/** Characters of HTML converted to text. */
export const MAX_HTML_CHARS = 12_000_000;
/** Characters of subject kept. */
export const MAX_SUBJECT_CHARS = 2_000;

interface Body {
  text: string;
  anchors: Anchor[];
  truncated: boolean;
}

/** Cuts `text` to `max` characters at a whitespace (never inside a token: half a code is still a leak). */
function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  while (end > max - 200 && end > 0 && !/\s/.test(text[end]!)) end--;
  if (!/\s/.test(text[end] ?? " ")) end = text.slice(0, max).search(/\S+$/);
  const rest = text.length - end;
  return { text: `${text.slice(0, Math.max(0, end))}\n[… the rest of this message (${rest} characters) is not shown]`, truncated: true };
}

function bodyOf(mail: MailContent): Body {
  if (typeof mail.html === "string" && mail.html.trim()) {
    const converted = htmlToText(mail.html, MAX_HTML_CHARS);
    if (converted.text.trim() || !mail.text?.trim()) {
      const { text, truncated } = cut(converted.text, MAX_BODY_CHARS);
      return { text, anchors: converted.anchors.filter((a) => a.end <= text.length), truncated: truncated || mail.html.length > MAX_HTML_CHARS };
    }
  }
  const { text, truncated } = cut(cleanText(mail.text ?? ""), MAX_BODY_CHARS);
  return { text, anchors: [], truncated };
}

interface Doc {
  text: string;
  folded: string;
  hits: Hit[];
  subjectEnd: number;
  links: LinkSpot[];
  masked: Uint8Array;
}

function buildDoc(mail: MailContent, body: Body): Doc {
  const subject = cleanText(mail.subject ?? "").replace(/\s+/g, " ").trim().slice(0, MAX_SUBJECT_CHARS);
  const offset = subject.length + 2;
  const text = `${subject}\n\n${body.text}`;
  const folded = foldText(text);
  const masked = new Uint8Array(text.length);
  const urls = findUrls(text);
  for (const span of [...urls, ...findEmailAddresses(text)]) masked.fill(1, span.start, span.end);
  // Our own markers (a mail filtered twice, or quoting one) are neither words nor codes.
  const markerAt = new Uint8Array(text.length);
  for (const marker of Object.values(MARKERS)) {
    for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + marker.length)) {
      masked.fill(1, at, at + marker.length);
      markerAt.fill(1, at, at + marker.length);
    }
  }
  const links: LinkSpot[] = [];
  const inAnchor = new Set<number>();
  let u = 0;
  for (const a of body.anchors) {
    const start = a.start + offset;
    const end = a.end + offset;
    while (u < urls.length && urls[u]!.start < start) u++;
    const shown: string[] = [];
    for (let k = u; k < urls.length && urls[k]!.end <= end; k++) {
      shown.push(urls[k]!.url);
      inAnchor.add(urls[k]!.start);
    }
    links.push({ urls: [a.href, ...shown], start, end, anchor: true });
  }
  for (const url of urls) if (!inAnchor.has(url.start)) links.push({ urls: [url.url], start: url.start, end: url.end, anchor: false });
  const hits = findWords(folded).filter((h) => markerAt[h.start] !== 1);
  return { text, folded, hits, subjectEnd: subject.length, links, masked };
}

/** Meeting invite: a meeting-ID label or a meeting join link. */
function isMeeting(doc: Doc): boolean {
  return doc.hits.some((h) => h.info.harm === "meeting" && h.info.anchor === true) || doc.links.some((l) => l.urls.some((u) => /zoom\.us\/[jw]\/|teams\.microsoft\.com\/l\/meetup-join|meet\.google\.com\/[a-z]|webex\.com\/(meet|join)/i.test(u)));
}

/** The line holding [start, end) has nothing else but decoration: a code shown on its own. */
function standsAlone(text: string, start: number, end: number): boolean {
  const from = lineStart(text, start, 80);
  const to = lineEnd(text, end, 80);
  return from >= 0 && to >= 0 && !/[\p{L}\p{N}]/u.test(text.slice(from, start) + text.slice(end, to));
}

/** Removals so far, with a per-character mask so overlap checks stay O(length of a candidate). */
class Removals {
  readonly list: Removal[] = [];
  private readonly mask: Uint8Array;
  constructor(length: number) {
    this.mask = new Uint8Array(length);
  }
  add(r: Removal): void {
    this.list.push(r);
    this.mask.fill(1, r.start, r.end);
  }
  overlaps(start: number, end: number): boolean {
    for (let i = start; i < end; i++) if (this.mask[i] === 1) return true;
    return false;
  }
  get size(): number {
    return this.list.length;
  }
}

/** At most this many removed codes are searched for elsewhere in the mail (a real mail has a handful). */
const MAX_SECRETS = 256;

/**
 * Filters one mail. Never throws on content; the output `text` is `subject + "\n\n" + body`.
 * Caps: subject 2,000, body 6,000,000 characters (HTML: 12,000,000 characters converted).
 */
export function filterMail(mail: MailContent): FilteredMail {
  const body = bodyOf(mail);
  const doc = buildDoc(mail, body);
  const otp = mail.otpCode?.toUpperCase().replace(/[^A-Z0-9]/g, "") ?? "";
  const facts: MailFacts = {
    folded: doc.folded,
    visible: doc.text,
    hits: doc.hits,
    subjectEnd: doc.subjectEnd,
    meeting: isMeeting(doc),
    subjectAccess: otp.length > 0 || doc.hits.some((h) => h.end <= doc.subjectEnd && h.info.subject),
    masked: doc.masked,
  };
  const candidates = findCandidates(doc.folded, doc.text, doc.masked);
  const none = new Set<string>();
  // Pass 1: what the links and the labelled codes say by themselves.
  const linkVerdicts = doc.links.map((l) => judgeLink(l, doc.text, doc.hits, false, none));
  const linkFacts = linkVerdicts.map((v) => v.facts);
  const codes = judgeCandidates(candidates, facts, linkVerdicts.some((v) => v.remove));
  const removals = new Removals(doc.text.length);
  codes.removals.forEach((r) => removals.add(r));
  const harmlessAt = new Uint8Array(doc.text.length);
  for (const c of codes.harmless) harmlessAt[c.start] = 1;
  for (const h of doc.hits) {
    if (codes.usedAnchors.has(h) || !(h.info.code === "strong" || h.info.code === "secret")) continue;
    if (h.info.code === "secret" && h.info.meetingSensitive && facts.meeting) continue;
    const ahead = Math.min(doc.text.length, h.end + 40);
    if (removals.overlaps(h.end, ahead) || harmlessAt.subarray(h.end, ahead).includes(1)) continue;
    const unit = unrecognisedAfter(h, facts);
    if (unit && !doc.masked[unit.start] && !removals.overlaps(unit.start, unit.end)) removals.add(unit);
  }
  const accessMail = facts.subjectAccess || removals.size > 0 || linkVerdicts.some((v) => v.remove);
  // Pass 2, in an access mail: codes shown on their own line or in the subject, and any link with a token.
  if (accessMail) failClosed(candidates, codes.harmless, removals, facts, doc.text);
  const secrets = new Set<string>();
  for (const r of removals.list) if ((r.canonical?.length ?? 0) >= 4 && secrets.size < MAX_SECRETS) secrets.add(r.canonical!);
  if (otp.length >= 4) secrets.add(otp);
  propagate(candidates, removals, secrets);
  const finalLinks = doc.links.map((l, k) => (linkVerdicts[k]!.remove ? linkVerdicts[k]! : judgeLink(l, doc.text, doc.hits, accessMail, secrets, linkFacts[k])));
  return render(doc, removals.list, finalLinks.map((v, k) => ({ spot: doc.links[k]!, remove: v.remove, purpose: v.purpose })), accessMail, body.truncated);
}

function failClosed(candidates: readonly Candidate[], harmless: ReadonlySet<Candidate>, removals: Removals, facts: MailFacts, text: string): void {
  const mailPurpose = removals.list.find((r) => r.what === "code" && r.purpose)?.purpose ?? null;
  for (const c of candidates) {
    if (harmless.has(c) || removals.overlaps(c.start, c.end) || harmlessShape(c, facts.folded, facts.visible, false)) continue;
    const inSubject = c.end <= facts.subjectEnd;
    const afterColon = /[:：]\s*$/.test(facts.folded.slice(Math.max(0, c.start - 3), c.start)) && accessAround(c, facts);
    if (c.kind === "letters" ? afterColon : inSubject || afterColon || standsAlone(text, c.start, c.end)) {
      removals.add({ start: c.start, end: c.end, what: "code", purpose: purposeNear(c, facts, null) ?? mailPurpose, canonical: c.canonical });
    }
  }
}

/** Every other appearance of a removed code (same letters and digits) is removed too. */
function propagate(candidates: readonly Candidate[], removals: Removals, secrets: ReadonlySet<string>): void {
  if (secrets.size === 0) return;
  const purposeOf = new Map<string, Removal["purpose"]>();
  for (const r of removals.list) if (r.canonical && !purposeOf.has(r.canonical)) purposeOf.set(r.canonical, r.purpose);
  for (const c of candidates) {
    if (removals.overlaps(c.start, c.end)) continue;
    let match: string | null = secrets.has(c.canonical) ? c.canonical : null;
    if (!match && c.canonical.length > 6) for (const s of secrets) if (s.length >= 6 && c.canonical.includes(s)) match = s;
    if (match) removals.add({ start: c.start, end: c.end, what: "code", purpose: purposeOf.get(match) ?? null, canonical: match });
  }
}

interface Edit {
  start: number;
  end: number;
  replacement: string;
  kind?: RemovedItem;
}

function render(doc: Doc, removals: readonly Removal[], links: { spot: LinkSpot; remove: boolean; purpose: Removal["purpose"] }[], accessMail: boolean, truncated: boolean): FilteredMail {
  const edits: Edit[] = [];
  for (const r of removals) {
    const kind = kindFor(r.what, r.purpose);
    edits.push({ start: r.start, end: r.end, replacement: MARKERS[kind], kind: { kind, marker: MARKERS[kind] } });
  }
  for (const { spot, remove, purpose } of links) {
    const shown = doc.text.slice(spot.start, spot.end);
    const shownIsUrl = !spot.anchor || /^\s*(https?:\/\/|www\.)\S+\s*$/i.test(shown);
    const empty = !/[\p{L}\p{N}]/u.test(shown);
    if (remove) {
      const kind = kindFor("link", purpose);
      const item = { kind, marker: MARKERS[kind] };
      if (shownIsUrl || empty) edits.push({ start: spot.start, end: spot.end, replacement: MARKERS[kind], kind: item });
      else edits.push({ start: spot.end, end: spot.end, replacement: ` ${MARKERS[kind]}`, kind: item });
    } else if (spot.anchor) {
      const href = spot.urls[0]!.replace(/^mailto:/i, "");
      if (empty) edits.push({ start: spot.start, end: spot.end, replacement: `${shown}${href}` });
      else if (!shownIsUrl) edits.push({ start: spot.end, end: spot.end, replacement: ` [${href}]` });
      else if (shown.trim() !== href) edits.push({ start: spot.end, end: spot.end, replacement: ` [${href}]` });
    }
  }
  return apply(doc, edits, accessMail, truncated);
}

/** Applies non-overlapping edits (an edit inside an earlier one is dropped, its removal still counted once). */
function apply(doc: Doc, edits: Edit[], accessMail: boolean, truncated: boolean): FilteredMail {
  edits.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let subjectOut = -1;
  let pos = 0;
  const removed: RemovedItem[] = [];
  for (const e of edits) {
    if (e.start < pos) {
      // Inside a span already replaced: an insertion at its very end is dropped, a removal too.
      continue;
    }
    if (subjectOut < 0 && e.start >= doc.subjectEnd) subjectOut = out.length + (doc.subjectEnd - pos);
    out += doc.text.slice(pos, e.start) + e.replacement;
    pos = e.end;
    if (e.kind) removed.push(e.kind);
  }
  if (subjectOut < 0) subjectOut = out.length + (doc.subjectEnd - pos);
  out += doc.text.slice(pos);
  const subject = out.slice(0, subjectOut);
  const body = out.slice(subjectOut + 2);
  return { subject, body, text: `${subject}\n\n${body}`, removed, accessMail, truncated };
}

