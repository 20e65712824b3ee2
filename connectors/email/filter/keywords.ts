/**
 * Finds the lexicon's words in folded text: one left-to-right pass, longest match at each
 * position (a trie walk, so the cost per position is bounded by the longest word, never by the
 * text), matches do not overlap. Latin-script words must stand between non-letters, with an
 * optional plural "s"/"es" ("codes", "Bestätigungscodes"); Chinese and Japanese words match anywhere.
 */
import { foldedLexicon, type WordInfo } from "./lexicon.js";
import { foldText } from "./normalize.js";

/** One word found: [start, end) in the folded (= visible) text. */
export interface Hit {
  start: number;
  end: number;
  info: WordInfo;
}

interface TrieNode {
  next: Map<number, TrieNode>;
  info: WordInfo | null;
}

function buildTrie(): TrieNode {
  const root: TrieNode = { next: new Map(), info: null };
  for (const [word, info] of foldedLexicon(foldText)) {
    let node = root;
    for (let i = 0; i < word.length; i++) {
      const c = word.charCodeAt(i);
      let child = node.next.get(c);
      if (!child) {
        child = { next: new Map(), info: null };
        node.next.set(c, child);
      }
      node = child;
    }
    node.info = info;
  }
  return root;
}

const root = buildTrie();

/** Letter or digit of any script, on folded text (fast path for ASCII). */
function isWordChar(text: string, i: number): boolean {
  if (i < 0 || i >= text.length) return false;
  const c = text.charCodeAt(i);
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
  if (c >= 0x3040 && c <= 0x9fff) return false; // kana and CJK: no word boundaries in the text
  return /[\p{L}\p{N}]/u.test(text[i]!);
}

/** End of a bounded word at `end`, allowing a plural "s"/"es"; -1 when a letter follows. */
function boundedEnd(text: string, end: number, lastIsWordChar: boolean): number {
  if (!lastIsWordChar || !isWordChar(text, end)) return end;
  const c = text.charCodeAt(end);
  if (c === 0x73 && !isWordChar(text, end + 1)) return end + 1; // "s"
  if (c === 0x65 && text.charCodeAt(end + 1) === 0x73 && !isWordChar(text, end + 2)) return end + 2; // "es"
  return -1;
}

/** Every lexicon word in `folded`, in order. Linear in the text (bounded trie depth). */
export function findWords(folded: string): Hit[] {
  const hits: Hit[] = [];
  let i = 0;
  while (i < folded.length) {
    let node: TrieNode | undefined = root.next.get(folded.charCodeAt(i));
    if (!node) {
      i++;
      continue;
    }
    let best: Hit | null = null;
    const startsWord = !isWordChar(folded, i - 1) || !isWordChar(folded, i);
    for (let j = i + 1; node; j++) {
      if (node.info) {
        const info = node.info;
        if (!info.bounded) best = { start: i, end: j, info };
        else if (startsWord) {
          const end = boundedEnd(folded, j, isWordChar(folded, j - 1));
          if (end >= 0) best = { start: i, end, info };
        }
      }
      if (j >= folded.length) break;
      node = node.next.get(folded.charCodeAt(j));
    }
    if (best) {
      hits.push(best);
      i = best.end;
    } else i++;
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
