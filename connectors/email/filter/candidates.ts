/**
 * Code-shaped tokens in folded text — what could be a one-time code — found in one linear pass.
 *
 * A candidate is a run of ASCII letters/digits, joined with the next runs when they look like one
 * code written in pieces: digit groups of at most 4 separated by spaces ("4 8 2 9 1 7",
 * "482 917"), groups of up to 8 joined by one "-", "." or "–" ("482-917", "G-482917"), any groups
 * joined by "_" into a long key ("sk_live_…"), digit groups of up to 3 one per line (a code in table
 * cells or split by `<br>`). Kinds: `digits` (4–12 digits), `alnum` (4–15 letters and
 * digits, with a digit), `letters` (4–12 capitals, e.g. "KXQWPT" — only ever removed right after
 * an access word), `token` (16+ characters, or 13+ digits).
 *
 * `harmlessShape` says which candidates are numbers of another kind by their shape alone: dates,
 * prices and amounts, percentages, phone numbers written with "+", parts of "12/05/2024" or
 * "1,234.56", years (19xx/20xx) unless an access word introduces them directly.
 */
import { isAsciiAlnum, isDigit } from "./normalize.js";

export type CandidateKind = "digits" | "alnum" | "letters" | "token";

/** One code-shaped token: [start, end) in the text; `canonical` is its letters and digits, uppercased. */
export interface Candidate {
  start: number;
  end: number;
  kind: CandidateKind;
  canonical: string;
  /** Number of groups it was joined from. */
  groups: number;
}

const MAX_JOINED = 64;

interface Run {
  start: number;
  end: number;
  digitsOnly: boolean;
  hasDigit: boolean;
}

function readRun(folded: string, i: number): Run {
  let j = i;
  let digitsOnly = true;
  let hasDigit = false;
  while (j < folded.length && isAsciiAlnum(folded.charCodeAt(j))) {
    if (isDigit(folded.charCodeAt(j))) hasDigit = true;
    else digitsOnly = false;
    j++;
  }
  return { start: i, end: j, digitsOnly, hasDigit };
}

interface Separator {
  next: number;
  /** "-" / "–" alone or as " - ", "." / "·" / "_" alone. */
  dash: boolean;
  /** The separator is "_" (keys and tokens: "sk_live_…" joins whatever the lengths). */
  underscore: boolean;
  /** The dash had spaces around it (" - "): digit groups only. */
  spaced: boolean;
  newline: boolean;
}

const isDash = (c: number): boolean => c === 0x2d || c === 0x2013;

/** The separator after `end` and where the next run starts, or null when none can follow. */
function readSeparator(folded: string, end: number): Separator | null {
  const c0 = folded.charCodeAt(end);
  const c1 = folded.charCodeAt(end + 1);
  let len = 0;
  let dash = false;
  let spaced = false;
  let newline = false;
  if (c0 === 0x5f) [len, dash] = [1, true]; // "sk_live_…": an underscore joins like a dash
  else if (isDash(c0) || c0 === 0x2e || c0 === 0xb7) [len, dash] = [1, true];
  else if (c0 === 0x20 && isDash(c1) && folded.charCodeAt(end + 2) === 0x20) [len, dash, spaced] = [3, true, true];
  else if (c0 === 0x20) len = c1 === 0x20 ? 2 : 1;
  else if (c0 === 0x0a) [len, newline] = [1, true];
  const next = end + len;
  if (len === 0 || next >= folded.length || !isAsciiAlnum(folded.charCodeAt(next))) return null;
  return { next, dash, spaced, newline, underscore: c0 === 0x5f };
}

function joinable(a: Run, b: Run, sep: Separator): boolean {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  // Digits one to three per line ("4\n8\n2…", "48<br>29<br>17"): one code written downwards.
  if (sep.newline) return a.digitsOnly && b.digitsOnly && la <= 3 && lb <= 3;
  if (sep.spaced) return a.digitsOnly && b.digitsOnly && la <= 6 && lb <= 6;
  if (sep.dash) return (la <= 8 && lb <= 8) || (sep.underscore && la + lb >= 16);
  return a.digitsOnly && b.digitsOnly && la <= 4 && lb <= 4;
}

function classify(visible: string, start: number, end: number, canonical: string): CandidateKind | null {
  const digits = canonical.replace(/\D/g, "").length;
  const len = canonical.length;
  if (digits === len) return len >= 4 && len <= 12 ? "digits" : len >= 13 ? "token" : null;
  if (digits === 0) {
    const original = visible.slice(start, end);
    return len >= 4 && len <= 12 && original === original.toUpperCase() ? "letters" : null;
  }
  if (len >= 16) return "token";
  return len >= 4 ? "alnum" : null;
}

function hasLowercase(visible: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) {
    const c = visible.charCodeAt(k);
    if (c >= 0x61 && c <= 0x7a) return true;
  }
  return false;
}

function push(out: Candidate[], visible: string, folded: string, piece: readonly Run[]): void {
  const start = piece[0]!.start;
  const end = piece[piece.length - 1]!.end;
  let canonical = "";
  for (const r of piece) canonical += folded.slice(r.start, r.end);
  canonical = canonical.toUpperCase();
  const kind = classify(visible, start, end, canonical);
  if (kind) out.push({ start, end, kind, canonical, groups: piece.length });
}

/**
 * Every candidate in `folded` (the fold of `visible`), skipping spans where `masked[i]` is 1 (URLs,
 * e-mail addresses). A joined run longer than 12 digits or 64 characters is split back into its
 * groups, each judged alone.
 */
export function findCandidates(folded: string, visible: string, masked: Uint8Array): Candidate[] {
  const out: Candidate[] = [];
  let i = 0;
  while (i < folded.length) {
    if (!isAsciiAlnum(folded.charCodeAt(i)) || masked[i] === 1) {
      i++;
      continue;
    }
    const first = readRun(folded, i);
    // An ordinary word (lowercase letters, or too long) that no dash joins to more: not a code.
    if (!first.hasDigit && !isDash(folded.charCodeAt(first.end)) && folded.charCodeAt(first.end) !== 0x5f && (first.end - first.start > 15 || hasLowercase(visible, first.start, first.end))) {
      i = first.end;
      continue;
    }
    const runs: Run[] = [first];
    for (;;) {
      const last = runs[runs.length - 1]!;
      const sep = readSeparator(folded, last.end);
      if (!sep || masked[sep.next] === 1) break;
      const next = readRun(folded, sep.next);
      if (!joinable(last, next, sep) || next.end - runs[0]!.start > MAX_JOINED) break;
      runs.push(next);
    }
    let allDigits = true;
    let total = 0;
    for (const r of runs) {
      allDigits &&= r.digitsOnly;
      total += r.end - r.start;
    }
    if (runs.length > 1 && allDigits && total > 12) for (const r of runs) push(out, visible, folded, [r]);
    else push(out, visible, folded, runs);
    i = runs[runs.length - 1]!.end;
  }
  return out;
}

// Units and currencies stand right next to the number (a space at most, never a line break).
const currencyBefore = /(?:[$€£¥₹₩¢]|\b(?:usd|eur|gbp|chf|jpy|cny|rmb|brl|r\$|mxn|cad|aud|sek|nok|dkk|pln|us\$|ca\$|a\$)) ?$/;
const currencyAfter = /^ ?(?:[$€£¥₹₩%]|円|元|块|(?:usd|eur|gbp|chf|jpy|cny|brl|mxn|kr|zl|euro|euros|dollars?|reais|pesos)\b)/;
const unitAfter = /^ ?(?:kg|g|km|m|cm|mm|mb|gb|tb|kb|px|ml|l|min|mins|minutes|minuten|h|hrs|hours|stunden|sec|seconds|mah|kwh|w|v|mhz|ghz|p|fps|dpi)\b/;

function isDate(canonicalRaw: string): boolean {
  const m = /^(\d{1,4})[-./–](\d{1,2})[-./–](\d{1,4})$/.exec(canonicalRaw);
  if (!m) return false;
  const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const plausible = (y: number, mo: number, d: number) => mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && (y < 100 || (y >= 1900 && y <= 2100));
  return plausible(a, b, c) || plausible(c, b, a) || plausible(c, a, b);
}

/**
 * True when the candidate is a number of another kind by its shape: a date, an amount or price,
 * a percentage or measure, a "+" phone number, a part of a larger number expression, a year
 * (unless `direct`, i.e. an access word introduces it: "your code is 2024").
 */
export function harmlessShape(c: Candidate, folded: string, visible: string, direct: boolean): boolean {
  if (c.kind === "letters" || c.kind === "token") return false;
  const raw = folded.slice(c.start, c.end);
  if (isDate(raw)) return true;
  const before = folded.slice(Math.max(0, c.start - 6), c.start);
  const after = folded.slice(c.end, c.end + 10);
  if (currencyBefore.test(before) || currencyAfter.test(after)) return true;
  // Decimal and thousands separators are ASCII ("1,234.56"); "，" in Chinese text is punctuation.
  const asciiAfter = visible.charCodeAt(c.end) === 0x2c || visible.charCodeAt(c.end) === 0x2e;
  const asciiBefore = visible.charCodeAt(c.start - 1) === 0x2c || visible.charCodeAt(c.start - 1) === 0x2e;
  if ((asciiAfter && /^[.,]\d{1,2}(?!\d)/.test(after)) || (asciiBefore && /\d[.,]$/.test(before)) || /\d[/:]$/.test(before) || /^[/:]\d/.test(after)) return true;
  if (!direct && unitAfter.test(after) && c.kind === "digits") return true;
  if (/\+\s?$/.test(before) || /\(\d{1,4}\)\s?$/.test(before)) return true;
  if (/^[年月日時分]/.test(after)) return true;
  if (!direct && c.kind === "digits" && c.groups === 1 && /^(19|20)\d\d$/.test(raw)) return true;
  // Phone numbers: three or more groups, nine or more digits ("030 1234 5678", "01 23 45 67 89", "1-800-555-0199").
  if (!direct && c.kind === "digits" && c.groups >= 3 && c.canonical.length >= 9) return true;
  return false;
}
