/**
 * `store-calls`: how many store calls the runtime makes, and how long they take, for a plain turn
 * (a message in → the answer delivered) and for a wake-up (due → the reminder delivered), on the
 * embedded SQLite store with an instant in-process model. Every repository method call counts
 * (`store.transaction` too); time is the sum of the calls' durations. Round 1 measured 32 calls per
 * plain turn and 28 per wake-up.
 */
import { performance } from "node:perf_hooks";
import type { Store } from "../../core/storage/ports.js";
import { wakeupCheckpoint } from "../../core/tasks/checkpoint.js";
import { reply, RuntimeHarness, runtimeNote, ScriptedModel, type Proc } from "../core/runtime/harness.js";
import { percentile, round } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

/** A store whose every repository call is counted and timed (by `repo.method`). */
function countingStore(inner: Store): { store: Store; calls: Map<string, number>; reset(): void; total(): { calls: number; ms: number } } {
  const calls = new Map<string, number>();
  let ms = 0;
  const wrap = <T extends object>(name: string, target: T): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value: unknown = Reflect.get(obj, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const key = `${name}.${String(prop)}`;
          calls.set(key, (calls.get(key) ?? 0) + 1);
          const started = performance.now();
          const result: unknown = Reflect.apply(value, obj, args);
          if (result instanceof Promise) return result.finally(() => (ms += performance.now() - started));
          ms += performance.now() - started;
          return result;
        };
      },
    });
  const repos = ["persons", "conversation", "goals", "tasks", "journal", "memory", "grants", "approvals", "audit", "outbox", "inbound", "notifications", "localMailbox", "hooks"] as const;
  const store = new Proxy(inner, {
    get(obj, prop, receiver) {
      if ((repos as readonly (string | symbol)[]).includes(prop)) return wrap(String(prop), Reflect.get(obj, prop, receiver) as object);
      if (prop === "transaction") {
        return (fn: () => Promise<unknown>) => {
          calls.set("transaction", (calls.get("transaction") ?? 0) + 1);
          return obj.transaction(fn);
        };
      }
      return Reflect.get(obj, prop, receiver);
    },
  });
  return {
    store,
    calls,
    reset: () => {
      calls.clear();
      ms = 0;
    },
    total: () => ({ calls: [...calls.values()].reduce((a, b) => a + b, 0), ms }),
  };
}

/** Waits without waking the loops (they run on their own) until `done` holds and both loops are idle. */
async function quiet(proc: Proc, done: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(done() && proc.familiar.taskLoop.active === 0 && proc.familiar.outboxLoop.active === 0)) {
    if (Date.now() > end) throw new Error("the runtime did not finish in 10 s");
    await new Promise((r) => setTimeout(r, 5));
  }
  // Let the loops arm their timers after the last item.
  await new Promise((r) => setTimeout(r, 30));
}

export async function bench(emit: Emit): Promise<void> {
  const model = new ScriptedModel((messages) => {
    const note = runtimeNote(messages);
    return note ? reply(`Time to ${/wake-up "([^"]+)"/.exec(note)?.[1] ?? "stretch"}!`) : reply("ok");
  });
  const h = new RuntimeHarness(model);
  let counting: ReturnType<typeof countingStore> | null = null;
  try {
    const proc = await h.start({ wrapStore: (s) => (counting = countingStore(s)).store });
    const c = counting!;
    const rounds = 20;
    const turn: { calls: number; ms: number }[] = [];
    let lastTurn = new Map<string, number>();
    // Warm-up turn (creates the person), then measured turns.
    await h.say(proc, "bench", "hello");
    await h.settle(proc);
    for (let i = 0; i < rounds; i++) {
      c.reset();
      await h.say(proc, "bench", `message ${i}`);
      await quiet(proc, () => proc.channel.sent.length === i + 2);
      turn.push(c.total());
      lastTurn = new Map(c.calls);
    }
    const personId = (await proc.store.persons.findIdentity("local", "bench"))!.personId;
    const wake: { calls: number; ms: number }[] = [];
    let lastWake = new Map<string, number>();
    for (let i = 0; i < rounds; i++) {
      const at = h.clock.now();
      await proc.store.tasks.createTask({ kind: "wakeup", personId, title: "stretch", notBefore: at, checkpoint: wakeupCheckpoint({ note: `stretch ${i}`, notify: "always", timing: { at: at.toISOString() }, provenance: { tainted: false, fromPersonWords: true } }) });
      c.reset();
      const before = proc.channel.sent.length;
      proc.familiar.taskLoop.poke();
      await quiet(proc, () => proc.channel.sent.length === before + 1);
      wake.push(c.total());
      lastWake = new Map(c.calls);
      h.clock.advance(3_600_000);
    }
    const summary = (xs: { calls: number; ms: number }[]) => {
      const calls = xs.map((x) => x.calls).sort((a, b) => a - b);
      const ms = xs.map((x) => x.ms).sort((a, b) => a - b);
      return { calls_p50: percentile(calls, 50), calls_max: calls.at(-1), store_ms_p50: round(percentile(ms, 50), 2) };
    };
    emit({
      bench: "runtime.store_calls",
      plain_turn: summary(turn),
      wakeup: summary(wake),
      plain_turn_calls: Object.fromEntries([...lastTurn].sort()),
      wakeup_calls: Object.fromEntries([...lastWake].sort()),
      round1: { plain_turn_calls: 32, wakeup_calls: 28 },
      measured: "repository calls (and store.transaction) from a message handed to the core until its answer was delivered and both loops were idle again; a wake-up from its due time until its reminder was delivered; embedded SQLite, instant in-process model; includes the loops' own claims and nextDueAt look-ups",
    });
  } finally {
    await h.close();
  }
}
