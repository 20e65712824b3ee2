/**
 * Runtime benchmark (durable work). Called by test/bench/run.ts:
 *
 *   await bench((line) => console.log(JSON.stringify(line)));
 *
 * The real app runs as a child process, either as TypeScript through tsx (`node --import tsx
 * main.ts`: transpiles every module at start) or as the compiled build (`npm run build` once,
 * then `node dist/main.js`, what `npm start` runs). Emits:
 * - `runtime.build`: how long `npm run build` took.
 * - `runtime.start`: per mode, 5 starts on a fresh DATA_DIR without a model; p50 (and min/max) of
 *   spawn → "Familiar is running" log line and spawn → first 200 from `/healthz`; target 2 s.
 * - `runtime.idle_memory`: the compiled build (tsx if the build failed), with the instant fake model: VmRSS after start + 10 s idle,
 *   then after 20 turns + 10 s idle; CPU time (utime+stime) used in each 10 s idle window; target
 *   80 MB.
 * - `runtime.suspended_goals` and `runtime.wakeup_latency`: see test/bench/runtime-durable.ts.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startFakeOpenAI } from "../fakes/openai-server.js";
import { freePort } from "../helpers/child.js";
import { ChatUser } from "./chat-client.js";
import { percentile, root, round, sampleProc, sleep, spawnApp, type AppMode } from "./measure.js";
import { benchSuspendedGoals, benchWakeups } from "./runtime-durable.js";

type Emit = (line: Record<string, unknown>) => void;

const starts = 5;
const idleMs = 10_000;
const idleTurns = 20;

/** `npm run build` (tsc to dist/); returns its wall time, or throws with tsc's output. */
function build(): number {
  const started = performance.now();
  const result = spawnSync("npm", ["run", "build", "--silent"], { cwd: root, encoding: "utf8", timeout: 240_000 });
  if (result.status !== 0) throw new Error(`npm run build failed (${result.status ?? result.signal}): ${(result.stdout + result.stderr).slice(-1500)}`);
  return performance.now() - started;
}

/** A fresh temp DATA_DIR; removed by the returned function. */
function tempDataDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "familiar-bench-runtime-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function benchStart(emit: Emit, mode: AppMode): Promise<void> {
  const ready: number[] = [];
  const health: number[] = [];
  for (let i = 0; i < starts; i++) {
    const data = tempDataDir();
    try {
      const app = await spawnApp(mode, await freePort(), { DATA_DIR: data.dir });
      ready.push(app.readyMs);
      health.push(app.healthMs);
      await app.stop();
    } finally {
      data.remove();
    }
  }
  ready.sort((a, b) => a - b);
  health.sort((a, b) => a - b);
  emit({
    bench: "runtime.start",
    mode,
    runs: starts,
    ready_p50_ms: round(percentile(ready, 50)),
    healthz_p50_ms: round(percentile(health, 50)),
    ready_min_ms: round(ready[0]!),
    ready_max_ms: round(ready.at(-1)!),
    healthz_max_ms: round(health.at(-1)!),
    target_ms: 2_000,
    measured: "spawn of node to the ready log line / to the first 200 from /healthz; fresh DATA_DIR, no model",
    ...(mode === "tsx" && { note: "includes tsx transpiling the TypeScript sources at start" }),
  });
}

async function benchIdleMemory(emit: Emit, mode: AppMode): Promise<void> {
  const model = await startFakeOpenAI();
  const data = tempDataDir();
  try {
    const app = await spawnApp(mode, await freePort(), { DATA_DIR: data.dir, OPENAI_BASE_URL: model.url, OPENAI_MODEL: "fake-model" });
    try {
      const atReady = sampleProc(app.pid);
      await sleep(idleMs);
      const idle = sampleProc(app.pid);
      const chat = new ChatUser(app.url, "ana");
      for (let i = 0; i < idleTurns; i++) await chat.turn(`turn ${i}: what is on my list for today?`);
      const afterTurns = sampleProc(app.pid);
      await sleep(idleMs);
      const idleAfterTurns = sampleProc(app.pid);
      emit({
        bench: "runtime.idle_memory",
        mode,
        rss_at_ready_mb: atReady.rssMb,
        rss_after_start_idle_mb: idle.rssMb,
        rss_after_turns_idle_mb: idleAfterTurns.rssMb,
        threads_after_start_idle: idle.threads,
        threads_after_turns_idle: idleAfterTurns.threads,
        cpu_idle_window_after_start_ms: idle.cpuMs - atReady.cpuMs,
        cpu_idle_window_after_turns_ms: idleAfterTurns.cpuMs - afterTurns.cpuMs,
        idle_window_ms: idleMs,
        turns: idleTurns,
        target_mb: 80,
        measured: "VmRSS of the app process (all threads) from /proc/<pid>/status; CPU = utime+stime from /proc/<pid>/stat",
      });
    } finally {
      await app.stop();
    }
  } finally {
    data.remove();
    await model.close();
  }
}

/** Runs the runtime benchmarks; a failing part emits an `error` line and the others still run. */
export async function bench(emit: Emit): Promise<void> {
  const modes: AppMode[] = ["tsx"];
  try {
    emit({ bench: "runtime.build", build_ms: round(build()), command: "npm run build (tsc -p tsconfig.build.json)" });
    modes.unshift("dist");
  } catch (err) {
    emit({ bench: "runtime.build", error: (err as Error).message });
  }
  const parts: [string, () => Promise<void>][] = [
    ...modes.map((mode): [string, () => Promise<void>] => [`runtime.start.${mode}`, () => benchStart(emit, mode)]),
    // Memory and idle CPU of what `npm start` runs (the build; tsx only when the build failed).
    [`runtime.idle_memory.${modes[0]!}`, () => benchIdleMemory(emit, modes[0]!)],
    ["runtime.suspended_goals", () => benchSuspendedGoals(emit, modes[0]!)],
    ["runtime.wakeup_latency", () => benchWakeups(emit)],
  ];
  for (const [name, run] of parts) {
    try {
      await run();
    } catch (err) {
      emit({ bench: name, error: (err as Error).message.slice(0, 2_000) });
    }
  }
}
