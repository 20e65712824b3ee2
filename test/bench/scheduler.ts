/**
 * Scheduler benchmark. Called by test/bench/run.ts:
 *
 *   await bench((line) => console.log(JSON.stringify(line)));
 *
 * Emits one line per backend:
 * - `scheduler.sqlite.due_to_start`: embedded scheduler (SQLite temp file + in-process
 *   notifications); 200 jobs scheduled `at` 2 s + i × 5 ms in the future (the lead covers the time spent scheduling); latency from each
 *   job's due time to its handler starting, p50/p99/max in ms.
 * - `scheduler.mongodb.due_to_start`: the same on MongoDB when MONGODB_URI is set (polling every
 *   500 ms, no notification channel); otherwise a `skipped` line.
 *
 * Throws if a job runs twice or does not run within 10 s of its due time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import { createEmbeddedScheduler, createMongoScheduler, type AgendaScheduler } from "../../jobs/agenda/index.js";
import { percentile, round } from "./measure.js";

const jobs = 200;
const leadMs = 2000; // longer than scheduling 200 jobs takes, so every job is saved before it is due
const spreadMs = 5;


/** Schedules the jobs on a started scheduler and measures due-to-start latency. */
async function measure(scheduler: AgendaScheduler): Promise<{ latencies: number[]; scheduleMs: number }> {
  const started = new Map<string, number>();
  let duplicate: string | undefined;
  scheduler.define(
    "bench.tick",
    async (job) => {
      if (started.has(job.key)) duplicate = job.key;
      started.set(job.key, Date.now() - job.dueAt.getTime());
    },
    { concurrency: jobs, lockLifetimeMs: 10_000 },
  );
  await scheduler.start();
  const t0 = Date.now();
  const base = t0 + leadMs;
  for (let i = 0; i < jobs; i++) {
    await scheduler.schedule({ name: "bench.tick", key: `j${i}`, data: { i }, timing: { kind: "at", at: new Date(base + i * spreadMs) } });
  }
  const scheduleMs = Date.now() - t0;
  const deadline = base + jobs * spreadMs + 10_000;
  while (started.size < jobs && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
  await scheduler.drain(2000);
  if (duplicate) throw new Error(`scheduler bench: job ${duplicate} ran twice`);
  if (started.size < jobs) throw new Error(`scheduler bench: only ${started.size} of ${jobs} jobs ran within 10 s of their due time`);
  return { latencies: [...started.values()].sort((a, b) => a - b), scheduleMs };
}

function line(backend: string, result: { latencies: number[]; scheduleMs: number }, extra: Record<string, unknown>): Record<string, unknown> {
  const { latencies, scheduleMs } = result;
  return {
    bench: `scheduler.${backend}.due_to_start`,
    jobs,
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(latencies.at(-1) ?? Number.NaN),
    schedule_per_job_ms: round(scheduleMs / jobs, 3),
    ...extra,
  };
}

export async function bench(emit: (line: Record<string, unknown>) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "familiar-bench-scheduler-"));
  try {
    const scheduler = await createEmbeddedScheduler({ path: join(dir, "jobs.db") });
    emit(line("sqlite", await measure(scheduler), { notification: "in-memory", process_every_ms: 5000 }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const uri = process.env.MONGODB_URI;
  if (!uri) {
    emit({ bench: "scheduler.mongodb.due_to_start", skipped: "MONGODB_URI not set" });
    return;
  }
  const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 });
  const dbName = `familiar_bench_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  try {
    const scheduler = await createMongoScheduler({ client, dbName, processEveryMs: 500 });
    emit(line("mongodb", await measure(scheduler), { notification: "none (polling)", process_every_ms: 500 }));
  } finally {
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
  }
}
