/**
 * Finds the lexicon's words in folded text: one left-to-right pass, longest match at each
 * position (a trie walk, so the cost per position is bounded by the longest word, never by the
 * text), matches do not overlap. Latin-script words must stand between non-letters, with an
 * optional plural "s"/"es" ("codes", "Bestätigungscodes"); Chinese and Japanese words match anywhere.
 */
import { foldedLexicon, type WordInfo } from "./lexicon.js";
import { foldText, isWordUnit } from "./normalize.js";

/** One word found: [start, end) in the folded (= visible) text. */
export interface Hit {
  start: number;
  end: number;
  info: WordInfo;
}

interface Entry {
  info: WordInfo;
  /** Starts with a Latin letter or digit: must not start inside a word. */
  startBounded: boolean;
  /** Ends with one: must not end inside a word (a plural "s"/"es" may follow). */
  endBounded: boolean;
}

interface TrieNode {
  /** Children by UTF-16 unit: ASCII in an array, the rest in a map. */
  ascii: (TrieNode | undefined)[] | null;
  other: Map<number, TrieNode> | null;
  entry: Entry | null;
}

const newNode = (): TrieNode => ({ ascii: null, other: null, entry: null });

function child(node: TrieNode, c: number): TrieNode | undefined {
  return c < 128 ? node.ascii?.[c] : node.other?.get(c);
}

function addChild(node: TrieNode, c: number): TrieNode {
  const existing = child(node, c);
  if (existing) return existing;
  const made = newNode();
  if (c < 128) (node.ascii ??= new Array<TrieNode | undefined>(128))[c] = made;
  else (node.other ??= new Map()).set(c, made);
  return made;
}

const latinOrDigit = /[\p{Script=Latin}\p{N}]/u;

function buildTrie(): TrieNode {
  const root = newNode();
  for (const [word, info] of foldedLexicon(foldText)) {
    // Half-width katakana fold to base + combining mark ("ﾊﾟ" → "ハ\u309A"): the decomposed spelling too.
    const spellings = /[\u3040-\u30ff]/.test(word) ? new Set([word, word.normalize("NFD")]) : [word];
    for (const spelling of spellings) {
      let node = root;
      for (let i = 0; i < spelling.length; i++) node = addChild(node, spelling.charCodeAt(i));
      node.entry = { info, startBounded: latinOrDigit.test(spelling[0]!), endBounded: latinOrDigit.test(spelling[spelling.length - 1]!) };
    }
  }
  return root;
}

const root = buildTrie();

/** 1 for every UTF-16 unit some word starts with: most positions are skipped on one lookup. */
const startsAWord = new Uint8Array(65536);
for (let c = 0; c < 128; c++) if (root.ascii?.[c]) startsAWord[c] = 1;
for (const c of root.other?.keys() ?? []) startsAWord[c] = 1;

/** Letter or digit of any script, on folded text (fast path for ASCII). */
function isWordChar(text: string, i: number): boolean {
  if (i < 0 || i >= text.length) return false;
  const c = text.charCodeAt(i);
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
  if (c >= 0x3040 && c <= 0x9fff) return false; // kana and CJK: no word boundaries in the text
  return isWordUnit(c);
}

/** End of a bounded word at `end`, allowing a plural "s"/"es"; -1 when a letter follows. */
function boundedEnd(text: string, end: number): number {
  if (!isWordChar(text, end)) return end;
  const c = text.charCodeAt(end);
  if (c === 0x73 && !isWordChar(text, end + 1)) return end + 1; // "s"
  if (c === 0x65 && text.charCodeAt(end + 1) === 0x73 && !isWordChar(text, end + 2)) return end + 2; // "es"
  return -1;
}

/** Every lexicon word in `folded`, in order. Linear in the text (bounded trie depth). */
export function findWords(folded: string): Hit[] {
  const hits: Hit[] = [];
  let i = 0;
  let prevWord = false;
  while (i < folded.length) {
    const c = folded.charCodeAt(i);
    const here = c < 0x80 ? (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) : isWordChar(folded, i);
    // Inside a Latin word no word can start (every ASCII-initial word is bounded at its start).
    const inside = prevWord && here;
    let node = startsAWord[c] === 0 || (inside && c < 0x80) ? undefined : child(root, c);
    let best: Hit | null = null;
    for (let j = i + 1; node; j++) {
      const e = node.entry;
      if (e && !(e.startBounded && inside)) {
        const end = e.endBounded ? boundedEnd(folded, j) : j;
        if (end >= 0) best = { start: i, end, info: e.info };
      }
      if (j >= folded.length) break;
      node = child(node, folded.charCodeAt(j));
    }
    if (best) {
      hits.push(best);
      i = best.end;
      prevWord = isWordChar(folded, i - 1);
    } else {
      prevWord = here;
      i++;
    }
  }
  return hits;
}

/** Index of the first hit with `start >= pos` (binary search over ordered hits). */
export function firstHitAtOrAfter(hits: readonly Hit[], pos: number): number {
  let lo = 0;
  let hi = hits.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (hits[mid]!.start < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The hits that overlap [from, to). */
export function hitsIn(hits: readonly Hit[], from: number, to: number): Hit[] {
  const out: Hit[] = [];
  // A hit starting before `from` can still reach into the range; words are at most ~40 units long.
  for (let k = firstHitAtOrAfter(hits, from - 48); k < hits.length && hits[k]!.start < to; k++) {
    if (hits[k]!.end > from) out.push(hits[k]!);
  }
  return out;
}
