import type { Clock } from "../clock.js";
import type { Logger } from "../log/index.js";

/** What a {@link DueLoop} drives: a store of work items with due times and atomic claims. */
export interface DueSource<T> {
  /** When the next item not under a `busy` key becomes claimable (possibly in the past), or null. */
  nextDueAt(busy: ReadonlySet<string>): Promise<Date | null>;
  /** Claims one item due now, skipping `busy` keys (e.g. persons with work in flight); null if none. */
  claim(busy: ReadonlySet<string>): Promise<T | null>;
  /** The key work is serialized on (one item per key in flight at a time). */
  keyOf(item: T): string;
  /** Runs a claimed item to its end (errors are logged by the loop with `describe`). */
  run(item: T): Promise<void>;
  /** A short description for logs. */
  describe(item: T): Record<string, unknown>;
}

/** Options of a {@link DueLoop}. */
export interface DueLoopOptions {
  name: string;
  clock: Clock;
  logger: Logger;
  /** Most items in flight at once. */
  maxInFlight: number;
  /**
   * Longest sleep between looks at the store, ms (default 60 s): another process's new work, or a
   * claim lost to a clock difference, is noticed at the latest after this.
   */
  recheckMs?: number;
}

/**
 * Runs work items when they become due, with the store as the only source of truth for when that is:
 * one timer armed at the earliest due time (re-armed on every `poke`, capped at `recheckMs`), atomic
 * claims, at most one item per key in flight and `maxInFlight` in all. An idle loop holds one timer
 * and nothing else; work that is not due yet costs a row in the store. Whatever makes work due — a new
 * message, a wake-up time, a lease left by a dead process, a retry time — the loop finds it the same way.
 */
export class DueLoop<T> {
  private readonly busy = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private scanning: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  constructor(
    private readonly source: DueSource<T>,
    private readonly options: DueLoopOptions,
  ) {}

  /** Starts looking for due work. */
  start(): void {
    this.stopped = false;
    this.poke();
  }

  /** Something may have become due: look now (coalesced; never runs two scans at once). */
  poke(): void {
    if (this.stopped) return;
    if (this.scanning) {
      this.again = true;
      return;
    }
    this.scanning = this.scan()
      .catch((err: unknown) => this.options.logger.error({ err, loop: this.options.name }, "due-work scan failed; retrying on the next timer"))
      .finally(() => {
        this.scanning = null;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  /** Items in flight now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Stops claiming and waits (at most `deadlineMs`) for items in flight. */
  async stop(deadlineMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.scanning;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => (timeout = setTimeout(r, deadlineMs)))]);
    clearTimeout(timeout);
  }

  private async scan(): Promise<void> {
    const { source, options } = this;
    while (!this.stopped && this.inFlight.size < options.maxInFlight) {
      const item = await source.claim(this.busy);
      if (item === null) break;
      const key = source.keyOf(item);
      this.busy.add(key);
      const running: Promise<void> = source
        .run(item)
        .catch((err: unknown) => options.logger.error({ err, loop: options.name, ...source.describe(item) }, "due work failed"))
        .finally(() => {
          this.busy.delete(key);
          this.inFlight.delete(running);
          this.poke();
        });
      this.inFlight.add(running);
    }
    if (!this.stopped) await this.arm();
  }

  /** Sleeps until the next due time (or the recheck interval), unless the loop is at capacity. */
  private async arm(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const recheck = this.options.recheckMs ?? 60_000;
    let delay = recheck;
    // With work in flight, its end pokes the loop (which looks again then): no need to look now.
    if (this.inFlight.size === 0) {
      const next = await this.source.nextDueAt(this.busy);
      if (next) delay = Math.min(recheck, Math.max(0, next.getTime() - this.options.clock.now().getTime()));
      // Due now but the claim found nothing (another process took it, or clocks differ): look again soon.
      if (delay === 0) delay = 1_000;
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.poke();
    }, delay);
    this.timer.unref();
  }
}
