/** A pending long-poll: `activity` resolves on the next notification of its key; `cancel` detaches it. */
export interface ActivityWait {
  readonly activity: Promise<void>;
  cancel(): void;
}

/**
 * Long-poll waiters per key (a local-chat user, a person's chat log): `wait` subscribes to the next
 * `notify` of a key, `notifyAll` wakes everyone (shutdown). Subscribe before reading what the wait
 * is about, so nothing slips between the read and the wait; always `cancel` (safe after it fired).
 */
export class KeyedWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

  wait(key: string): ActivityWait {
    let set = this.waiters.get(key);
    if (!set) {
      set = new Set();
      this.waiters.set(key, set);
    }
    const waiters = set;
    let fire!: () => void;
    const activity = new Promise<void>((resolve) => (fire = resolve));
    const callback = (): void => fire();
    waiters.add(callback);
    return {
      activity,
      cancel: () => {
        waiters.delete(callback);
        if (waiters.size === 0 && this.waiters.get(key) === waiters) this.waiters.delete(key);
      },
    };
  }

  notify(key: string): void {
    const set = this.waiters.get(key);
    if (!set) return;
    this.waiters.delete(key);
    for (const callback of set) callback();
  }

  notifyAll(): void {
    for (const key of [...this.waiters.keys()]) this.notify(key);
  }
}
