/**
 * Runs tasks one after another per key (a chat, a DM channel) and concurrently across keys, so a
 * photo that takes a while to download is still recorded before the text message sent after it.
 * A task's failure does not stop the next one of its key. Used by the messengers (per chat) and
 * the workspace (per person, per folder).
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task of `key` settled; resolves or rejects with its result. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    // The key's tail never rejects; it removes itself from the map once nothing runs after it.
    const done = () => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    const tail: Promise<void> = run.then(done, done);
    this.tails.set(key, tail);
    return run;
  }
}
