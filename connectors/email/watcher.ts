/**
 * Keeps one mailbox in sync for as long as it runs: connect, catch up, then wait for new mail with
 * IMAP IDLE where the server offers it (RFC 2177), or poll where it does not.
 *
 * IDLE is known to go quiet without an error (field case E2): while idling, a pass runs at least
 * every `watchdogMs` whatever the server says, and any pass that does not finish within
 * `commandTimeoutMs` ends the session. A lost or dead session is reconnected with exponential
 * backoff (1 s doubling to 5 min, ±25 % jitter); errors are reported in words through `onStatus`,
 * never thrown at the rest of Familiar (field case E3).
 */
import type { ImapFlow } from "imapflow";
import { closeImap } from "./imap-connect.js";
import { describeMailError } from "./errors.js";

/** What the watcher is doing. */
export type WatchMode = "connecting" | "idle" | "polling" | "waiting" | "stopped";

/** The watcher's state as the Connections page shows it. Times are ISO 8601. */
export interface WatchStatus {
  mode: WatchMode;
  lastSyncAt: string | null;
  /** The last failure in words, null after a successful pass. */
  lastError: string | null;
  /** Failed connection attempts in a row. */
  failures: number;
  /** When the next attempt is due, while `waiting`. */
  retryAt: string | null;
}

export interface WatcherOptions {
  /** Opens and logs in a session (see openImap); `onError` must be passed on to it. */
  connect(onError: (message: string) => void): Promise<ImapFlow>;
  /** One sync pass on a connected client (see syncMailbox). */
  sync(client: ImapFlow): Promise<unknown>;
  /** The folder watched. */
  path: string;
  /** Use IDLE when the server offers it (default true). */
  idle?: boolean;
  /** Poll interval without IDLE, ms (default 60 s). */
  pollMs?: number;
  /** With IDLE, the longest time without a pass, ms (default 2 min). */
  watchdogMs?: number;
  /** A pass (or IDLE start) that takes longer ends the session, ms (default 60 s). */
  commandTimeoutMs?: number;
  /** First and longest reconnect delay, ms (default 1 s and 5 min). */
  backoffFirstMs?: number;
  backoffMaxMs?: number;
  now: () => Date;
  onStatus?: (status: WatchStatus) => void;
  /** Diagnostics (no content, no credentials). */
  log?: (event: string, data?: Record<string, unknown>) => void;
}

/** Reconnect delay before attempt `failures` + 1, ms. */
export function backoffMs(failures: number, firstMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(maxMs, firstMs * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (0.75 + random() * 0.5));
}

/** A wake-up that can be fired before it is awaited (a ring with nobody waiting is kept for the next wait). */
class Bell {
  private rung = false;
  private waiter: (() => void) | null = null;
  ring(): void {
    if (this.waiter) this.waiter();
    else this.rung = true;
  }
  /** Resolves when rung (at once, if it was rung since the last wait) or after `ms`. */
  wait(ms: number): Promise<void> {
    if (this.rung) {
      this.rung = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        if (this.waiter === finish) this.waiter = null;
        resolve();
      };
      const timer = setTimeout(finish, Math.max(0, ms));
      this.waiter = finish;
    });
  }
}

/** A session that ended without an IMAP error; its message is a sentence for the Connections section's "last error". */
class SessionEnded extends Error {}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new SessionEnded(`The IMAP server did not finish ${what} within ${Math.round(ms / 1000)} s; Familiar reconnects.`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Watches one mailbox; `run` returns when stopped or when its time is up. */
export class MailboxWatcher {
  private readonly bell = new Bell();
  private stopped = false;
  private status: WatchStatus = { mode: "stopped", lastSyncAt: null, lastError: null, failures: 0, retryAt: null };

  constructor(private readonly options: WatcherOptions) {}

  /** The current state. */
  get state(): WatchStatus {
    return { ...this.status };
  }

  /** Asks for a pass now (e.g. after Familiar itself changed the mailbox). */
  poke(): void {
    this.bell.ring();
  }

  /** Stops the watcher; a running `run` returns soon after. */
  stop(): void {
    this.stopped = true;
    this.bell.ring();
  }

  /** Runs until `stop()` or until `untilMs` (epoch ms) has passed. Never throws. */
  async run(untilMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopped = false;
    const o = this.options;
    const over = () => this.stopped || o.now().getTime() >= untilMs;
    while (!over()) {
      this.set({ mode: "connecting", retryAt: null });
      let client: ImapFlow | null = null;
      try {
        client = await o.connect((message) => {
          o.log?.("email.watch.error", { path: o.path, message });
          this.set({ lastError: message });
        });
        await this.session(client, over, untilMs);
      } catch (err) {
        const message = err instanceof SessionEnded ? err.message : describeMailError(err, "imap", o.path).message;
        o.log?.("email.watch.session_ended", { path: o.path, message });
        if (!over()) {
          const failures = this.status.failures + 1;
          const delay = backoffMs(failures, o.backoffFirstMs ?? 1_000, o.backoffMaxMs ?? 300_000);
          this.set({ mode: "waiting", lastError: message, failures, retryAt: new Date(o.now().getTime() + delay).toISOString() });
          await this.bell.wait(Math.min(delay, untilMs - o.now().getTime()));
        }
      } finally {
        if (client) await closeImap(client, 2_000);
      }
    }
    this.set({ mode: "stopped", retryAt: null });
  }

  private async session(client: ImapFlow, over: () => boolean, untilMs: number): Promise<void> {
    const o = this.options;
    const timeoutMs = o.commandTimeoutMs ?? 60_000;
    let closed = false;
    const onClose = () => {
      closed = true;
      this.bell.ring();
    };
    const onExists = () => this.bell.ring();
    client.on("close", onClose);
    client.on("exists", onExists);
    try {
      const pass = async () => {
        await withTimeout(o.sync(client), timeoutMs, "a sync pass");
        this.set({ lastSyncAt: o.now().toISOString(), lastError: null, failures: 0 });
      };
      await pass();
      const idle = (o.idle ?? true) && client.capabilities.has("IDLE");
      this.set({ mode: idle ? "idle" : "polling" });
      while (!over()) {
        if (closed || !client.usable) throw new SessionEnded("The IMAP server closed the connection; Familiar reconnects.");
        const wait = Math.min(idle ? (o.watchdogMs ?? 120_000) : (o.pollMs ?? 60_000), untilMs - o.now().getTime());
        if (idle) {
          if (!client.mailbox || client.mailbox.path !== o.path)
            await withTimeout(client.mailboxOpen(o.path, { readOnly: true }).then(() => undefined), timeoutMs, "opening the folder");
          // idle() resolves when IDLE ends: when the next command breaks it, or the connection closes.
          void client.idle().catch(() => undefined);
        }
        await this.bell.wait(wait);
        if (over()) break;
        if (closed) throw new SessionEnded("The IMAP server closed the connection; Familiar reconnects.");
        await pass();
      }
    } finally {
      client.off("close", onClose);
      client.off("exists", onExists);
    }
  }

  private set(patch: Partial<WatchStatus>): void {
    this.status = { ...this.status, ...patch };
    this.options.onStatus?.(this.state);
  }
}
