/**
 * AgendaScheduler on the embedded SQLite backend: the Scheduler port's behaviour as a caller
 * sees it (runs, replacement by key, cancel, validation, drain, restart, locking across workers).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MongoClient } from "mongodb";
import { ValidationError, StoreUnavailableError } from "../../core/errors.js";
import type { JobContext } from "../../core/scheduling/scheduler.js";
import { createEmbeddedScheduler, createMongoScheduler, type AgendaScheduler } from "../../jobs/agenda/index.js";
import { sleep, tempDir, waitFor } from "./helpers.js";

let tmp: ReturnType<typeof tempDir>;
const open: AgendaScheduler[] = [];

async function scheduler(options: { processEveryMs?: number; lockLifetimeMs?: number; path?: string; now?: () => Date } = {}): Promise<AgendaScheduler> {
  const s = await createEmbeddedScheduler({ path: options.path ?? tmp.file(), processEveryMs: options.processEveryMs ?? 100, ...options });
  open.push(s);
  return s;
}

beforeEach(() => {
  tmp = tempDir();
});

afterEach(async () => {
  for (const s of open.splice(0)) if (s.status().running) await s.drain(1000);
  tmp.cleanup();
});

const row = (s: AgendaScheduler, name: string, key: string) =>
  s.agenda.queryJobs({ name, data: { key } }).then((r) => r.jobs);

describe("running jobs", () => {
  it("runs a 'now' job within the process with its key, payload and due time", async () => {
    const s = await scheduler({ processEveryMs: 5000 });
    const seen: JobContext[] = [];
    s.define("outbox.deliver", async (job) => {
      seen.push(job);
    });
    await s.start();
    expect(s.status()).toEqual({ running: true, backend: "SQLite" });
    const due = await s.schedule({ name: "outbox.deliver", key: "msg-1", data: { messageId: "m1", attempt: 1 }, timing: { kind: "now" } });
    await waitFor(() => seen.length === 1, "the job to run");
    expect(seen[0]).toEqual({ name: "outbox.deliver", key: "msg-1", data: { messageId: "m1", attempt: 1 }, dueAt: due });
  });

  it("runs an 'at' job once, not before its time, and reports that time as dueAt", async () => {
    const s = await scheduler();
    const runs: { at: number; due: Date }[] = [];
    s.define("task.wake", async (job) => {
      runs.push({ at: Date.now(), due: job.dueAt });
    });
    await s.start();
    const at = new Date(Date.now() + 300);
    expect(await s.schedule({ name: "task.wake", key: "t1", data: {}, timing: { kind: "at", at } })).toEqual(at);
    await waitFor(() => runs.length === 1, "the job to run");
    // A fixed wait on purpose: it asserts that the job does NOT run a second time.
    await sleep(300);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.at).toBeGreaterThanOrEqual(at.getTime());
    expect(runs[0]!.due).toEqual(at);
    expect(await s.nextRunAt("task.wake", "t1")).toBeNull();
  });

  it("repeats 'every' job from one interval after scheduling, not immediately", async () => {
    const s = await scheduler({ processEveryMs: 50 });
    const runs: Date[] = [];
    s.define("digest", async (job) => {
      runs.push(job.dueAt);
    });
    await s.start();
    const before = Date.now();
    const first = await s.schedule({ name: "digest", key: "p1", data: {}, timing: { kind: "every", intervalMs: 250 } });
    expect(first!.getTime()).toBeGreaterThanOrEqual(before + 250);
    await waitFor(() => runs.length >= 2, "two runs", 5000);
    expect(runs[0]).toEqual(first);
    expect(runs[1]!.getTime()).toBeGreaterThanOrEqual(runs[0]!.getTime() + 250);
  });

  it("records a failing handler's error on the job", async () => {
    const s = await scheduler();
    s.define("boom", async () => {
      throw new Error("connector down");
    });
    await s.start();
    await s.schedule({ name: "boom", key: "b", data: {}, timing: { kind: "now" } });
    await waitFor(async () => (await row(s, "boom", "b"))[0]?.failReason !== undefined, "the failure to be saved");
    const [failed] = await row(s, "boom", "b");
    expect(failed).toMatchObject({ failReason: "connector down", failCount: 1, state: "failed" });
  });

  it("does not run disabled jobs", async () => {
    const s = await scheduler();
    let ran = 0;
    s.define("quiet", async () => {
      ran++;
    });
    await s.schedule({ name: "quiet", key: "q", data: {}, timing: { kind: "now" } });
    expect(await s.agenda.disable({ name: "quiet" })).toBe(1);
    await s.start();
    // A fixed wait on purpose: it asserts that a disabled job does NOT run.
    await sleep(400);
    expect(ran).toBe(0);
    expect(await s.agenda.enable({ name: "quiet" })).toBe(1);
    await waitFor(() => ran === 1, "the enabled job to run");
  });
});

describe("schedule by (name, key)", () => {
  it("replaces the earlier schedule of the same key and keeps other keys", async () => {
    const s = await scheduler();
    s.define("task.wake", async () => {});
    const first = new Date(Date.now() + 3_600_000);
    const second = new Date(Date.now() + 7_200_000);
    await s.schedule({ name: "task.wake", key: "a", data: { v: 1 }, timing: { kind: "at", at: first } });
    await s.schedule({ name: "task.wake", key: "a", data: { v: 2 }, timing: { kind: "at", at: second } });
    await s.schedule({ name: "task.wake", key: "b", data: { v: 3 }, timing: { kind: "at", at: first } });
    const a = await row(s, "task.wake", "a");
    expect(a).toHaveLength(1);
    expect(a[0]!.data).toEqual({ key: "a", payload: { v: 2 } });
    expect(await s.nextRunAt("task.wake", "a")).toEqual(second);
    expect(await s.nextRunAt("task.wake", "b")).toEqual(first);
    expect(await s.cancel("task.wake", "a")).toBe(1);
    expect(await s.cancel("task.wake", "a")).toBe(0);
    expect(await s.nextRunAt("task.wake", "a")).toBeNull();
    expect(await s.nextRunAt("task.wake", "b")).toEqual(first);
  });

  it("keeps a schedule that a handler sets for its own key while it runs", async () => {
    const s = await scheduler();
    const later = new Date(Date.now() + 3_600_000);
    let runs = 0;
    s.define("task.wake", async (job) => {
      runs++;
      await s.schedule({ name: job.name, key: job.key, data: { step: 2 }, timing: { kind: "at", at: later } });
    });
    await s.start();
    await s.schedule({ name: "task.wake", key: "self", data: { step: 1 }, timing: { kind: "now" } });
    await waitFor(() => runs === 1, "the first run");
    // A fixed wait on purpose: Agenda saves the job after its handler returns, and that save must NOT overwrite the new schedule.
    await sleep(200);
    expect(await s.nextRunAt("task.wake", "self")).toEqual(later);
    const rows = await row(s, "task.wake", "self");
    expect(rows).toHaveLength(1);
    expect(rows[0]!.data).toEqual({ key: "self", payload: { step: 2 } });
  });

  it("rejects bad requests with ValidationError before touching the store", async () => {
    const s = await scheduler();
    s.define("ok", async () => {});
    const bad = [
      { name: "missing", key: "k", data: {}, timing: { kind: "now" } },
      { name: "ok", key: "", data: {}, timing: { kind: "now" } },
      { name: "ok", key: "k", data: {}, timing: { kind: "at", at: new Date("nope") } },
      { name: "ok", key: "k", data: {}, timing: { kind: "every", intervalMs: 0 } },
      { name: "ok", key: "k", data: {}, timing: { kind: "every", intervalMs: 1.5 } },
      { name: "ok", key: "k", data: {}, timing: { kind: "cron", cron: "61 * * * *", timeZone: "UTC" } },
      { name: "ok", key: "k", data: {}, timing: { kind: "cron", cron: "0 0 6 * * *", timeZone: "UTC" } },
      { name: "ok", key: "k", data: {}, timing: { kind: "cron", cron: "every day", timeZone: "UTC" } },
      { name: "ok", key: "k", data: {}, timing: { kind: "cron", cron: "30 15 * * *", timeZone: "Mars/Olympus" } },
      { name: "ok", key: "k", data: {}, timing: { kind: "cron", cron: "30 15 * * *", timeZone: "" } },
      { name: "ok", key: "k", data: {}, timing: { kind: "sometime" } },
    ] as const;
    for (const request of bad) {
      await expect(s.schedule(request as never), JSON.stringify(request)).rejects.toBeInstanceOf(ValidationError);
    }
    expect((await s.agenda.queryJobs()).total).toBe(0);
  });
});

describe("drain and restart", () => {
  it("waits for a running job to finish before it returns", async () => {
    const s = await scheduler();
    let finished = false;
    s.define("slow", async () => {
      // The job's own work (a slow handler), not a wait of the test.
      await sleep(300);
      finished = true;
    });
    await s.start();
    await s.schedule({ name: "slow", key: "s", data: {}, timing: { kind: "now" } });
    await waitFor(async () => (await row(s, "slow", "s"))[0]?.lockedAt !== undefined, "the job to start");
    await s.drain(5000);
    expect(finished).toBe(true);
    expect(s.status().running).toBe(false);
  });

  it("leaves a job still running at the deadline locked, for another worker to retake after its lock lifetime", async () => {
    const db = tmp.file();
    const s = await scheduler({ path: db });
    s.define("stuck", async () => {
      // The job's own work (a handler still running at the deadline), not a wait of the test.
      await sleep(1500);
    });
    await s.start();
    await s.schedule({ name: "stuck", key: "s", data: {}, timing: { kind: "now" } });
    await waitFor(async () => (await row(s, "stuck", "s"))[0]?.lockedAt !== undefined, "the job to start");
    await s.drain(50);
    const other = await scheduler({ path: db });
    const [stillLocked] = await row(other, "stuck", "s");
    expect(stillLocked!.lockedAt).toBeInstanceOf(Date);
  });

  it("unlocks jobs it had locked ahead but not started, so they are not stuck for the lock lifetime", async () => {
    const db = tmp.file();
    const s = await scheduler({ path: db, processEveryMs: 5000 });
    s.define("soon", async () => {});
    await s.start();
    await s.schedule({ name: "soon", key: "x", data: {}, timing: { kind: "at", at: new Date(Date.now() + 2000) } });
    await waitFor(async () => (await row(s, "soon", "x"))[0]?.lockedAt !== undefined, "the job to be locked ahead");
    await s.drain(100);
    const other = await scheduler({ path: db });
    const [released] = await row(other, "soon", "x");
    expect(released!.lockedAt).toBeUndefined();
  });

  it("a new scheduler on the same file picks up jobs scheduled before the restart", async () => {
    const db = tmp.file();
    const first = await scheduler({ path: db });
    first.define("task.wake", async () => {});
    await first.start();
    await first.schedule({ name: "task.wake", key: "after-restart", data: { n: 1 }, timing: { kind: "at", at: new Date(Date.now() + 400) } });
    await first.drain(1000);
    const second = await scheduler({ path: db });
    const seen: JobContext[] = [];
    second.define("task.wake", async (job) => {
      seen.push(job);
    });
    await second.start();
    await waitFor(() => seen.length === 1, "the job to run after the restart");
    expect(seen[0]!.key).toBe("after-restart");
    expect(seen[0]!.data).toEqual({ n: 1 });
  });
});

describe("locking across workers", () => {
  it("two workers on separate connections to one file never run a job twice", async () => {
    const db = tmp.file();
    const a = await scheduler({ path: db, processEveryMs: 50 });
    const b = await scheduler({ path: db, processEveryMs: 50 });
    const ran: { worker: string; key: string }[] = [];
    for (const [worker, s] of [["a", a], ["b", b]] as const) {
      s.define("count", async (job) => {
        ran.push({ worker, key: job.key });
        // The job's own work, not a wait of the test.
        await sleep(5);
      });
    }
    for (let i = 0; i < 60; i++) await a.schedule({ name: "count", key: `k${i}`, data: {}, timing: { kind: "now" } });
    await Promise.all([a.start(), b.start()]);
    await waitFor(() => new Set(ran.map((r) => r.key)).size === 60, "all 60 jobs to run", 15_000);
    // A fixed wait on purpose: it asserts that NO job runs twice.
    await sleep(300);
    expect(ran).toHaveLength(60);
    expect(new Set(ran.map((r) => r.worker))).toEqual(new Set(["a", "b"]));
  });

  it("two worker processes on one file never run a job twice", async () => {
    const db = tmp.file();
    const producer = await scheduler({ path: db });
    producer.define("count", async () => {});
    for (let i = 0; i < 100; i++) await producer.schedule({ name: "count", key: `k${i}`, data: {}, timing: { kind: "now" } });
    const script = fileURLToPath(new URL("./fixtures/worker.ts", import.meta.url));
    const outputs = [0, 1].map(() => {
      const child = spawn(process.execPath, ["--import", "tsx", script, db], { stdio: ["ignore", "pipe", "inherit"] });
      const lines: string[] = [];
      let buf = "";
      child.stdout.on("data", (chunk: Buffer) => {
        buf += chunk.toString();
        const parts = buf.split("\n");
        buf = parts.pop() ?? "";
        lines.push(...parts);
      });
      return { child, lines };
    });
    try {
      const runs = () => outputs.flatMap((o) => o.lines.filter((l) => l.startsWith("ran ")));
      await waitFor(() => new Set(runs()).size === 100, "100 distinct runs in the worker processes", 20_000);
      // A fixed wait on purpose: it asserts that NO job runs twice across the worker processes.
      await sleep(300);
      expect(runs()).toHaveLength(100);
      expect(outputs.every((o) => o.lines.includes("ready"))).toBe(true);
    } finally {
      for (const o of outputs) o.child.kill("SIGKILL");
    }
  }, 30_000);

  it("reruns a job whose worker died (stale lockedAt) once its lock lifetime has passed", async () => {
    const s = await scheduler();
    const runs: string[] = [];
    s.define(
      "task.wake",
      async (job) => {
        runs.push(job.key);
      },
      { lockLifetimeMs: 60_000 },
    );
    await s.schedule({ name: "task.wake", key: "dead-worker", data: {}, timing: { kind: "at", at: new Date(Date.now() - 120_000) } });
    await s.schedule({ name: "task.wake", key: "live-worker", data: {}, timing: { kind: "at", at: new Date(Date.now() - 120_000) } });
    // Simulate the crash through a second connection: lockedAt 2 min ago (beyond the 60 s
    // lifetime) for one job, 1 s ago (a live worker) for the other.
    const Database = (await import("better-sqlite3")).default;
    const raw = new Database(tmp.file());
    raw.prepare("UPDATE agenda_jobs SET locked_at = ? WHERE json_extract(data, '$.key') = 'dead-worker'").run(Date.now() - 120_000);
    raw.prepare("UPDATE agenda_jobs SET locked_at = ? WHERE json_extract(data, '$.key') = 'live-worker'").run(Date.now() - 1000);
    raw.close();
    await s.start();
    await waitFor(() => runs.includes("dead-worker"), "the stale job to run");
    // A fixed wait on purpose: it asserts that the job locked by a live worker does NOT run here.
    await sleep(400);
    expect(runs).toEqual(["dead-worker"]);
  });
});

describe("MongoDB factory", () => {
  it("refuses a client that cannot reach its server with StoreUnavailableError", async () => {
    const client = new MongoClient("mongodb://127.0.0.1:9/familiar", { serverSelectionTimeoutMS: 300 });
    try {
      await expect(createMongoScheduler({ client })).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await client.close();
    }
  });
});
