import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { loadConfig } from "../../core/config/load.js";
import type { Clock } from "../../core/clock.js";
import type { Familiar } from "../../app/familiar.js";
import { startApp, type RunningApp } from "../../app/index.js";
import { waitFor } from "./wait.js";

/** A Familiar started in-process on a temp DATA_DIR and a random port, plus a local-chat client. */
export interface TestApp extends RunningApp {
  dataDir: string;
  logs: string[];
  /** Posts a message to the local chat as `user`. */
  say(user: string, text: string, clientMessageId?: string): Promise<Response>;
  /** Presses a button on a message. */
  press(user: string, messageId: string, buttonId: string): Promise<Response>;
  /** Waits until `user` has at least `count` messages from Familiar in total (long-polls); returns all of them. */
  replies(user: string, count: number, timeoutMs?: number): Promise<LocalReply[]>;
  /** Waits until the messages Familiar sent `user` (edits applied) satisfy `predicate`; returns them. */
  repliesUntil(user: string, predicate: (messages: LocalReply[]) => boolean, timeoutMs?: number): Promise<LocalReply[]>;
  close(): Promise<void>;
}

export interface LocalReply {
  id: string;
  text: string;
  buttons?: { id: string; label: string }[];
  attachments?: { id: string; name: string; mimeType: string; size: number; url: string }[];
  at: string;
}

/** Options of {@link startTestApp}. */
export interface TestAppOptions {
  /** Passed to `startApp`: runs after the core and the local chat are wired, before channels start (add a channel, a tool, …). */
  configure?: (familiar: Familiar) => void;
  /** The clock Familiar reads (e.g. a {@link TestClock} that can jump ahead to a wake-up's time). */
  clock?: Clock;
}

/** A clock that follows real time plus an offset the test can move forward. */
export class TestClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  /** Moves the clock forward so it reads at least `at`. */
  reach(at: Date): void {
    const behind = at.getTime() - this.now().getTime();
    if (behind > 0) this.offsetMs += behind;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/**
 * Makes Familiar's clock read at least `at` and lets the task loop run everything due by then; resolves
 * when nothing due remains and nothing is running (what the loop's timer would do at that time).
 */
export async function runDueAt(app: RunningApp, clock: TestClock, at: Date, timeoutMs = 15_000): Promise<void> {
  clock.reach(at);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    app.familiar.taskLoop.poke();
    await new Promise((r) => setTimeout(r, 50));
    const next = await app.store.tasks.nextDueAt();
    if (app.familiar.taskLoop.active === 0 && (!next || next > clock.now())) return;
    if (Date.now() > deadline) throw new Error(`due work did not finish by ${at.toISOString()} (next due ${next?.toISOString() ?? "none"})`);
  }
}

/**
 * Waits until Familiar is quiet: nothing running in its task and outbox loops and nothing due by
 * `clock` (default: real time), on two probes in a row. After it, an assertion that something did
 * not happen (a second reminder, another model call) needs no fixed wait: whatever work already
 * due was going to do, it has done.
 */
export async function settled(app: RunningApp, clock: Clock = { now: () => new Date() }, timeoutMs = 15_000): Promise<void> {
  const { taskLoop, outboxLoop } = app.familiar;
  let quietProbes = 0;
  await waitFor(
    async () => {
      taskLoop.poke();
      outboxLoop.poke();
      const [task, out] = await Promise.all([app.store.tasks.nextDueAt(), app.store.outbox.nextDueAt()]);
      const now = clock.now();
      const quiet = taskLoop.active === 0 && outboxLoop.active === 0 && (!task || task > now) && (!out || out > now);
      quietProbes = quiet ? quietProbes + 1 : 0;
      return quietProbes >= 2;
    },
    "Familiar's loops to settle",
    { timeoutMs, intervalMs: 25 },
  );
}

/** Starts an app with the given settings (env-style strings), DATA_DIR in a fresh temp dir unless given. */
export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), "familiar-test-"));
  // The inbound rate limit is off by default here (tests send bursts); test/e2e/rate-limit.test.ts sets it.
  const unlimited = { INBOUND_LIMIT_PER_SENDER: "100000", INBOUND_LIMIT_PER_CHAT: "100000", INBOUND_LIMIT_GLOBAL: "1000000" };
  const config = loadConfig({ LOG_LEVEL: "info", ...unlimited, ...env, DATA_DIR: dataDir, PORT: env.PORT ?? "0", HOST: "127.0.0.1" });
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await startApp(config, { logDestination, ...(options.configure && { configure: options.configure }), ...(options.clock && { clock: options.clock }) });
  const seen = new Map<string, LocalReply[]>();
  const cursors = new Map<string, string>();

  const post = (path: string, body: unknown) =>
    fetch(`${app.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  return {
    ...app,
    dataDir,
    logs,
    say: (user, text, clientMessageId) => post("/api/local/messages", { user, text, ...(clientMessageId && { clientMessageId }) }),
    press: (user, messageId, buttonId) => post("/api/local/actions", { user, messageId, buttonId }),
    async replies(user, count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      const list = seen.get(user) ?? [];
      seen.set(user, list);
      while (list.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for ${count} replies to ${user}; got ${list.length}: ${JSON.stringify(list.map((m) => m.text))}`);
        const after = cursors.get(user);
        const res = await fetch(`${app.url}/api/local/messages?user=${encodeURIComponent(user)}&wait=${Math.min(left, 5_000)}${after ? `&after=${after}` : ""}`);
        const body = (await res.json()) as { messages: LocalReply[]; cursor: string };
        for (const m of body.messages) {
          const i = list.findIndex((x) => x.id === m.id);
          if (i >= 0) list[i] = m;
          else list.push(m);
        }
        cursors.set(user, body.cursor);
      }
      return list;
    },
    async repliesUntil(user, predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      let messages: LocalReply[] = [];
      while (Date.now() < deadline) {
        const res = await fetch(`${app.url}/api/local/messages?user=${encodeURIComponent(user)}`);
        messages = ((await res.json()) as { messages: LocalReply[] }).messages;
        if (predicate(messages)) return messages;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`timed out; messages to ${user}: ${JSON.stringify(messages.map((m) => m.text.slice(0, 120)))}`);
    },
    async close() {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
