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
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import { raceClaims } from "../core/storage/claim-race.js";
import { measureActivationSteps } from "./activation-step.js";
import { round } from "./measure.js";

const activationSteps = 2000;
const warmupSteps = 100;
const claimTasks = 2000;

async function benchActivationStep(dir: string, emit: (line: Record<string, unknown>) => void): Promise<void> {
  const store = openSqliteStore({ path: join(dir, "steps.db") });
  try {
    emit({ bench: "store.sqlite.activation_step", steps: activationSteps, ...(await measureActivationSteps(store, activationSteps, warmupSteps)) });
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
      for (let i = 0; i < claimTasks; i++) ids.add((await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: `t${i}` })).id);
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
