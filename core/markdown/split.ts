import type { Laid, Run } from "./layout.js";

/**
 * The one splitter: cuts laid-out text into parts whose rendering fits a platform's limit, as the
 * platform counts it. Each part is rendered from its own runs, so a format running across a cut is
 * closed at the end of one part and reopened at the start of the next (a code block gets its fence
 * again), and every part is well-formed on its own.
 *
 * Where a part ends, in order of preference: at a blank line between blocks, at a line break, at a
 * space, else anywhere that is not inside a grapheme (never between the halves of a surrogate
 * pair). A preferred break is taken only if it leaves the part at least a quarter of what would
 * fit, so one early break does not make a run of tiny messages. The whitespace at a cut is dropped
 * (messengers trim it anyway), except the indentation inside a code block.
 */

/** What an emitter makes of a part's runs: its payload, and its size as the platform counts it. */
export interface Rendered<B> {
  body: B;
  size: number;
}

/** A part: its runs (for a plain-text copy) and its rendering. */
export interface SplitPart<B> {
  runs: Run[];
  rendered: Rendered<B>;
}

/** A preferred break is skipped when it would leave less than this share of what fits. */
const MIN_PART_SHARE = 0.25;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** How an emitter renders a part's runs, and (optionally, when cheaper than rendering) counts them. */
export interface PartRenderer<B> {
  render(runs: Run[]): Rendered<B>;
  size?(runs: Run[]): number;
}

/**
 * Splits `laid` into parts whose `render(runs).size` is at most `limit`, in order. Assumes a
 * rendering is never smaller than its visible text (markup only adds). If not even one character
 * fits (a limit smaller than the platform's fixed markup), that character goes out alone, over the
 * limit, rather than being lost. Returns no parts for text that is whitespace only. Throws
 * RangeError for a limit that is not a positive integer.
 */
export function splitLaid<B>(laid: Laid, limit: number, renderer: PartRenderer<B>): SplitPart<B>[] {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`split limit must be a positive integer, got ${limit}`);
  return new Cutter(laid, limit, renderer).cut().map((runs) => ({ runs, rendered: renderer.render(runs) }));
}

class Cutter<B> {
  private readonly text: string;
  /** Offset in `text` where each run starts. */
  private readonly starts: number[] = [];

  constructor(
    private readonly laid: Laid,
    private readonly limit: number,
    private readonly renderer: PartRenderer<B>,
  ) {
    this.text = laid.text;
    let offset = 0;
    for (const run of laid.runs) {
      this.starts.push(offset);
      offset += run.text.length;
    }
  }

  /** The runs of each part, in order. */
  cut(): Run[][] {
    const parts: Run[][] = [];
    let last = this.text.length;
    while (last > 0 && /\s/.test(this.text[last - 1]!)) last--;
    let start = this.skip(0, true);
    while (start < last) {
      // A rendering is never smaller than its visible text: only a short enough rest can fit whole.
      if (last - start <= this.limit && this.fits(start, last)) {
        parts.push(this.slice(start, last));
        break;
      }
      const { end, part } = this.next(start);
      if (part) parts.push(part);
      start = this.skip(end, /[ \t\n]/.test(this.text[end] ?? ""));
    }
    return parts;
  }

  /** The runs from `start` to `end` with trailing whitespace dropped, or null if that leaves nothing. */
  private attempt(start: number, end: number): Run[] | null {
    let last = end;
    while (last > start && /\s/.test(this.text[last - 1]!)) last--;
    return last > start ? this.slice(start, last) : null;
  }

  private size(runs: Run[]): number {
    return this.renderer.size ? this.renderer.size(runs) : this.renderer.render(runs).size;
  }

  private fits(start: number, end: number): boolean {
    const runs = this.attempt(start, end);
    return runs === null || this.size(runs) <= this.limit;
  }

  /** The first part starting at `start` when the rest does not fit in one. */
  private next(start: number): { end: number; part: Run[] | null } {
    // A rendering is never smaller than its visible text, so nothing past `limit` visible characters
    // fits: the best break before that, if it fits, is the answer. If it is too big, markup grows
    // with the text, so a window shrunk by the overshoot usually fits; a few such guesses, then a
    // binary search for the exact furthest end.
    let hi = Math.min(this.text.length, start + this.limit);
    for (let guess = 0; guess < 4; guess++) {
      const end = this.preferred(start, hi);
      const part = this.attempt(start, end);
      if (!part) break;
      const size = this.size(part);
      if (size <= this.limit) return { end, part };
      const shrunk = start + Math.floor(((end - start) * this.limit) / size);
      if (shrunk >= end || shrunk <= start) break;
      hi = shrunk;
    }
    hi = Math.min(this.text.length, start + this.limit);
    for (;;) {
      const max = this.furthest(start, hi);
      const end = this.preferred(start, max);
      const part = this.attempt(start, end);
      // Nothing but whitespace (a code block's indentation) up to the break: move past it.
      if (!part) return { end: Math.max(end, max), part: this.attempt(start, max) };
      if (this.size(part) <= this.limit || end <= this.minimalEnd(start)) return { end, part };
      hi = end - 1; // the rendering was not monotonic around this break: look further back
    }
  }

  /** The largest end in (start, hi] whose part fits (binary search; rendering grows with the text). */
  private furthest(start: number, hi: number): number {
    let lo = this.minimalEnd(start);
    if (hi <= lo || !this.fits(start, lo)) return lo;
    if (this.fits(start, hi)) return hi;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (this.fits(start, mid)) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  /** The end of the smallest part: one grapheme (at least one code point). */
  private minimalEnd(start: number): number {
    const segment = graphemes.segment(this.text.slice(start, start + 64));
    const first = segment[Symbol.iterator]().next();
    return start + (first.done ? 1 : first.value.segment.length);
  }

  /** The best place to end a part that may reach `max`: a block break, a line break, a space, or a grapheme boundary. */
  private preferred(start: number, max: number): number {
    const floor = start + Math.max(1, Math.floor((max - start) * MIN_PART_SHARE));
    const block = this.lastBlockBreak(max);
    if (block !== null && block >= floor) return block;
    const line = this.text.lastIndexOf("\n", max - 1);
    if (line >= floor) return line;
    const space = Math.max(this.text.lastIndexOf(" ", max - 1), this.text.lastIndexOf("\t", max - 1));
    if (space >= floor) return space;
    return this.graphemeBoundary(start, max);
  }

  private lastBlockBreak(max: number): number | null {
    const breaks = this.laid.blockBreaks;
    let lo = 0;
    let hi = breaks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (breaks[mid]! < max) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? breaks[lo - 1]! : null;
  }

  /** The last grapheme boundary at or before `max` (after `start`). */
  private graphemeBoundary(start: number, max: number): number {
    if (max >= this.text.length) return max;
    const from = Math.max(start, max - 32);
    let best = from;
    for (const { index } of graphemes.segment(this.text.slice(from, max + 32))) {
      if (from + index > max) break;
      best = from + index;
    }
    if (best > start) return best;
    const code = this.text.charCodeAt(max - 1);
    return code >= 0xd800 && code <= 0xdbff && max - 1 > start ? max - 1 : max;
  }

  /**
   * Where the next part starts after a cut at `from`: past the line breaks, and past spaces too when
   * `spaces` (a cut at whitespace) unless they indent a code block line.
   */
  private skip(from: number, spaces: boolean): number {
    let i = from;
    while (i < this.text.length) {
      const ch = this.text[i]!;
      if (ch === "\n" || ch === "\r") i++;
      else if (spaces && (ch === " " || ch === "\t") && !this.inPre(i)) i++;
      else break;
    }
    return i;
  }

  private inPre(offset: number): boolean {
    return this.runAt(offset)?.formats.some((f) => f.kind === "pre") ?? false;
  }

  private runAt(offset: number): Run | undefined {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return this.laid.runs[lo];
  }

  /** The runs covering `text` offsets [from, to). */
  private slice(from: number, to: number): Run[] {
    const out: Run[] = [];
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid]! <= from) lo = mid;
      else hi = mid - 1;
    }
    for (let i = lo; i < this.laid.runs.length; i++) {
      const run = this.laid.runs[i]!;
      const runStart = this.starts[i]!;
      if (runStart >= to) break;
      const text = run.text.slice(Math.max(0, from - runStart), Math.min(run.text.length, to - runStart));
      if (text) out.push({ ...run, text });
    }
    return out;
  }
}
