import { AsyncLocalStorage } from "node:async_hooks";

/**
 * One level of transaction nesting. The root frame is "no transaction"; each `Store.transaction`
 * opens a child frame that the code running inside it sees through AsyncLocalStorage.
 */
interface Frame {
  readonly parent: Frame | null;
  readonly depth: number;
  /** Resolves when the transaction opened from this frame ends; null while none is open. */
  child: Promise<void> | null;
  /** Set when this frame's transaction ended; late async work started inside it falls back to the parent. */
  closed: boolean;
}

/**
 * Isolation for an async API over a synchronous, single-connection database.
 *
 * better-sqlite3 runs every statement synchronously on one connection, so "BEGIN … COMMIT" spanning
 * `await`s would silently take in statements from unrelated async callers. The gate prevents that: while
 * a transaction is open, callers from outside it wait (an async mutex per nesting level) and callers
 * inside it — recognised through AsyncLocalStorage — run directly.
 */
export class TxGate {
  private readonly als = new AsyncLocalStorage<Frame>();
  private readonly root: Frame = { parent: null, depth: 0, child: null, closed: false };

  /** The innermost open frame the caller runs in. */
  private current(): Frame {
    let frame = this.als.getStore() ?? this.root;
    while (frame.closed && frame.parent) frame = frame.parent;
    return frame;
  }

  /**
   * Runs the synchronous `fn` once no transaction the caller is outside of is open. When nothing is
   * open it runs in the same tick (no extra await), which keeps single statements cheap.
   */
  async run<T>(fn: () => T): Promise<T> {
    let frame = this.current();
    while (frame.child) {
      await frame.child;
      frame = this.current();
    }
    return fn();
  }

  /**
   * Opens a transaction level: waits for its turn, calls `begin(depth)`, runs `fn` inside the new
   * frame, then `commit(depth)` or, if `fn` throws, `rollback(depth)` and rethrows. Depth 1 is the
   * outermost transaction; deeper levels are nested (savepoints).
   */
  async transaction<T>(
    fn: () => Promise<T>,
    hooks: { begin(depth: number): void; commit(depth: number): void; rollback(depth: number): void },
  ): Promise<T> {
    let parent = this.current();
    while (parent.child) {
      await parent.child;
      parent = this.current();
    }
    let release!: () => void;
    parent.child = new Promise<void>((resolve) => {
      release = resolve;
    });
    const frame: Frame = { parent, depth: parent.depth + 1, child: null, closed: false };
    try {
      hooks.begin(frame.depth);
      let result: T;
      try {
        result = await this.als.run(frame, fn);
        // A nested transaction started but not awaited by fn must end before this level commits.
        while (frame.child) await frame.child;
      } catch (error) {
        while (frame.child) await frame.child;
        hooks.rollback(frame.depth);
        throw error;
      }
      hooks.commit(frame.depth);
      return result;
    } finally {
      frame.closed = true;
      parent.child = null;
      release();
    }
  }
}
