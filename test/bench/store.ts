/**
 * Store benchmark (SQLite, temp file). Called by test/bench/run.ts:
 *
 *   await bench((line) => console.log(JSON.stringify(line)));
 *
 * Emits one line per figure:
 * - `store.sqlite.activation_step`: one durable activation step — append a conversation message, save
 *   the task checkpoint, enqueue an outbox row — in one `store.transaction`; p50/p99 in µs and steps/s.
 * - `store.sqlite.task_claims`: tasks claimed and completed per second by two worker processes on one
 *   file; checks that no task was claimed or completed twice (throws if one was).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import { raceClaims } from "../core/storage/claim-race.js";

const activationSteps = 2000;
const warmupSteps = 100;
const claimTasks = 2000;

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

async function benchActivationStep(dir: string, emit: (line: Record<string, unknown>) => void): Promise<void> {
  const store = openSqliteStore({ path: join(dir, "steps.db") });
  try {
    const person = await store.persons.createPerson({ displayName: "bench" });
    const task = await store.tasks.createTask({ personId: person.id, title: "bench task" });
    const leaseMs = 3_600_000;
    await store.tasks.claimTask({ taskId: task.id, owner: "bench", now: new Date(), leaseMs });
    const timings: number[] = [];
    for (let i = 0; i < warmupSteps + activationSteps; i++) {
      const started = performance.now();
      await store.transaction(async () => {
        await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: "local", text: `step ${i} done`, taskId: task.id });
        await store.tasks.saveCheckpoint({
          taskId: task.id,
          owner: "bench",
          cursor: i + 1,
          checkpoint: { step: i, notes: ["fetched page", "compared prices"], cost: { tokens: 1200 + i } },
          now: new Date(),
          leaseMs,
        });
        await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: `${task.id}:${i}`, text: `Step ${i} finished.` }, new Date());
      });
      if (i >= warmupSteps) timings.push((performance.now() - started) * 1000);
    }
    const total = timings.reduce((a, b) => a + b, 0);
    timings.sort((a, b) => a - b);
    if ((await store.conversation.lastSeq(person.id)) !== warmupSteps + activationSteps) {
      throw new Error("activation step bench: not every step was persisted");
    }
    emit({
      bench: "store.sqlite.activation_step",
      steps: activationSteps,
      p50_us: round(percentile(timings, 50)),
      p99_us: round(percentile(timings, 99)),
      steps_per_s: round(activationSteps / (total / 1e6), 0),
    });
  } finally {
    await store.close();
  }
}

async function benchTaskClaims(dir: string, emit: (line: Record<string, unknown>) => void): Promise<void> {
  const path = join(dir, "claims.db");
  const store = openSqliteStore({ path });
  try {
    const person = await store.persons.createPerson({ displayName: "bench" });
    const ids = new Set<string>();
    await store.transaction(async () => {
      for (let i = 0; i < claimTasks; i++) ids.add((await store.tasks.createTask({ personId: person.id, title: `t${i}` })).id);
    });
    const reports = await raceClaims(path, ["W1", "W2"]);
    const claimed = reports.flatMap((r) => r.claimed);
    const distinct = new Set(claimed);
    const duplicates = claimed.length - distinct.size;
    const missing = [...ids].filter((id) => !distinct.has(id)).length;
    let done = 0;
    let after: string | undefined;
    do {
      const page = await store.tasks.listTasks({ personId: person.id, status: ["done"] }, after === undefined ? { limit: 500 } : { limit: 500, after });
      done += page.items.length;
      after = page.next;
    } while (after !== undefined);
    if (duplicates > 0 || missing > 0 || done !== ids.size) {
      throw new Error(`task claim bench: ${duplicates} task(s) claimed twice, ${missing} never claimed, ${done}/${ids.size} done`);
    }
    const wallMs = Math.max(...reports.map((r) => r.elapsedMs));
    emit({
      bench: "store.sqlite.task_claims",
      workers: reports.length,
      tasks: ids.size,
      claims_per_s: round(ids.size / (wallMs / 1000), 0),
      wall_ms: round(wallMs),
      per_worker: Object.fromEntries(reports.map((r) => [r.owner, r.claimed.length])),
      duplicates,
    });
  } finally {
    await store.close();
  }
}

/** Runs the store benchmarks on a temp SQLite file and emits one JSON-able line per figure. */
export async function bench(emit: (line: Record<string, unknown>) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "familiar-bench-store-"));
  try {
    await benchActivationStep(dir, emit);
    await benchTaskClaims(dir, emit);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
