/**
 * A task worker in its own process, for races across connections (test/core/storage/sqlite.test.ts)
 * and the claim benchmark (test/bench/store.ts). Usage:
 *
 *   node --import tsx test/core/storage/claim-worker.ts <dbPath> <owner> <startAtEpochMs>
 *
 * Waits until `startAt` (so several workers start together), then claims due tasks and completes
 * each (`done`, result = owner) until none is left. Prints one JSON line:
 * `{ owner, claimed: taskId[], elapsedMs }`.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";

const args = z
  .tuple([z.string().min(1), z.string().min(1), z.coerce.number().int().nonnegative()])
  .parse(process.argv.slice(2));
const [path, owner, startAt] = args;

const store = openSqliteStore({ path, busyTimeoutMs: 30_000 });
while (Date.now() < startAt) await sleep(Math.min(5, startAt - Date.now()));

const claimed: string[] = [];
const started = performance.now();
for (;;) {
  const task = await store.tasks.claimDueTask({ owner, now: new Date(), leaseMs: 60_000 });
  if (!task) break;
  await store.tasks.transitionTask({ taskId: task.id, owner, to: { status: "done", result: owner }, now: new Date() });
  claimed.push(task.id);
}
const elapsedMs = performance.now() - started;
await store.close();
process.stdout.write(`${JSON.stringify({ owner, claimed, elapsedMs })}\n`);
