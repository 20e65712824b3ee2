/**
 * Serializes activations per person while different persons run concurrently (up to
 * `maxConcurrent` at once). Work for one person runs in submission order; an idle person holds no
 * entry at all (nothing in memory, no timer).
 */
export class PersonQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private closed = false;

  constructor(private readonly maxConcurrent = 16) {}

  /**
   * Runs `fn` after every earlier job of the same person. Resolves or rejects with `fn`'s outcome.
   * Throws if the queue is closed (shutting down).
   */
  run<T>(personId: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error("activation queue is closed"));
    const previous = this.tails.get(personId) ?? Promise.resolve();
    const result = previous.then(async () => {
      await this.acquire();
      try {
        return await fn();
      } finally {
        this.release();
      }
    });
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(personId, tail);
    void tail.then(() => {
      if (this.tails.get(personId) === tail) this.tails.delete(personId);
    });
    return result;
  }

  /** True while the person has queued or running work. */
  busy(personId: string): boolean {
    return this.tails.has(personId);
  }

  /** Persons with queued or running work. */
  get size(): number {
    return this.tails.size;
  }

  /** Stops accepting work and waits for what is queued (at most `deadlineMs`). */
  async drain(deadlineMs: number): Promise<void> {
    this.closed = true;
    const all = Promise.all([...this.tails.values()]);
    await Promise.race([all, new Promise((r) => setTimeout(r, deadlineMs).unref())]);
  }

  private acquire(): Promise<void> {
    if (this.running < this.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(() => resolve()));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
