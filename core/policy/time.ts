/**
 * Time as Sentinel sees it, and the person's session.
 *
 * **SentinelClock.** Expiry must not come back when the wall clock is moved backwards (an NTP step,
 * a hand-set clock, a restored VM). Sentinel never looks at the raw clock for grants and approval
 * requests: its `now()` is the latest of the clock and a durable high-water mark of every time it
 * has seen (`SentinelStateRepository.advanceClock`). A jump backwards therefore freezes Sentinel's
 * time at the last time seen until the clock catches up — a 24-hour grant that expired stays
 * expired, a pending request that expired stays expired.
 *
 * **Sessions.** "This session" means something a person can understand: *until you have been away
 * for 2 hours*. A session is a run of the person's own activity — the messages they send and the
 * buttons they press — without a gap of {@link SESSION_IDLE_MS}. Sentinel tracks it in its own store
 * (one row per person), folding in the person's new conversation messages whenever it looks, so it
 * depends neither on runtime activation ids nor on a hook in the inbound path.
 */
import { randomBytes } from "node:crypto";
import type { PersonId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { SentinelSession } from "./records.js";

/** A session ends after this long without the person's activity (2 hours). */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;

/** How often (at most) the high-water mark is written while time moves forward, ms. */
const CLOCK_WRITE_EVERY_MS = 1_000;

/** Sentinel's monotonic view of time over a durable high-water mark. */
export class SentinelClock {
  private high = 0;
  private written = 0;
  private loaded = false;

  constructor(
    private readonly store: Pick<Store, "sentinel">,
    private readonly wall: () => Date,
  ) {}

  /**
   * The later of the wall clock and every time seen before (in this process and, through the
   * store, in earlier ones). Persists the mark when it moved forward.
   */
  async now(): Promise<Date> {
    const wall = this.wall().getTime();
    if (!this.loaded || wall - this.written >= CLOCK_WRITE_EVERY_MS || wall < this.high) {
      // First call, time moved on, or the clock went back: consult (and raise) the durable mark.
      const stored = await this.store.sentinel.advanceClock(new Date(Math.max(wall, this.high)));
      this.high = Math.max(this.high, stored.getTime());
      this.written = Math.max(wall, this.written);
      this.loaded = true;
    }
    this.high = Math.max(this.high, wall);
    return new Date(this.high);
  }
}

/** A new opaque session id. */
function newSessionId(): string {
  return `ses_${randomBytes(12).toString("hex")}`;
}

/** Tracks each person's session (see module doc). */
export class SessionTracker {
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Pick<Store, "sentinel" | "conversation">,
    readonly idleMs: number = SESSION_IDLE_MS,
  ) {}

  /**
   * Folds the person's activity since the last look — their new conversation messages and, when
   * given, `activityAt` (a button press) — into the stored session, and returns the session that is
   * live at `now`, or null when the person has been away for `idleMs` or longer (the next activity
   * starts a new session). Calls for one person are serialised.
   */
  refresh(personId: PersonId, now: Date, activityAt?: Date): Promise<SentinelSession | null> {
    const previous = this.busy.get(personId) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => this.fold(personId, now, activityAt));
    this.busy.set(personId, run);
    return run.finally(() => {
      if (this.busy.get(personId) === run) this.busy.delete(personId);
    });
  }

  private async fold(personId: PersonId, now: Date, activityAt?: Date): Promise<SentinelSession | null> {
    const stored = await this.store.sentinel.getSession(personId);
    let session = stored;
    const times: number[] = [];
    let lastSeq = stored?.lastSeq ?? 0;
    if (stored === null) {
      // First look: the recent conversation is enough (older activity ended any session long ago).
      const recent = await this.store.conversation.listRecentMessages(personId, 50);
      for (const m of recent) {
        lastSeq = Math.max(lastSeq, m.seq);
        if (m.role === "user") times.push(m.at.getTime());
      }
    } else {
      for (;;) {
        const page = await this.store.conversation.listMessagesAfter(personId, lastSeq, 200);
        for (const m of page) {
          lastSeq = Math.max(lastSeq, m.seq);
          if (m.role === "user") times.push(m.at.getTime());
        }
        if (page.length < 200) break;
      }
    }
    if (activityAt !== undefined) times.push(activityAt.getTime());
    // Platform timestamps can run slightly ahead of ours; activity is never later than now.
    const at = times.map((t) => Math.min(t, now.getTime())).sort((a, b) => a - b);
    for (const t of at) {
      if (session === null || t - session.lastActivityAt.getTime() >= this.idleMs) {
        session = { personId, sessionId: newSessionId(), startedAt: new Date(t), lastActivityAt: new Date(t), lastSeq };
      } else if (t > session.lastActivityAt.getTime()) {
        session = { ...session, lastActivityAt: new Date(t) };
      }
    }
    if (session !== null && (session !== stored || lastSeq !== stored.lastSeq)) {
      session = { ...session, lastSeq };
      await this.store.sentinel.saveSession(session);
    }
    if (session === null) return null;
    return now.getTime() - session.lastActivityAt.getTime() < this.idleMs ? session : null;
  }
}
