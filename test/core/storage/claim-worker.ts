/**
 * A task worker in its own process, for races across connections (test/core/storage/sqlite.test.ts)
 * and the claim benchmark (test/bench/store.ts). Usage:
 *
 *   node --import tsx test/core/storage/claim-worker.ts <dbPath> <owner>
 *
 * Opens the store, prints `ready`, waits for a line on stdin (so several workers start together
 * however long each took to boot), then claims due tasks and completes each (`done`, result = owner)
 * until none is left. Prints one JSON line: `{ owner, claimed: taskId[], elapsedMs }`.
 */
import { performance } from "node:perf_hooks";
import { once } from "node:events";
import { z } from "zod";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";

const [path, owner] = z.tuple([z.string().min(1), z.string().min(1)]).parse(process.argv.slice(2));

const store = openSqliteStore({ path, busyTimeoutMs: 30_000 });
process.stdout.write("ready\n");
await once(process.stdin, "data");
process.stdin.pause();

const claimed: string[] = [];
const started = performance.now();
for (;;) {
  const task = (await store.tasks.claimDueTask({ owner, now: new Date(), leaseMs: 60_000 }))?.task;
  if (!task) break;
  await store.tasks.transitionTask({ taskId: task.id, owner, to: { status: "done", result: owner }, now: new Date() });
  claimed.push(task.id);
}
const elapsedMs = performance.now() - started;
await store.close();
process.stdout.write(`${JSON.stringify({ owner, claimed, elapsedMs })}\n`);
