import { GrammyError, type Api } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../../core/log/index.js";
import { ALLOWED_UPDATES } from "./inbound.js";

/** Tuning of `UpdatePoller`; every field has a default. */
export interface PollerOptions {
  /** Long-poll timeout of one getUpdates call, seconds (default 25). */
  timeoutSeconds?: number;
  /** Pause between getUpdates calls while an earlier update is still being handled, ms (default 250). */
  recheckMs?: number;
  /** How long `stop` waits for updates still being handled before it confirms what finished, ms (default 5000). */
  stopGraceMs?: number;
  /**
   * Least time from the start of one getUpdates call that brought nothing new to the start of the
   * next, ms (default 1000). Telegram holds an empty long poll for `timeoutSeconds`, so this never
   * delays polling against it; a Bot API server that answers at once (a local server without long
   * polling, a proxy, a misconfigured timeout) would otherwise be asked ~1,000 times a second.
   */
  minEmptyPollGapMs?: number;
}

/**
 * Long polling that confirms an update only after it was handled.
 *
 * Telegram Bot API (getUpdates): calling it with `offset` confirms every update below `offset`;
 * confirmed updates are never returned again. grammY's own `bot.start` handles a batch one update
 * at a time, so one slow handler holds back every later update — a button press waits behind a
 * message. This poller hands each new update to `handle` at once (the channel orders messages per
 * chat itself) and always asks with `offset` = the oldest update still being handled: that update
 * stays unconfirmed until `handle` resolves, so a crash before then means Telegram delivers it again
 * (and the core's durable dedupe decides). While such an update is pending, getUpdates returns it
 * at once every time, so the poller then asks without a long-poll timeout every `recheckMs`. A
 * poll that brought nothing new is followed by the next one no sooner than `minEmptyPollGapMs`
 * after it started, whatever the server does with the long-poll timeout.
 *
 * `handle` must not throw (the channel logs its own failures); a rejection is logged and the update
 * counts as done.
 */
export class UpdatePoller {
  private running = false;
  private loop: Promise<void> | null = null;
  private abort: AbortController | null = null;
  /** update_id → its handling, while not finished. */
  private readonly pending = new Map<number, Promise<void>>();
  /** Highest update_id handed to `handle` so far (-1: none yet). */
  private highest = -1;
  private readonly timeoutSeconds: number;
  private readonly recheckMs: number;
  private readonly stopGraceMs: number;
  private readonly minEmptyPollGapMs: number;

  constructor(
    private readonly api: Api,
    private readonly handle: (update: Update) => Promise<void>,
    private readonly logger: Logger,
    options: PollerOptions = {},
  ) {
    this.timeoutSeconds = options.timeoutSeconds ?? 25;
    this.recheckMs = options.recheckMs ?? 250;
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
    this.minEmptyPollGapMs = options.minEmptyPollGapMs ?? 1_000;
  }

  /** Starts the polling loop in the background (errors are logged and retried with backoff). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.loop = this.run(this.abort.signal);
  }

  /**
   * Stops polling: aborts the pending getUpdates, waits up to `stopGraceMs` for updates being
   * handled, then confirms everything handled (one getUpdates with `limit: 1, timeout: 0`, as
   * grammY's `bot.stop` does). Updates still unfinished stay unconfirmed and come back on restart.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort?.abort();
    await this.loop;
    this.loop = null;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.stopGraceMs)));
    await Promise.race([Promise.allSettled(this.pending.values()), grace]);
    clearTimeout(timer);
    if (this.highest < 0) return;
    try {
      await this.api.getUpdates({ offset: this.offset(), limit: 1, timeout: 0, allowed_updates: [...ALLOWED_UPDATES] });
    } catch (err) {
      this.logger.warn({ err }, "telegram: could not confirm handled updates on stop; Telegram will deliver them again");
    }
  }

  /** The offset that confirms exactly the updates whose handling finished before any unfinished one. */
  private offset(): number | undefined {
    if (this.pending.size > 0) return Math.min(...this.pending.keys());
    return this.highest >= 0 ? this.highest + 1 : undefined;
  }

  private async run(signal: AbortSignal): Promise<void> {
    let backoffMs = 500;
    while (this.running) {
      const waiting = this.pending.size > 0;
      const startedAt = Date.now();
      let updates: Update[];
      try {
        updates = await this.api.getUpdates(
          { offset: this.offset(), limit: 100, timeout: waiting ? 0 : this.timeoutSeconds, allowed_updates: [...ALLOWED_UPDATES] },
          // grammY types the signal with its abort-controller shim; Node's own AbortSignal is what it receives.
          signal as Parameters<Api["getUpdates"]>[1],
        );
        backoffMs = 500;
      } catch (err) {
        if (!this.running) return;
        const conflict = err instanceof GrammyError && err.error_code === 409;
        this.logger.error(
          { err, retryInMs: backoffMs },
          conflict
            ? "telegram: getUpdates conflict (409): another process polls with this token, or a webhook is set"
            : "telegram: getUpdates failed",
        );
        await sleep(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, 30_000);
        continue;
      }
      let fresh = 0;
      for (const update of updates) {
        if (update.update_id <= this.highest) continue; // still being handled, or done behind an unfinished one
        this.highest = update.update_id;
        fresh++;
        this.dispatch(update);
      }
      if (fresh > 0) continue;
      if (this.pending.size > 0) await sleep(this.recheckMs, signal);
      else await sleep(this.minEmptyPollGapMs - (Date.now() - startedAt), signal);
    }
  }

  private dispatch(update: Update): void {
    const id = update.update_id;
    const handling = this.handle(update)
      .catch((err: unknown) => this.logger.error({ err, updateId: id }, "telegram: update handler failed"))
      .finally(() => this.pending.delete(id));
    this.pending.set(id, handling);
  }
}

/** Resolves after `ms`, or early when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
