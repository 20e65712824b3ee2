/**
 * Which code-shaped tokens are access secrets: each candidate is judged by the word that labels
 * it (its anchor) and by the words around it.
 *
 * - The anchor is the nearest labelling word before the candidate (within 160 characters and 4
 *   line breaks), or — for "482917 is your code" — a code word after it on the same line. An
 *   anchor labels one candidate, plus a list of further codes directly below it (backup codes).
 * - A harmless label ("order number", "tracking number", "meeting ID", "zip code", "promo code",
 *   "Order 4829173") keeps the number. A strong code word ("verification code", "验证码",
 *   "認証コード") removes it. A secret noun (password, PIN, passcode) removes it unless the mail is
 *   a meeting invite. A bare "code" removes it only with access context (sign in, verify, reset,
 *   "do not share", "expires in" within 240 characters, or an access subject) and no promo,
 *   booking or meeting context.
 * - `unrecognisedAfter`: after a strong code word or a secret noun, whatever stands where the
 *   code would stand is removed even when it has no known shape ("code: ✱AB-9✱").
 */
import { harmlessShape, type Candidate } from "./candidates.js";
import { firstHitAtOrAfter, hitsIn, type Hit } from "./keywords.js";
import type { Purpose } from "./lexicon.js";

/** What the rules know about the whole mail. */
export interface MailFacts {
  folded: string;
  /** The text itself (same length as `folded`). */
  visible: string;
  hits: Hit[];
  /** The subject is text[0, subjectEnd). */
  subjectEnd: number;
  /** A meeting invite: a meeting ID label or a meeting join link anywhere. */
  meeting: boolean;
  /** The subject names an access mail, or the mail carries an OTP-Token header. */
  subjectAccess: boolean;
  /** 1 where the text is a URL or an e-mail address. */
  masked?: Uint8Array;
}

/** A span to replace, with the purpose of what it held. */
export interface Removal {
  start: number;
  end: number;
  what: "code" | "link";
  purpose: Purpose | null;
  canonical?: string;
}

const WINDOW_BEFORE = 160;
const CONTEXT_BEFORE = 240;
const CONTEXT_AFTER = 160;

const gapChars = /[\s:：\-–—=>»«"'“”„*_()[\]「」『』【】〔〕（）#.,]/g;
const copulas = new Set(["", "is", "ist", "lautet", "est", "es", "e", "sera", "are", "sind", "sont", "son", "sao", "是", "为", "為", "は", "が", "です", "lautet wie folgt", "is as follows"]);

/** The anchor–candidate gap is only punctuation and a copula ("code: ", "code is ", "コードは「"). */
export function isDirectGap(gap: string): boolean {
  if (gap.length > 40) return false;
  return copulas.has(gap.replace(gapChars, " ").trim().replace(/\s+/g, " "));
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 0x0a) n++;
  return n;
}

const isCodeAnchor = (h: Hit) => h.info.code !== undefined;
const isHarmAnchor = (h: Hit) => h.info.anchor !== undefined && h.info.code === undefined;

/** The anchor of `c`, or null. */
function anchorOf(c: Candidate, facts: MailFacts): Hit | null {
  const { folded, hits } = facts;
  let preceding: Hit | null = null;
  for (let k = firstHitAtOrAfter(hits, c.start) - 1; k >= 0; k--) {
    const h = hits[k]!;
    if (h.end > c.start) continue;
    if (c.start - h.end > WINDOW_BEFORE) break;
    const gap = folded.slice(h.end, c.start);
    if (countNewlines(gap) > 4) break;
    if (isHarmAnchor(h)) {
      if (h.info.anchor === "tight" && !/^[\s#:.\-№°]{0,3}$|^\s?(no|nr|n°|nº)\.?\s?$/.test(gap)) continue;
      if (h.info.anchor !== "tight" && (gap.length > 60 || countNewlines(gap) > 1)) continue;
      // "Enter this code to confirm your order: 482917": a code word earlier on the line wins.
      const line = folded.slice(Math.max(0, h.start - 80), h.start);
      const earlier = hitsIn(hits, h.start - 80, h.start).find((e) => isCodeAnchor(e) && e.info.code !== "noun" && !line.slice(e.end - (h.start - line.length)).includes("\n"));
      preceding = h.info.anchor === "tight" && earlier ? earlier : h;
      break;
    }
    if (isCodeAnchor(h)) {
      // Not across another sentence or a link: "…password, open this link: <URL>. Call 1-800-…".
      if (!isDirectGap(gap) && (/[.!?。！？]\s+\S*\p{L}/u.test(gap) || facts.masked?.subarray(h.end, c.start).includes(1))) break;
      preceding = h;
      break;
    }
  }
  const following = hitsIn(hits, c.end, c.end + 48).find((h) => isCodeAnchor(h) && !folded.slice(c.end, h.start).includes("\n"));
  if (!following) return preceding;
  if (!preceding) return following;
  const precedingGap = folded.slice(preceding.end, c.start);
  if (isDirectGap(precedingGap) || (precedingGap.length <= 40 && !precedingGap.includes("\n"))) return preceding;
  return following;
}

function contextHits(c: { start: number; end: number }, facts: MailFacts): Hit[] {
  return hitsIn(facts.hits, c.start - CONTEXT_BEFORE, c.end + CONTEXT_AFTER);
}

/** Access words around a position: qualifiers, warnings, strong code and link words (weak qualifiers only when `weak`). */
export function accessAround(c: { start: number; end: number }, facts: MailFacts, weak = true): boolean {
  return contextHits(c, facts).some(
    (h) =>
      (h.info.qualifier && (weak || h.info.qualifier !== "weak")) ||
      h.info.warning ||
      h.info.code === "strong" ||
      (h.info.code === "secret" && !(h.info.meetingSensitive && facts.meeting)) ||
      (h.info.link === "strong" && h.info.qualifier !== "weak"),
  );
}

/** The purpose named nearest to `pos` (anchor first, then qualifiers around it). */
export function purposeNear(pos: { start: number; end: number }, facts: MailFacts, anchor: Hit | null): Purpose | null {
  if (anchor?.info.purpose) return anchor.info.purpose;
  let best: { d: number; p: Purpose } | null = null;
  for (const h of contextHits(pos, facts)) {
    if (!h.info.purpose || !(h.info.qualifier || h.info.code)) continue;
    const d = h.end <= pos.start ? pos.start - h.end : h.start - pos.end;
    if (!best || d < best.d) best = { d, p: h.info.purpose };
  }
  return best?.p ?? null;
}

type Verdict = { remove: true; anchor: Hit | null } | { remove: false; harmless: boolean };

function judge(c: Candidate, anchor: Hit | null, facts: MailFacts, accessSoFar: boolean): Verdict {
  if (!anchor) return { remove: false, harmless: false };
  if (isHarmAnchor(anchor)) return { remove: false, harmless: true };
  const gap = facts.folded.slice(anchor.end <= c.start ? anchor.end : c.end, anchor.end <= c.start ? c.start : anchor.start);
  const direct = isDirectGap(gap);
  if (harmlessShape(c, facts.folded, facts.visible, direct)) return { remove: false, harmless: true };
  // Capitals alone ("XQWPTK") only right after the word, or after a colon in the same sentence.
  if (c.kind === "letters" && !direct && !(/[:：]\s*$/.test(gap) && !/[.!?。\n]/.test(gap))) return { remove: false, harmless: false };
  const ctx = contextHits(c, facts);
  const meeting = facts.meeting || ctx.some((h) => h.info.harm === "meeting");
  const harmful = ctx.some((h) => h.info.harm === "promo" || h.info.harm === "booking");
  switch (anchor.info.code) {
    case "strong":
      return { remove: true, anchor };
    case "secret":
      return anchor.info.meetingSensitive && meeting ? { remove: false, harmless: true } : { remove: true, anchor };
    case "ambiguous": {
      if ((anchor.info.meetingSensitive && meeting) || harmful) return { remove: false, harmless: true };
      const receipt = ctx.some((h) => h.info.harm === "commerce") && !ctx.some((h) => h.info.warning);
      return receipt ? { remove: false, harmless: true } : { remove: true, anchor };
    }
    default: {
      if (harmful || meeting) return { remove: false, harmless: true };
      // In the subject, "Ridewell code 4419" is how code mails are titled; "Your Acme code: 640311"
      // — a bare number right after "code" — is how code mails are written (fail closed).
      const inSubject = c.end <= facts.subjectEnd && anchor.end <= facts.subjectEnd && direct;
      const bareNumber = direct && c.kind === "digits" && c.canonical.length <= 8 && anchor.end <= c.start;
      const access = inSubject || bareNumber || accessSoFar || facts.subjectAccess || accessAround(c, facts, false);
      return access ? { remove: true, anchor } : { remove: false, harmless: false };
    }
  }
}

/** A password keeps its symbols: "Xk82!pQ#" is removed whole, not as "Xk82". */
function wholeSecret(visible: string, c: Candidate): { start: number; end: number } {
  const part = /[A-Za-z0-9!#$%&*+=?@^_~\-]/;
  let start = c.start;
  let end = c.end;
  while (start > 0 && c.start - start < 64 && part.test(visible[start - 1]!)) start--;
  while (end < visible.length && end - c.end < 64 && part.test(visible[end]!)) end++;
  return { start, end };
}

/** Result of the anchored pass: removals, and candidates known harmless (never removed later). */
export interface CodeVerdicts {
  removals: Removal[];
  harmless: Set<Candidate>;
  /** Code anchors that labelled a removed candidate directly. */
  usedAnchors: Set<Hit>;
}

/** The anchored pass over all candidates (in text order). */
export function judgeCandidates(candidates: readonly Candidate[], facts: MailFacts, accessSoFar: boolean): CodeVerdicts {
  const removals: Removal[] = [];
  const harmless = new Set<Candidate>();
  const usedAnchors = new Set<Hit>();
  const lastEnd = new Map<Hit, number>();
  for (const c of candidates) {
    const anchor = anchorOf(c, facts);
    if (anchor && isCodeAnchor(anchor) && lastEnd.has(anchor)) {
      // Only a list of further codes directly below continues the same label.
      if (/\p{L}/u.test(facts.folded.slice(lastEnd.get(anchor), c.start))) continue;
    }
    const verdict = judge(c, anchor, facts, accessSoFar || removals.length > 0);
    if (verdict.remove) {
      const purpose = purposeNear(c, facts, verdict.anchor);
      const span = purpose === "password" ? wholeSecret(facts.visible, c) : c;
      removals.push({ start: span.start, end: span.end, what: "code", purpose, canonical: c.canonical });
      if (anchor) {
        lastEnd.set(anchor, c.end);
        if (anchor.end <= c.start && isDirectGap(facts.folded.slice(anchor.end, c.start))) usedAnchors.add(anchor);
        else if (anchor.start >= c.end) usedAnchors.add(anchor);
      }
    } else if (verdict.harmless) harmless.add(c);
    else if (anchor && isCodeAnchor(anchor)) lastEnd.set(anchor, c.end);
  }
  return { removals, harmless, usedAnchors };
}

const tokenChar = (c: number) => c > 0x20 && c !== 0x3000 && !(c >= 0x3001 && c <= 0x303f) && !(c >= 0x3040 && c <= 0x9fff) && !(c >= 0xff01 && c <= 0xff65);

/**
 * After a strong code word or a secret noun that labelled no candidate directly: the "unit" where
 * the code stands (up to 4 tokens, 40 characters, not crossing a sentence end or an ordinary word)
 * is removed whatever its shape. A secret noun takes one token, a lowercase word only after ":".
 */
export function unrecognisedAfter(anchor: Hit, facts: MailFacts): Removal | null {
  const { folded } = facts;
  let i = anchor.end;
  let copula = false;
  while (i < folded.length && i - anchor.end <= 40) {
    if (/[\s:：=\-–—>"'“”„«»「」『』【】(*_#]/.test(folded[i]!)) {
      i++;
      continue;
    }
    const word = copula ? null : /^(?:is|ist|lautet|est|es|e|sera|are|sind|sont|son|sao|是|为|為|は|が)(?![a-z])/.exec(folded.slice(i, i + 8));
    if (!word) break;
    i += word[0].length;
    copula = true;
  }
  const gap = folded.slice(anchor.end, i);
  if (i - anchor.end > 40 || countNewlines(gap) > 2) return null;
  const secret = anchor.info.code === "secret";
  const colon = /[:：=]/.test(gap);
  let end = i;
  let tokens = 0;
  for (let j = i; j < folded.length && tokens < (secret ? 1 : 4); ) {
    let k = j;
    while (k < folded.length && tokenChar(folded.charCodeAt(k)) && k - j < 64) k++;
    if (k === j) break;
    let token = folded.slice(j, k);
    const sentenceEnd = token.length > 1 && /[.,;!?)]$/.test(token);
    if (sentenceEnd) token = token.slice(0, -1);
    const isWord = /^\p{L}[\p{Ll}\p{Lo}]*$/u.test(token);
    if (isWord && !(secret && colon)) break;
    end = j + token.length;
    tokens++;
    if (sentenceEnd || folded.charCodeAt(k) !== 0x20 || end - i > 40) break;
    j = k + 1;
  }
  const unit = folded.slice(i, end);
  if (unit.replace(/[\s\p{P}]/gu, "").length < (secret ? 1 : 4)) return null;
  return { start: i, end, what: "code", purpose: anchor.info.purpose ?? null, canonical: unit.toUpperCase().replace(/[^A-Z0-9]/g, "") };
}
