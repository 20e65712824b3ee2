/**
 * In-memory `MailboxSyncStore` with the real store's semantics: commit is all-or-nothing, arrivals
 * whose key the mailbox already holds are dropped, and a test can make the next commit fail (a crash
 * before the transaction) to check that nothing is lost.
 */
import type { MailboxMark, MailboxSyncStore } from "../../connectors/email/sync.js";

export class MemorySyncStore<A extends { key: string }> implements MailboxSyncStore<A> {
  readonly marks = new Map<string, MailboxMark>();
  readonly arrivals = new Map<string, A[]>();
  commits = 0;
  /** When set, the next commit throws this instead of committing. */
  failNextCommit: Error | null = null;

  async readMark(mailbox: string): Promise<MailboxMark | null> {
    const mark = this.marks.get(mailbox);
    return mark ? { ...mark } : null;
  }

  async commit(mailbox: string, mark: MailboxMark, arrivals: readonly A[]): Promise<void> {
    if (this.failNextCommit) {
      const err = this.failNextCommit;
      this.failNextCommit = null;
      throw err;
    }
    const list = this.arrivals.get(mailbox) ?? [];
    const keys = new Set(list.map((a) => a.key));
    for (const a of arrivals) {
      if (keys.has(a.key)) continue;
      keys.add(a.key);
      list.push(a);
    }
    this.arrivals.set(mailbox, list);
    this.marks.set(mailbox, { ...mark });
    this.commits++;
  }

  /** Every arrival of `mailbox`, in commit order. */
  list(mailbox: string): A[] {
    return [...(this.arrivals.get(mailbox) ?? [])];
  }
}
