import { GrammyError, type Api } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../../core/log/index.js";
import { ALLOWED_UPDATES } from "./inbound.js";

/** Tuning of `UpdatePoller`; every field has a default. */
export interface PollerOptions {
  /** Long-poll timeout of one getUpdates call, seconds (default 25). */
  timeoutSeconds?: number;
  /** How long `stop` waits for updates still being handled before it confirms what was fetched, ms (default 5000). */
  stopGraceMs?: number;
  /**
   * Least time from the start of one getUpdates call that brought nothing new to the start of the
   * next, ms (default 1000). Telegram holds an empty long poll for `timeoutSeconds`, so this never
   * delays polling against it; a Bot API server that answers at once (a local server without long
   * polling, a proxy, a misconfigured timeout) would otherwise be asked ~1,000 times a second.
   */
  minEmptyPollGapMs?: number;
  /** Waits before handing an update whose handling failed to the handler again, ms (default 1 s, 4 s, 15 s). */
  retryDelaysMs?: readonly number[];
}

/**
 * Where the poller keeps the updates it fetched until they are handled: durable (the store's
 * inbound journal), so an update confirmed to Telegram survives a crash before it was handled.
 */
export interface UpdateJournal {
  /** Records fetched updates durably (a repeat of an update_id changes nothing); resolves once they survive a crash. Throws when the store cannot. */
  hold(updates: readonly Update[]): Promise<void>;
  /** The update was handled: it is forgotten. */
  release(updateId: number): Promise<void>;
  /** Updates held and never released (a process stopped or crashed first), oldest first. */
  held(): Promise<Update[]>;
}

/**
 * Long polling that never loses an update and never waits for one.
 *
 * Telegram Bot API (getUpdates): calling it with `offset` confirms every update below `offset`;
 * confirmed updates are never returned again, and while an unconfirmed update waits, a long poll
 * returns at once. So the poller first records each fetched update durably in its
 * {@link UpdateJournal}, and only then confirms it — with the next getUpdates, a long poll that
 * begins right away. New updates are therefore fetched as soon as Telegram has them, however long
 * earlier ones take to handle, and each is fetched once. Every fetched update goes to `handle` at
 * once (the channel orders messages per chat itself); when `handle` resolves the update is
 * released from the journal. After a crash, `start` hands the journal's unreleased updates to
 * `handle` again before polling (at least once: the core's durable dedupe drops the ones that were
 * already recorded).
 *
 * A rejected `handle` is retried after `retryDelaysMs`; when every retry failed the update stays in
 * the journal (handled again at the next start) and an error is logged. A journal that cannot hold
 * a batch leaves it unconfirmed: the same getUpdates is asked again after a backoff. A poll that
 * brought nothing new is followed by the next one no sooner than `minEmptyPollGapMs` after it started.
 */
export class UpdatePoller {
  private running = false;
  private loop: Promise<void> | null = null;
  private abort: AbortController | null = null;
  /** update_id → its handling, while not finished. */
  private readonly pending = new Map<number, Promise<void>>();
  /** Highest update_id held in the journal so far (-1: none yet); getUpdates asks from the next one. */
  private highest = -1;
  private readonly timeoutSeconds: number;
  private readonly stopGraceMs: number;
  private readonly minEmptyPollGapMs: number;
  private readonly retryDelaysMs: readonly number[];

  constructor(
    private readonly api: Api,
    private readonly journal: UpdateJournal,
    private readonly handle: (update: Update) => Promise<void>,
    private readonly logger: Logger,
    options: PollerOptions = {},
  ) {
    this.timeoutSeconds = options.timeoutSeconds ?? 25;
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
    this.minEmptyPollGapMs = options.minEmptyPollGapMs ?? 1_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [1_000, 4_000, 15_000];
  }

  /** Starts in the background: replays the journal, then polls (errors are logged and retried with backoff). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.loop = this.run(this.abort.signal);
  }

  /**
   * Stops polling: aborts the pending getUpdates, waits up to `stopGraceMs` for updates being
   * handled, then confirms everything fetched (one getUpdates with `limit: 1, timeout: 0`, as
   * grammY's `bot.stop` does) — all of it is in the journal, so unfinished ones are handled at the next start.
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
      await this.api.getUpdates({ offset: this.highest + 1, limit: 1, timeout: 0, allowed_updates: [...ALLOWED_UPDATES] });
    } catch (err) {
      this.logger.warn({ err }, "telegram: could not confirm fetched updates on stop; Telegram will deliver them again (dropped as duplicates)");
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    let backoffMs = 500;
    while (this.running && !(await this.replay())) {
      await sleep(backoffMs, signal);
      backoffMs = Math.min(backoffMs * 2, 30_000);
    }
    backoffMs = 500;
    while (this.running) {
      const startedAt = Date.now();
      let fresh: Update[];
      try {
        const updates = await this.api.getUpdates(
          { offset: this.highest >= 0 ? this.highest + 1 : undefined, limit: 100, timeout: this.timeoutSeconds, allowed_updates: [...ALLOWED_UPDATES] },
          // grammY types the signal with its abort-controller shim; Node's own AbortSignal is what it receives.
          signal as Parameters<Api["getUpdates"]>[1],
        );
        fresh = updates.filter((u) => u.update_id > this.highest);
      } catch (err) {
        if (!this.running) return;
        const conflict = err instanceof GrammyError && err.error_code === 409;
        this.logger.error(
          { err, retryInMs: backoffMs },
          conflict ? "telegram: getUpdates conflict (409): another process polls with this token, or a webhook is set" : "telegram: getUpdates failed",
        );
        await sleep(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, 30_000);
        continue;
      }
      if (fresh.length === 0) {
        backoffMs = 500;
        await sleep(this.minEmptyPollGapMs - (Date.now() - startedAt), signal);
        continue;
      }
      try {
        await this.journal.hold(fresh);
      } catch (err) {
        // Not recorded, so not confirmed: the next getUpdates (same offset) brings them again.
        this.logger.error({ err, updates: fresh.length, retryInMs: backoffMs }, "telegram: fetched updates could not be recorded; asking for them again");
        await sleep(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, 30_000);
        continue;
      }
      backoffMs = 500;
      for (const update of fresh) this.dispatch(update);
    }
  }

  /** Hands the journal's unreleased updates to `handle` (oldest first); false when the journal cannot be read. */
  private async replay(): Promise<boolean> {
    let held: Update[];
    try {
      held = await this.journal.held();
    } catch (err) {
      this.logger.error({ err }, "telegram: the updates fetched before the restart could not be read; retrying before polling");
      return false;
    }
    if (held.length > 0) this.logger.info({ updates: held.length }, "telegram: handling updates fetched before the restart");
    for (const update of held) this.dispatch(update);
    return true;
  }

  private dispatch(update: Update): void {
    const id = update.update_id;
    if (this.pending.has(id)) return;
    this.highest = Math.max(this.highest, id);
    const handling = this.handleWithRetries(update).finally(() => this.pending.delete(id));
    this.pending.set(id, handling);
  }

  private async handleWithRetries(update: Update): Promise<void> {
    const id = update.update_id;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.handle(update);
        break;
      } catch (err) {
        const retryInMs = this.retryDelaysMs[attempt];
        if (retryInMs === undefined || !this.running) {
          this.logger.error({ err, updateId: id }, "telegram: update handler failed; the update stays recorded and is handled again at the next start");
          return;
        }
        this.logger.warn({ err, updateId: id, retryInMs }, "telegram: update handler failed; retrying");
        await sleep(retryInMs, this.abort!.signal);
      }
    }
    try {
      await this.journal.release(id);
    } catch (err) {
      this.logger.warn({ err, updateId: id }, "telegram: a handled update could not be released; it is handled again (as a duplicate) at the next start");
    }
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
