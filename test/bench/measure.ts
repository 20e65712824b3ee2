/**
 * Helpers shared by the bench modules (not a bench module itself): percentiles, `/proc` readers
 * for a child's memory and CPU time, and spawning the real app as a child process with start
 * timings. Linux only (`/proc`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

/** Repository root (the child's working directory). */
export const root = fileURLToPath(new URL("../../", import.meta.url));

/** Nearest-rank percentile `p` (0–100) of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** p50/p99/max of `values` (any order), keys suffixed with `unit` (e.g. `_ms`), rounded to 0.1. */
export function spread(values: readonly number[], unit: string, prefix = ""): Record<string, number> {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    [`${prefix}p50${unit}`]: round(percentile(sorted, 50)),
    [`${prefix}p99${unit}`]: round(percentile(sorted, 99)),
    [`${prefix}max${unit}`]: round(sorted.at(-1) ?? Number.NaN),
  };
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ; 100 on every mainstream Linux). */
const userHz = 100;

/** What `/proc` says about a process: resident memory (MB = 2^20 bytes), CPU time (ms), threads. */
export interface ProcSample {
  rssMb: number;
  /** utime + stime of all threads so far, ms (resolution 10 ms). */
  cpuMs: number;
  threads: number;
}

/** Reads VmRSS and Threads from `/proc/<pid>/status`, utime+stime from `/proc/<pid>/stat`. Throws if the process is gone. */
export function sampleProc(pid: number): ProcSample {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
  const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may contain spaces) start at field 3; utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { rssMb: round(rssKb / 1024), cpuMs: (ticks * 1000) / userHz, threads };
}

/** How the child runs the app: TypeScript through tsx, or the compiled build (`npm run build`). */
export type AppMode = "tsx" | "dist";

/** A Familiar child process with the timings of its start. */
export interface SpawnedApp {
  mode: AppMode;
  pid: number;
  url: string;
  process: ChildProcess;
  output: string[];
  /** Spawn → the "Familiar is running" log line, ms. */
  readyMs: number;
  /** Spawn → the first 200 from `GET /healthz` (polled every 10 ms from spawn), ms. */
  healthMs: number;
  /** SIGTERM and wait for exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

/**
 * Spawns the real app (`node --import tsx main.ts` or `node dist/main.js`) on `port` with `env`
 * (plus PATH, HOME, LOG_LEVEL=info, HOST=127.0.0.1) and waits for both the ready log line and a 200
 * from `/healthz`. Throws with the child's output when it exits first or takes over `timeoutMs`.
 */
export async function spawnApp(mode: AppMode, port: number, env: Record<string, string>, timeoutMs = 60_000): Promise<SpawnedApp> {
  // The compiled mode runs exactly what `npm start` runs (same V8 flags; see package.json).
  const args = mode === "tsx" ? ["--import", "tsx", "main.ts"] : ["--max-semi-space-size=1", "dist/main.js"];
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "info", HOST: "127.0.0.1", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  let readyMs = Number.NaN;
  let url = "";
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      output.push(text);
      const m = /Familiar is running: open (http:\/\/[^ "]+) to chat/.exec(text);
      if (m && Number.isNaN(readyMs)) {
        readyMs = performance.now() - started;
        url = m[1]!;
        resolve();
      }
    });
    child.stderr.on("data", (c: Buffer) => output.push(c.toString()));
    exit.then(() => reject(new Error(`${mode} child exited before it was ready:\n${output.join("").slice(-2000)}`)), reject);
  });
  const healthy = (async () => {
    for (;;) {
      if (exited) throw new Error(`${mode} child exited before /healthz answered`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      await sleep(10);
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${mode} child not ready within ${timeoutMs} ms:\n${output.join("").slice(-2000)}`)), timeoutMs);
  });
  const stop = async (): Promise<void> => {
    if (exited) return;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exit;
    clearTimeout(killer);
  };
  try {
    const [, healthMs] = await Promise.race([Promise.all([ready, healthy]), timeout]);
    return { mode, pid: child.pid!, url, process: child, output, readyMs, healthMs, stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
