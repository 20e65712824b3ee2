/**
 * Durable-work parts of the runtime benchmark (run by test/bench/runtime.ts, not a module of
 * their own):
 * - `runtime.suspended_goals`: 1,000 persons with 10 goals each, every goal with a check-in task
 *   waiting for a time far in the future (yearly cron `0 9 1 6 *`, next on 1 June), seeded through
 *   the public store API (one transaction per person; the task row holds its next due time, as the
 *   create_goal tool does), in an app started in this process. Then the real app is started
 *   as a child on that DATA_DIR (3 times; p50 of the start times); reported: VmRSS and the CPU time
 *   (utime+stime) the last one used over a 30 s idle window right after it was ready. Target: a suspended goal costs no
 *   memory and no CPU.
 * - `runtime.wakeup_latency`: 100 wake-up tasks (one per person, notify "always") created like the
 *   schedule_wakeup tool does (the task loop woken once), due 3 s from now and 30 ms
 *   apart, in an app in this process with an instant fake model. Latency: each wake-up's due time
 *   → the fake model receiving its activation's request (recognised by the `Runtime:` system note
 *   naming the wake-up), wall clock ms. `first_wakeup_ms` is the earliest-due one, which also starts
 *   the tokenizer worker in a fresh process (the wake-ups due meanwhile queue behind it); `warm_*`
 *   covers only the wake-ups due after that first one reached the model.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import { loadConfig } from "../../core/config/load.js";
import { nextCronTime } from "../../core/time/zones.js";
import { checkinCheckpoint, wakeupCheckpoint } from "../../core/tasks/checkpoint.js";
import { startApp } from "../../app/index.js";
import { startFakeOpenAI, text, type RecordedRequest } from "../fakes/openai-server.js";
import { startTestApp } from "../helpers/app.js";
import { freePort } from "../helpers/child.js";
import { round, sampleProc, sleep, spawnApp, spread, type AppMode, type SpawnedApp } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

const persons = 1_000;
const goalsPerPerson = 10;
const farCron = "0 9 1 6 *";
const timeZones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"];
const idleWindowMs = 30_000;
const restarts = 3;
const wakeups = 100;
const wakeupLeadMs = 3_000;
const wakeupSpacingMs = 30;

const fileMb = (path: string): number => {
  try {
    return statSync(path).size / 2 ** 20;
  } catch {
    return 0;
  }
};

/** Seeds persons, goals and check-in tasks + cron jobs into `dataDir` through an in-process app. */
async function seed(dataDir: string): Promise<{ storeMs: number }> {
  const config = loadConfig({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn" });
  const discard = new Writable({ write: (_chunk, _enc, done) => done() });
  const app = await startApp(config, { logDestination: discard });
  try {
    const { store } = app;
    const now = new Date();
    const storeStarted = performance.now();
    for (let p = 0; p < persons; p++) {
      await store.transaction(async () => {
        const timeZone = timeZones[p % timeZones.length]!;
        const person = await store.persons.createPerson({ displayName: `person ${p}`, timeZone });
        await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: `person${p}`, address: `person${p}` });
        for (let g = 0; g < goalsPerPerson; g++) {
          const goal = await store.goals.createGoal({ personId: person.id, title: `goal ${g} of person ${p}`, description: "watch for a cheaper flight to Lisbon", checkIn: { cron: farCron, timeZone } });
          await store.tasks.createTask({
            personId: person.id,
            goalId: goal.id,
            kind: "checkin",
            title: `check-in: ${goal.title}`,
            checkpoint: checkinCheckpoint({ cron: farCron, timeZone }),
            notBefore: nextCronTime(farCron, timeZone, now),
          });
        }
      });
    }
    return { storeMs: performance.now() - storeStarted };
  } finally {
    await app.stop();
  }
}

/** 10,000 suspended goals of 1,000 persons: seeding time, then the restarted child's start, memory and idle CPU. */
export async function benchSuspendedGoals(emit: Emit, mode: AppMode): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-bench-goals-"));
  try {
    const seeded = await seed(dataDir);
    // Start time on that data is noisy on a shared machine: take the median of 3 starts, keep the last one running.
    const readyMs: number[] = [];
    let app: SpawnedApp | undefined;
    for (let i = 0; i < restarts; i++) {
      await app?.stop();
      app = await spawnApp(mode, await freePort(), { DATA_DIR: dataDir });
      readyMs.push(app.readyMs);
    }
    if (!app) throw new Error("no restart");
    try {
      const atReady = sampleProc(app.pid);
      await sleep(idleWindowMs);
      const after = sampleProc(app.pid);
      emit({
        bench: "runtime.suspended_goals",
        mode,
        persons,
        goals: persons * goalsPerPerson,
        seed_store_ms: round(seeded.storeMs),
        ready_p50_ms: round(readyMs.sort((a, b) => a - b)[Math.floor(restarts / 2)]!),
        ready_all_ms: readyMs.map((ms) => round(ms)),
        rss_at_ready_mb: atReady.rssMb,
        rss_after_idle_mb: after.rssMb,
        cpu_idle_window_ms: after.cpuMs - atReady.cpuMs,
        idle_window_ms: idleWindowMs,
        familiar_db_mb: round(fileMb(join(dataDir, "familiar.db")) + fileMb(join(dataDir, "familiar.db-wal"))),
        jobs_db_mb: round(fileMb(join(dataDir, "jobs.db")) + fileMb(join(dataDir, "jobs.db-wal"))),
        target: "near zero CPU, memory as an empty app",
        measured: "child restarted on the seeded DATA_DIR; VmRSS and utime+stime from /proc over the idle window right after ready",
      });
    } finally {
      await app.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** 100 wake-ups due over 3 s: due time → the fake model receiving the wake-up's activation request. */
export async function benchWakeups(emit: Emit): Promise<void> {
  const received = new Map<number, number>();
  const noteOf = (r: RecordedRequest): number | null => {
    for (const m of r.messages) {
      if (m.role !== "system" || typeof m.content !== "string" || !m.content.startsWith("Runtime:")) continue;
      const match = /scheduled wake-up "bench-wake-(\d+)"/.exec(m.content);
      if (match) return Number(match[1]);
    }
    return null;
  };
  const model = await startFakeOpenAI({
    fallback: (r) => {
      const i = noteOf(r);
      if (i !== null && !received.has(i)) received.set(i, Date.now());
      return text(i === null ? `echo: ${r.lastUserText ?? ""}` : "Time to stretch.");
    },
  });
  const app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_MODEL: "fake-model" });
  try {
    const { store } = app;
    const people = [];
    for (let i = 0; i < wakeups; i++) {
      const person = await store.persons.createPerson({ displayName: `sleeper ${i}` });
      await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: `sleeper${i}`, address: `sleeper${i}` });
      people.push(person);
    }
    const base = Date.now() + wakeupLeadMs;
    const due: number[] = [];
    const scheduleStarted = performance.now();
    for (let i = 0; i < wakeups; i++) {
      const at = new Date(base + i * wakeupSpacingMs);
      due.push(at.getTime());
      const note = `bench-wake-${i}`;
      await store.tasks.createTask({ kind: "wakeup", personId: people[i]!.id, title: note, checkpoint: wakeupCheckpoint({ note, notify: "always", timing: { at: at.toISOString() } }), notBefore: at });
    }
    app.familiar.taskLoop.poke();
    const scheduleMs = performance.now() - scheduleStarted;
    if (Date.now() > base) throw new Error(`scheduling ${wakeups} wake-ups took ${round(scheduleMs)} ms, longer than the ${wakeupLeadMs} ms lead`);
    const deadline = due.at(-1)! + 20_000;
    while (received.size < wakeups && Date.now() < deadline) await sleep(20);
    const latencies = [...received].map(([i, at]) => at - due[i]!);
    // Wake-ups due after the first activation reached the model: the tokenizer worker was loaded by then.
    const firstReceived = received.get(0) ?? Number.POSITIVE_INFINITY;
    const warm = [...received].filter(([i]) => due[i]! >= firstReceived).map(([i, at]) => at - due[i]!);
    emit({
      bench: "runtime.wakeup_latency",
      wakeups,
      received: received.size,
      ...spread(latencies, "_ms"),
      min_ms: round(Math.min(...latencies)),
      first_wakeup_ms: round((received.get(0) ?? Number.NaN) - due[0]!),
      warm_wakeups: warm.length,
      ...spread(warm, "_ms", "warm_"),
      spread_ms: wakeupSpacingMs * (wakeups - 1),
      schedule_per_wakeup_ms: round(scheduleMs / wakeups, 2),
      measured: "due time (wall clock) → the fake model receiving the activation's request carrying the wake-up's Runtime: note; app in this process, embedded SQLite",
    });
    if (received.size < wakeups) throw new Error(`only ${received.size} of ${wakeups} wake-ups reached the model within 20 s of the last due time`);
  } finally {
    await app.close();
    await model.close();
  }
}
