/**
 * Text preparation for the mail-safety filter, in one linear pass each.
 *
 * - `cleanText` removes what a reader cannot see but a scanner would trip over: zero-width and
 *   bidirectional control characters (a code "48\u200B29\u200B17" reads as 482917), soft hyphens,
 *   private-use characters (the filter uses some as its own markers), and turns CR/CRLF into LF.
 * - `foldText` makes the string the rules match on: same length as its input, one UTF-16 unit per
 *   unit, so a match at [i, j) in the fold is the same span in the visible text. It lowercases,
 *   strips diacritics from Latin letters ("vérification" → "verification"), maps full-width ASCII
 *   (common in Japanese mail: "４８２９１７"), the decimal digits of other scripts ("٤٨٢٩١٧") and
 *   mathematical digits ("𝟒𝟖𝟐") to ASCII, and every kind of space to " ".
 */

/** Characters removed by `cleanText`: zero-width, bidi controls, soft hyphen, BOM, CGJ, Mongolian vowel separator. */
function isInvisible(code: number): boolean {
  return (
    (code >= 0x200b && code <= 0x200f) || // ZWSP, ZWNJ, ZWJ, LRM, RLM
    (code >= 0x202a && code <= 0x202e) || // bidi embeddings and overrides
    (code >= 0x2060 && code <= 0x2064) || // word joiner, invisible operators
    (code >= 0x2066 && code <= 0x2069) || // bidi isolates
    code === 0xfeff ||
    code === 0x00ad ||
    code === 0x034f ||
    code === 0x180e
  );
}

/** Private-use characters (BMP): never meaningful in mail, used by the filter as markers. */
export function isPrivateUse(code: number): boolean {
  return code >= 0xe000 && code <= 0xf8ff;
}

/**
 * Removes invisible and private-use characters and normalises line ends to "\n".
 * Linear in the input; returns the same string when nothing changes.
 */
export function cleanText(input: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c === 0x0d) {
      out += input.slice(from, i);
      if (input.charCodeAt(i + 1) !== 0x0a) out += "\n";
      from = i + 1;
    } else if (isInvisible(c) || isPrivateUse(c)) {
      out += input.slice(from, i);
      from = i + 1;
    }
  }
  return from === 0 ? input : out + input.slice(from);
}

/** Folded unit + 1 for every BMP unit seen so far (0: not computed yet). */
const foldTable = new Uint16Array(65536);

/** The folded UTF-16 unit for one unit (see `foldText`), memoised. */
function foldUnit(c: number): number {
  const known = foldTable[c]!;
  if (known !== 0) return known - 1;
  const folded = computeFold(c);
  foldTable[c] = folded + 1;
  return folded;
}

/** The zero of each block of ten decimal digits in the BMP (Unicode Nd), other than ASCII and full-width. */
const digitZeros = [
  0x0660, 0x06f0, 0x07c0, 0x0966, 0x09e6, 0x0a66, 0x0ae6, 0x0b66, 0x0be6, 0x0c66, 0x0ce6, 0x0d66, 0x0de6, 0x0e50, 0x0ed0, 0x0f20,
  0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0,
  0xa9f0, 0xaa50, 0xabf0,
];

function computeFold(c: number): number {
  for (const zero of digitZeros) if (c >= zero && c < zero + 10) return 0x30 + (c - zero); // "٤٨٢" → "482"
  if (c < 0x80) return c >= 0x41 && c <= 0x5a ? c + 32 : c === 0x09 ? 0x20 : c;
  if (c >= 0xff01 && c <= 0xff5e) return foldUnit(c - 0xfee0); // full-width ASCII
  if (c === 0x3000 || c === 0x00a0 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x205f) return 0x20;
  if (c >= 0xd800 && c <= 0xdfff) return c; // surrogate halves stay as they are
  let folded = c;
  const ch = String.fromCharCode(c);
  const lower = ch.toLowerCase();
  const base = lower.length === 1 ? lower : ch;
  if (c < 0x0250) {
    // Latin-1 and Latin Extended-A/B: keep the base letter of a precomposed one.
    const decomposed = base.normalize("NFD");
    folded = decomposed.charCodeAt(0) < 0x250 ? decomposed.charCodeAt(0) : base.charCodeAt(0);
    if (c === 0xdf) folded = 0xdf; // ß stays ß ("ss" would change the length)
  } else {
    const compat = base.normalize("NFKC");
    folded = compat.length === 1 ? compat.toLowerCase().charCodeAt(0) : base.charCodeAt(0);
  }
  return folded === 0xffff ? c : folded;
}

/**
 * Same-length fold of `text` for matching: lowercase, Latin diacritics stripped, full-width ASCII
 * to ASCII, all spaces (NBSP, thin, ideographic) to " ", tabs to " ". Half-width katakana and other
 * one-to-one compatibility forms are folded by NFKC when the result is a single unit.
 */
export function foldText(text: string): string {
  // Plain ASCII (most mail): lowercasing and tabs keep the length.
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase().replace(/\t/g, " ");
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    // Mathematical digits (U+1D7CE–U+1D7FF, "𝟒𝟖𝟐"): the high half becomes a space, the low half the digit.
    if (c === 0xd835 && next >= 0xdfce && next <= 0xdfff) {
      units[i] = 0x20;
      units[i + 1] = 0x30 + ((next - 0xdfce) % 10);
      i++;
    } else units[i] = foldUnit(c);
  }
  // Chunked to stay under the engine's argument limit.
  let out = "";
  for (let i = 0; i < units.length; i += 8192) out += String.fromCharCode(...units.subarray(i, i + 8192));
  return out;
}

/** ASCII letter or digit (on folded text, so lowercase letters). */
export function isAsciiAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** ASCII digit. */
export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** 1 + (letter or digit) for every BMP unit seen so far (0: not computed yet). */
const wordTable = new Uint8Array(65536);

/** A letter or digit of any script, by UTF-16 unit (surrogate halves count as letters), memoised. */
export function isWordUnit(c: number): boolean {
  let known = wordTable[c]!;
  if (known === 0) {
    known = c >= 0xd800 && c <= 0xdfff ? 2 : /[\p{L}\p{N}]/u.test(String.fromCharCode(c)) ? 2 : 1;
    wordTable[c] = known;
  }
  return known === 2;
}
