import type { Clock } from "../clock.js";
import type { Logger } from "../log/index.js";
import type { Store } from "../storage/index.js";

/**
 * The process's heartbeat: every `leaseMs / 3` it extends every lease this process holds (running
 * tasks, outbox rows being sent). Leases are short, so when a process dies its work is claimable
 * again within one lease — not after a long lock lifetime — and a live process never loses work it is
 * still doing, however long a model call takes.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;

  constructor(private readonly deps: { store: Pick<Store, "tasks" | "outbox">; clock: Clock; logger: Logger; owner: string; leaseMs: number }) {}

  start(): void {
    if (this.timer) return;
    // beat() logs its own errors and never rejects; the catch is for an error in the logger itself.
    this.timer = setInterval(() => {
      this.beat().catch(() => undefined);
    }, Math.max(1_000, Math.floor(this.deps.leaseMs / 3)));
    this.timer.unref();
  }

  /** Stops renewing (leases then end by themselves); waits for a beat in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
  }

  /** One renewal of every lease held by this process. Errors are logged; the next beat tries again. */
  beat(): Promise<void> {
    if (this.beating) return this.beating;
    const { store, clock, owner, leaseMs, logger } = this.deps;
    this.beating = (async () => {
      try {
        const now = clock.now();
        await store.tasks.renewLeases({ owner, now, leaseMs });
        await store.outbox.renewLeases({ owner, now, leaseMs });
      } catch (err) {
        logger.warn({ err }, "heartbeat: could not renew leases");
      }
    })().finally(() => (this.beating = null));
    return this.beating;
  }
}

/**
 * Takes over, at once, the leases another process left in the store (embedded mode, where one
 * process owns DATA_DIR: the predecessor is dead, so its work need not wait for its leases to end).
 * Resolves with how many task and outbox leases were taken over.
 */
export async function takeOverLeases(store: Pick<Store, "tasks" | "outbox">, owner: string, now: Date): Promise<{ tasks: number; outbox: number }> {
  const tasks = await store.tasks.expireForeignLeases({ owner, now });
  const outbox = await store.outbox.expireForeignLeases({ owner, now });
  return { tasks, outbox };
}
