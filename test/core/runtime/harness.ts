/**
 * An in-process Familiar for runtime unit tests: SQLite in a temp file (so a "restart" is a second
 * Familiar on the same file), a controllable clock, a scripted in-process model, a recording channel
 * and a no-op Agenda stand-in. "Killing" a process stops its loops and never resolves its pending
 * model calls, the way a SIGKILL leaves work behind.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type { ChannelAdapter, InboundMessage, OutboundPart } from "../../../core/channels/port.js";
import type { Clock } from "../../../core/clock.js";
import { estimateTokens, type TokenCounter } from "../../../core/context/tokens.js";
import { Familiar } from "../../../app/familiar.js";
import type { ChatMessage, ModelClient, ModelRequest, ModelResponse } from "../../../core/model/port.js";
import type { Scheduler } from "../../../core/scheduling/scheduler.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Store } from "../../../core/storage/ports.js";
import type { ToolDefinition } from "../../../core/tools/tool.js";

export class FakeClock implements Clock {
  constructor(private at = new Date("2026-12-01T09:00:00Z")) {}
  now(): Date {
    return new Date(this.at);
  }
  set(at: Date): void {
    this.at = new Date(at);
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

/** A model answering from `script`, recording every request. `hold()` makes calls wait until released. */
export class ScriptedModel implements ModelClient {
  readonly model = "scripted";
  readonly requests: ModelRequest[] = [];
  private gate: Promise<void> | null = null;
  private open: (() => void) | null = null;
  constructor(public script: (messages: ChatMessage[]) => ModelResponse) {}
  /** Calls from now on wait until `release()`. */
  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.open?.();
    this.gate = null;
  }
  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    if (this.gate) await this.gate;
    return this.script(request.messages);
  }
}

export const reply = (content: string): ModelResponse => ({ content, toolCalls: [], finishReason: "stop", usage: null });
export const call = (name: string, args: Record<string, unknown>, id = `c_${Math.random().toString(36).slice(2)}`): ModelResponse => ({
  content: null,
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
  finishReason: "tool_calls",
  usage: null,
});

/** The text of every user message the model was shown, in order. */
export const userTexts = (messages: ChatMessage[]): string[] => messages.filter((m) => m.role === "user").map((m) => String(m.content));
/** The model's last message is a Runtime note (a background activation). */
export const runtimeNote = (messages: ChatMessage[]): string | null => {
  const last = messages.at(-1);
  return last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:") ? last.content : null;
};

const tokens: TokenCounter = { count: async (texts) => texts.map(estimateTokens), countCached: async (_k, t) => estimateTokens(t), close: async () => undefined };

const noScheduler: Scheduler = {
  define: () => undefined,
  schedule: async () => null,
  cancel: async () => 0,
  cancelAll: async () => 0,
  nextRunAt: async () => null,
  start: async () => undefined,
  drain: async () => undefined,
  status: () => ({ running: true, backend: "none" }),
};

/** A channel that records what it was asked to send (idempotent by key, like the local mailbox). */
export class RecordingChannel implements ChannelAdapter {
  readonly channel = "local" as const;
  readonly resend = "idempotent" as const;
  readonly sent: { address: string; text: string; key: string }[] = [];
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  render(content: { text: string; buttons: { id: string; label: string }[] }): OutboundPart[] {
    return content.text.trim() ? [{ body: content.text, plain: content.text, buttons: content.buttons.length > 0 }] : [];
  }
  async sendPart(target: { address: string }, part: OutboundPart, key: string): Promise<string> {
    if (!this.sent.some((s) => s.key === key)) this.sent.push({ address: target.address, text: part.plain, key });
    return key;
  }
  texts(address?: string): string[] {
    return this.sent.filter((s) => !address || s.address === address).map((s) => s.text);
  }
}

/** One "process": a Familiar on the shared store file. */
export interface Proc {
  familiar: Familiar;
  store: Store;
  channel: RecordingChannel;
  /** Like SIGKILL: its loops stop, pending model calls never return, nothing is cleaned up. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export class RuntimeHarness {
  readonly dir = mkdtempSync(join(tmpdir(), "familiar-runtime-"));
  readonly clock = new FakeClock();
  readonly procs: Proc[] = [];
  constructor(
    readonly model: ScriptedModel,
    private readonly tools: ToolDefinition[] = [],
  ) {}

  async start(options: { graceMs?: number; wrapStore?: (store: Store) => Store } = {}): Promise<Proc> {
    const sqlite = openSqliteStore({ path: join(this.dir, "familiar.db"), clock: this.clock });
    const store = options.wrapStore ? options.wrapStore(sqlite) : sqlite;
    let dead = false;
    const never = new Promise<never>(() => undefined);
    // A dead process's model calls never come back (it cannot act on an answer any more).
    const model: ModelClient = {
      model: this.model.model,
      complete: async (request) => {
        if (dead) return never;
        const response = await this.model.complete(request);
        return dead ? never : response;
      },
    };
    const familiar = new Familiar({
      store,
      scheduler: noScheduler,
      model,
      tokens,
      clock: this.clock,
      logger: pino({ level: "silent" }),
      contextTokenBudget: 16_000,
      maxSteps: 8,
      wakeupGraceMs: options.graceMs ?? 86_400_000,
      publicUrl: () => "http://127.0.0.1:1",
      singleProcess: true,
      sentinel: { egress: new EgressGuard({}) },
    });
    familiar.addTools(this.tools);
    const channel = new RecordingChannel();
    familiar.addChannel(channel);
    await familiar.start();
    const proc: Proc = {
      familiar,
      store,
      channel,
      async kill() {
        if (dead) return;
        dead = true;
        await familiar.taskLoop.stop(0);
        await familiar.outboxLoop.stop(0);
      },
      async stop() {
        if (dead) return;
        dead = true;
        await familiar.stop(1_000);
      },
    };
    this.procs.push(proc);
    return proc;
  }

  /** A message from the local user `user`, as the web chat posts it. */
  say(proc: Proc, user: string, text: string, id = `${user}:${Math.random()}`): Promise<unknown> {
    const event: InboundMessage = { kind: "message", channel: "local", updateId: id, accountId: user, address: user, text, at: this.clock.now() };
    return proc.familiar.handleInbound(event);
  }

  /** Waits (real time) until `probe` holds, poking the loops. */
  async until(proc: Proc, probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      proc.familiar.taskLoop.poke();
      proc.familiar.outboxLoop.poke();
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Lets the loops run until nothing is due now and nothing is running. */
  async settle(proc: Proc): Promise<void> {
    await this.until(
      proc,
      async () => {
        const [task, out] = await Promise.all([proc.store.tasks.nextDueAt(), proc.store.outbox.nextDueAt()]);
        const now = this.clock.now();
        return proc.familiar.taskLoop.active === 0 && proc.familiar.outboxLoop.active === 0 && (!task || task > now) && (!out || out > now);
      },
      "the loops to settle",
    );
  }

  async close(): Promise<void> {
    this.model.release();
    for (const p of this.procs) {
      await p.stop().catch(() => undefined);
      await p.store.close().catch(() => undefined);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
