/**
 * Judgments still being made: the request interception and the proxy decide asynchronously (headers
 * are read, host names resolved), so a request the page made just before a tool result is taken may
 * not be decided yet. A tool waits for them ({@link InFlight.settled}) before it reports what was
 * refused, so a refusal is never left out of the result it belongs to.
 */
export class InFlight {
  private readonly pending = new Set<Promise<unknown>>();

  /** Tracks `work` until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    const done = () => this.pending.delete(work);
    work.then(done, done);
    return work;
  }

  /**
   * Resolves once every judgment in flight now (and any started meanwhile) has settled, or after
   * `timeoutMs` (a judgment still pending then is reported with a later result). Never rejects.
   */
  async settled(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.pending.size > 0) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      });
      await Promise.race([Promise.allSettled([...this.pending]), timeout]);
      clearTimeout(timer);
    }
  }
}
