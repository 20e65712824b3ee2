/**
 * Store benchmark on MongoDB, the same figures as test/bench/store.ts measures on SQLite. Runs only
 * when MONGODB_URI names a server (a fresh database per run, dropped afterwards); otherwise it emits
 * one line saying it was skipped. Called by test/bench/run.ts:
 *
 *   await bench((line) => console.log(JSON.stringify(line)));
 *
 * Figures:
 * - `store.mongodb.activation_step`: append a conversation message, save the task checkpoint and
 *   enqueue an outbox row in one `store.transaction` (a real transaction on a replica set); p50/p99
 *   in µs and steps/s.
 * - `store.mongodb.task_claims`: tasks claimed and completed per second by two workers, each with
 *   its own client; throws if a task was claimed twice or never.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { connectMongoStore, type ConnectedMongoStore } from "../../core/storage/mongo/index.js";
import { measureActivationSteps } from "./activation-step.js";
import { round } from "./measure.js";

const activationSteps = 1000;
const warmupSteps = 50;
const claimTasks = 1000;

async function benchActivationStep(store: ConnectedMongoStore, emit: (line: Record<string, unknown>) => void): Promise<void> {
  const figures = await measureActivationSteps(store, activationSteps, warmupSteps);
  emit({ bench: "store.mongodb.activation_step", transactions: store.supportsTransactions, steps: activationSteps, ...figures });
}

async function benchTaskClaims(uri: string, dbName: string, store: ConnectedMongoStore, emit: (line: Record<string, unknown>) => void): Promise<void> {
  const person = await store.persons.createPerson({ displayName: "bench claims" });
  const ids = new Set<string>();
  for (let i = 0; i < claimTasks; i++) ids.add((await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: `t${i}` })).id);
  const workers = await Promise.all(["W1", "W2"].map(async (owner) => ({ owner, store: await connectMongoStore(uri, { dbName }) })));
  try {
    const started = performance.now();
    const reports = await Promise.all(
      workers.map(async ({ owner, store: worker }) => {
        const claimed: string[] = [];
        for (;;) {
          const task = (await worker.tasks.claimDueTask({ owner, now: new Date(), leaseMs: 600_000, personId: person.id }))?.task ?? null;
          if (task === null) break;
          claimed.push(task.id);
          await worker.tasks.transitionTask({ taskId: task.id, owner, to: { status: "done", result: owner }, now: new Date() });
        }
        return { owner, claimed };
      }),
    );
    const wallMs = performance.now() - started;
    const claimed = reports.flatMap((r) => r.claimed);
    const distinct = new Set(claimed);
    const duplicates = claimed.length - distinct.size;
    const missing = [...ids].filter((id) => !distinct.has(id)).length;
    if (duplicates > 0 || missing > 0) throw new Error(`task claim bench: ${duplicates} task(s) claimed twice, ${missing} never claimed`);
    emit({
      bench: "store.mongodb.task_claims",
      workers: reports.length,
      tasks: ids.size,
      claims_per_s: round(ids.size / (wallMs / 1000), 0),
      wall_ms: round(wallMs),
      per_worker: Object.fromEntries(reports.map((r) => [r.owner, r.claimed.length])),
      duplicates,
    });
  } finally {
    await Promise.all(workers.map((w) => w.store.close()));
  }
}

/** Runs the MongoDB store benchmarks, or emits a `skipped` line when MONGODB_URI is not set. */
export async function bench(emit: (line: Record<string, unknown>) => void): Promise<void> {
  const uri = process.env.MONGODB_URI;
  if (uri === undefined || uri.trim() === "") {
    emit({ bench: "store", adapter: "mongodb", skipped: "MONGODB_URI not set" });
    return;
  }
  const dbName = `familiar_bench_${Date.now()}_${randomBytes(3).toString("hex")}`;
  const store = await connectMongoStore(uri, { dbName });
  try {
    await benchActivationStep(store, emit);
    await benchTaskClaims(uri, dbName, store, emit);
  } finally {
    await store.client.db(dbName).dropDatabase().catch(() => undefined);
    await store.close();
  }
}
