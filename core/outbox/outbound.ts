import type { Clock } from "../clock.js";
import type { NewOutboxMessage, OutboxMessage } from "./records.js";
import type { OutboxRepository } from "../storage/index.js";

/** What `Outbound` needs: the outbox repository, the clock, and the delivery loop to wake. */
export interface OutboundDeps {
  store: { outbox: Pick<OutboxRepository, "enqueueOutbound"> };
  clock: Clock;
  /** Wakes the delivery loop (the outbox's `DueLoop.poke`). */
  wake: () => void;
}

/**
 * The one outbound door: everything Familiar says to a person is queued here, as a row of the
 * durable outbox that `OutboxDelivery` delivers (in order per person, exactly once, with retries).
 * A delivery key is unique: queuing the same key again returns the first row, so a flow that runs
 * twice after a crash says its message once.
 *
 * Inside a store transaction, queue with `{ wake: false }` and call `wake()` once it committed (the
 * loop would not see an uncommitted row and would only look again at its next timer).
 */
export class Outbound {
  constructor(private readonly deps: OutboundDeps) {}

  /** Queues `message` (at `now`, default the clock's) and wakes delivery unless `wake` is false. */
  async queue(message: NewOutboxMessage, options: { wake?: boolean; now?: Date } = {}): Promise<OutboxMessage> {
    const row = await this.deps.store.outbox.enqueueOutbound(message, options.now ?? this.deps.clock.now());
    if (options.wake !== false) this.deps.wake();
    return row;
  }

  /** Wakes the delivery loop (after a transaction that queued with `{ wake: false }`). */
  wake = (): void => {
    this.deps.wake();
  };
}
