/**
 * What a model may read as the same text: a fold of each character to its UTS #39 skeleton, so a
 * fake marker written with look-alikes is found wherever it hides.
 *
 * One character folds by: NFKC (full-width, mathematical, compatibility forms) → drop default-ignorable
 * code points (zero-width characters, joiners, soft hyphen, variation selectors, tags, bidi controls)
 * and white space → NFD and drop combining marks → the prototype of its confusables class in both
 * cases (Unicode's confusables.txt through the `unhomoglyph` package: Cyrillic `е` → `e`, Greek
 * `υ` → `u`, Cyrillic `Т` → `T`) → lower case. A character that folds to nothing is invisible to
 * the comparison. Source of the data: https://www.unicode.org/Public/security/latest/confusables.txt
 * (UTS #39 §4, "skeleton"), as packaged by unhomoglyph 1.0.6 (Unicode 13.0).
 */
import unhomoglyph from "unhomoglyph";

const IGNORED = /[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Cc}]/gu;
const MARKS = /\p{M}/gu;

/** Angle brackets the confusables data does not map to `<`, but a reader may take for one. */
const EXTRA_LESS = new Set(["\u2329", "\u27E8", "\u3008", "\u276C", "\u276E", "\u2039", "\u00AB", "\u226A", "\u02C2", "\u1438"]);

const cache = new Map<string, string>();

/** The skeleton of one character (a code point), see module doc. */
export function foldChar(ch: string): string {
  const cached = cache.get(ch);
  if (cached !== undefined) return cached;
  let out: string;
  if (EXTRA_LESS.has(ch)) out = "<";
  else {
    const bare = ch.normalize("NFKC").replace(IGNORED, "").normalize("NFD").replace(MARKS, "");
    out = bare === "" ? "" : unhomoglyph(unhomoglyph(bare.toUpperCase()).toLowerCase()).toLowerCase().normalize("NFD").replace(MARKS, "");
  }
  if (cache.size < 20_000) cache.set(ch, out);
  return out;
}

/** A folded text and, for each of its UTF-16 units, the index in the original text it came from. */
export interface FoldedText {
  text: string;
  /** `from[i]`: index (in the original) of the code point that produced folded unit `i`. */
  from: number[];
}

/** Folds a whole text (see {@link foldChar}), keeping where each folded unit came from. */
export function foldText(text: string): FoldedText {
  let folded = "";
  const from: number[] = [];
  let index = 0;
  for (const ch of text) {
    const f = foldChar(ch);
    folded += f;
    for (let i = 0; i < f.length; i++) from.push(index);
    index += ch.length;
  }
  return { text: folded, from };
}

/** The skeleton of a whole text (no positions). */
export function skeletonOf(text: string): string {
  let out = "";
  for (const ch of text) out += foldChar(ch);
  return out;
}
