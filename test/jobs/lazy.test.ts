import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createEmbeddedScheduler } from "../../jobs/agenda/index.js";
import { inboundRetentionMs, LazyScheduler, sqliteJobsExist, startHousekeeping } from "../../jobs/index.js";

describe("LazyScheduler (embedded mode)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function lazy(path: string) {
    let loads = 0;
    const scheduler = new LazyScheduler({
      load: () => {
        loads++;
        return createEmbeddedScheduler({ path, soleOwner: true });
      },
      hasJobs: () => sqliteJobsExist(path),
      backend: "agenda-sqlite",
    });
    return { scheduler, loads: () => loads };
  }

  it("does not load Agenda while there is no job, loads it for the first one and runs it; a restart with jobs loads it at start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "familiar-lazy-"));
    dirs.push(dir);
    const path = join(dir, "jobs.db");
    const first = lazy(path);
    const ran: string[] = [];
    first.scheduler.define("test.job", async (job) => void ran.push(String(job.data.n)));
    await first.scheduler.start();
    expect(first.loads()).toBe(0);
    expect(await first.scheduler.nextRunAt("test.job", "a")).toBeNull();
    expect(first.loads()).toBe(0);
    await first.scheduler.schedule({ name: "test.job", key: "a", data: { n: 1 }, timing: { kind: "at", at: new Date(Date.now() + 3_600_000) } });
    await first.scheduler.schedule({ name: "test.job", key: "b", data: { n: 2 }, timing: { kind: "now" } });
    expect(first.loads()).toBe(1);
    for (let i = 0; i < 200 && ran.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(ran).toEqual(["2"]);
    await first.scheduler.drain(1_000);

    const second = lazy(path);
    second.scheduler.define("test.job", async () => undefined);
    await second.scheduler.start();
    expect(second.loads()).toBe(1);
    expect(await second.scheduler.nextRunAt("test.job", "a")).not.toBeNull();
    await second.scheduler.drain(1_000);
  });
});

describe("housekeeping", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("prunes processed update ids older than the retention shortly after start and then daily", async () => {
    vi.useFakeTimers();
    const now = new Date("2026-12-01T12:00:00Z");
    const calls: Date[] = [];
    const stop = startHousekeeping({ pruneInbound: async (before) => (calls.push(before), 0), logger: pino({ level: "silent" }), now: () => now });
    await vi.advanceTimersByTimeAsync(60_000);
    await vi.advanceTimersByTimeAsync(24 * 60 * 60 * 1000);
    stop();
    await vi.advanceTimersByTimeAsync(24 * 60 * 60 * 1000);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toEqual(new Date(now.getTime() - inboundRetentionMs));
  });
});
