/**
 * A stream's output kept to a budget: the first three quarters of the shown bytes and the last
 * quarter (where errors usually are), the middle cut with a visible marker that says how much.
 * Bytes beyond the budget are counted and dropped as they arrive, so endless output costs no
 * memory.
 */

/** One stream's output as a result shows it. */
export interface CapturedOutput {
  /** The text shown (UTF-8, invalid sequences replaced), with a `[… N bytes cut …]` marker when cut. */
  text: string;
  /** Bytes the run wrote to the stream. */
  bytes: number;
  /** True when part of the output is not in `text`. */
  cut: boolean;
}

/** Collects one stream. */
export class OutputBudget {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  /** @param shownBytes bytes of the stream a result shows (head and tail together) */
  constructor(shownBytes: number) {
    this.headLimit = Math.floor((shownBytes * 3) / 4);
    this.tailLimit = shownBytes - this.headLimit;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.total;
  }

  /** Adds a chunk. */
  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = rest.subarray(0, this.headLimit - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    const joined = rest.length >= this.tailLimit ? rest : Buffer.concat([this.tail, rest]);
    this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - this.tailLimit)));
  }

  /** The output as a result shows it. */
  result(): CapturedOutput {
    const head = Buffer.concat(this.head);
    const dropped = this.total - head.length - this.tail.length;
    if (dropped <= 0) return { text: Buffer.concat([head, this.tail]).toString("utf8"), bytes: this.total, cut: false };
    const marker = `\n[… ${dropped.toLocaleString("en-US")} bytes cut …]\n`;
    return { text: head.toString("utf8") + marker + this.tail.toString("utf8"), bytes: this.total, cut: true };
  }
}
