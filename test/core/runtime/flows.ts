/**
 * A fixture for the unit tests of the runtime's flows (TaskRunner, runActivation, ApprovalFlow,
 * ProactiveFlow, coreTools): the real SQLite store in a temp dir, a controllable clock, the real
 * outbound door, notifier and wake-up flow, and the one fake at the edge — a scripted in-process
 * model (harness.ts). Nothing runs a loop: each test claims and runs tasks itself.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { estimateTokens, type TokenCounter } from "../../../core/context/tokens.js";
import type { ModelClient } from "../../../core/model/index.js";
import { Notifier } from "../../../core/notify/index.js";
import { Outbound } from "../../../core/outbox/index.js";
import { ProactiveFlow, TaskRunner, WakeupFlow } from "../../../core/runtime/index.js";
import type { ScheduleRequest } from "../../../core/scheduling/index.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Person } from "../../../core/persons/index.js";
import type { Task } from "../../../core/tasks/index.js";
import type { ToolDefinition } from "../../../core/tools/index.js";
import { FakeClock, ScriptedModel } from "./harness.js";

export const silent = pino({ level: "silent" });

/** Counts tokens by the estimate (no tokenizer worker). */
export const tokens: TokenCounter = { count: async (texts) => texts.map(estimateTokens), countCached: async (_k, t) => estimateTokens(t), close: async () => undefined };

export const LEASE_MS = 30_000;

export interface FlowFixture {
  dir: string;
  store: SqliteStore;
  clock: FakeClock;
  model: ScriptedModel;
  outbound: Outbound;
  notifier: Notifier;
  wakeups: WakeupFlow;
  proactive: ProactiveFlow;
  /** Jobs the notifier and the flows scheduled. */
  scheduled: ScheduleRequest[];
  /** How often the outbox and the task loop were woken. */
  wakes: { outbox: number; tasks: number };
  person: Person;
  /** A task runner of lease owner `owner`; `model: null` runs without a model. */
  runner(owner?: string, options?: { tools?: ToolDefinition[] | (() => readonly ToolDefinition[]); model?: ModelClient | null }): TaskRunner;
  /** The person writes `text` on the local chat: appended and bound to a turn in one transaction, as the inbound flow does. */
  say(text: string, person?: Person): Promise<Task>;
  /** Texts queued in the person's outbox, oldest first. */
  outbox(person?: Person): Promise<string[]>;
  close(): Promise<void>;
}

export async function flowFixture(options: { graceMs?: number; script?: ScriptedModel["script"] } = {}): Promise<FlowFixture> {
  const dir = mkdtempSync(join(tmpdir(), "familiar-flows-"));
  const clock = new FakeClock();
  const store = openSqliteStore({ path: join(dir, "familiar.db"), clock });
  const model = new ScriptedModel(options.script ?? (() => ({ content: "ok", toolCalls: [], finishReason: "stop", usage: null })));
  const wakes = { outbox: 0, tasks: 0 };
  const scheduled: ScheduleRequest[] = [];
  const outbound = new Outbound({ store, clock, wake: () => void wakes.outbox++ });
  const scheduler = {
    schedule: async (request: ScheduleRequest) => {
      scheduled.push(request);
      return null;
    },
    cancel: async () => 0,
  };
  const notifier = new Notifier({ store, clock, logger: silent, outbound, scheduler, judge: null });
  const wakeups = new WakeupFlow({ store, clock, logger: silent, graceMs: options.graceMs ?? 86_400_000, owner: "A" });
  const proactive = new ProactiveFlow({ store, notifier });
  const person = await store.persons.createPerson({ displayName: "Ada" });
  await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: "ada", address: "ada" });
  return {
    dir,
    store,
    clock,
    model,
    outbound,
    notifier,
    wakeups,
    proactive,
    scheduled,
    wakes,
    person,
    runner(owner = "A", runnerOptions = {}) {
      const chosen = runnerOptions.model === undefined ? model : runnerOptions.model;
      return new TaskRunner({
        store,
        clock,
        logger: silent,
        owner,
        leaseMs: LEASE_MS,
        model: () => chosen,
        activation: { tokens, budget: 16_000, maxSteps: 8 },
        tools: typeof runnerOptions.tools === "function" ? runnerOptions.tools : () => (runnerOptions.tools as ToolDefinition[] | undefined) ?? [],
        wakeups: new WakeupFlow({ store, clock, logger: silent, graceMs: options.graceMs ?? 86_400_000, owner }),
        proactive,
        outbound,
        poke: () => void wakes.tasks++,
        setupUrl: () => "http://127.0.0.1:1/setup",
      });
    },
    async say(text, who = person) {
      return store.transaction(async () => {
        const message = await store.conversation.appendMessage({ personId: who.id, role: "user", channel: "local", text, taskId: null });
        return store.tasks.bindTurnMessage({ personId: who.id, seq: message.seq, now: clock.now() });
      });
    },
    async outbox(who = person) {
      return (await store.outbox.listOutbound(who.id, { limit: 100 })).items.map((m) => m.text);
    },
    async close() {
      model.release();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
