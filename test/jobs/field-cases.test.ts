/**
 * Field cases J1–J3 (shared/cases/field-bugs.md) and time-zone behaviour, with the expected
 * values from the cases. Fake time (Date and timers) stands in for hours of waiting; SQLite
 * calls are synchronous, so Agenda's processing loop runs unchanged under it.
 */
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobContext } from "../../core/scheduling/scheduler.js";
import { createEmbeddedScheduler, type AgendaScheduler } from "../../jobs/agenda/index.js";
import { tempDir } from "./helpers.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
let tmp: ReturnType<typeof tempDir>;
const open: AgendaScheduler[] = [];
const originalTz = process.env.TZ;

beforeEach(() => {
  tmp = tempDir();
});

afterEach(async () => {
  vi.useRealTimers();
  for (const s of open.splice(0)) if (s.status().running) await s.drain(100);
  process.env.TZ = originalTz;
  tmp.cleanup();
});

function fakeTime(iso: string): void {
  vi.useFakeTimers({ now: new Date(iso), toFake: ["Date", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate"] });
}

async function embedded(options: { processEveryMs: number; now?: () => Date }): Promise<AgendaScheduler> {
  const s = await createEmbeddedScheduler({ path: tmp.file(), ...options });
  open.push(s);
  return s;
}

function setRow(key: string, columns: Record<string, number | null>): void {
  const db = new Database(tmp.file());
  for (const [column, value] of Object.entries(columns)) {
    db.prepare(`UPDATE agenda_jobs SET ${column} = ? WHERE json_extract(data, '$.key') = ?`).run(value, key);
  }
  db.close();
}

describe("J1 stale lock", () => {
  it("a recurring job locked 11 min ago by a crashed worker, due in 2 h, runs once at its next run time", async () => {
    fakeTime("2025-06-02T08:00:00Z");
    const t0 = Date.now();
    const s = await embedded({ processEveryMs: MIN });
    const runs: { at: number; due: Date }[] = [];
    s.define("checkin", async (job) => {
      runs.push({ at: Date.now(), due: job.dueAt });
    }, { lockLifetimeMs: 10 * MIN });
    await s.schedule({ name: "checkin", key: "p1", data: {}, timing: { kind: "every", intervalMs: 24 * HOUR } });
    // The crashed worker's leftovers: locked 11 minutes ago, next run 2 h ahead.
    setRow("p1", { locked_at: t0 - 11 * MIN, next_run_at: t0 + 2 * HOUR, last_run_at: t0 - 22 * HOUR });

    await s.start();
    await vi.advanceTimersByTimeAsync(2 * HOUR - 2 * MIN);
    expect(runs).toEqual([]);
    const [waiting] = (await s.agenda.queryJobs({ name: "checkin" })).jobs;
    expect(waiting!.lockedAt).toBeUndefined(); // the dead lock is released, not held until the run
    expect(waiting!.nextRunAt).toEqual(new Date(t0 + 2 * HOUR));

    await vi.advanceTimersByTimeAsync(4 * MIN);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.due).toEqual(new Date(t0 + 2 * HOUR));
    expect(runs[0]!.at).toBeGreaterThanOrEqual(t0 + 2 * HOUR);
    expect(runs[0]!.at).toBeLessThan(t0 + 2 * HOUR + MIN);

    await vi.advanceTimersByTimeAsync(3 * HOUR);
    expect(runs).toHaveLength(1);
    expect(await s.nextRunAt("checkin", "p1")).toEqual(new Date(runs[0]!.at + 24 * HOUR));
  });
});

describe("J2 time of day in the person's zone", () => {
  it.each(["UTC", "America/Los_Angeles", "Asia/Kolkata"])("'every day at 3:30pm' in Asia/Tokyo runs at 06:30Z (server TZ %s)", async (serverTz) => {
    process.env.TZ = serverTz;
    const s = await embedded({ processEveryMs: 5000, now: () => new Date("2025-03-10T00:00:00Z") });
    s.define("reminder", async () => {});
    const next = await s.schedule({ name: "reminder", key: "tea", data: {}, timing: { kind: "cron", cron: "30 15 * * *", timeZone: "Asia/Tokyo" } });
    expect(next).toEqual(new Date("2025-03-10T06:30:00Z"));
  });

  it("keeps 3:30pm Tokyo on the following days too (after a run at 06:30Z)", async () => {
    fakeTime("2025-03-10T06:29:00Z");
    const s = await embedded({ processEveryMs: MIN });
    const due: Date[] = [];
    s.define("reminder", async (job) => {
      due.push(job.dueAt);
    });
    await s.start();
    await s.schedule({ name: "reminder", key: "tea", data: {}, timing: { kind: "cron", cron: "30 15 * * *", timeZone: "Asia/Tokyo" } });
    await vi.advanceTimersByTimeAsync(2 * MIN);
    expect(due).toEqual([new Date("2025-03-10T06:30:00Z")]);
    expect(await s.nextRunAt("reminder", "tea")).toEqual(new Date("2025-03-11T06:30:00Z"));
  });
});

describe("J3 restart in the afternoon", () => {
  it("daily 06:00 Asia/Kuala_Lumpur, last run today 06:00, restart at 17:20 local: next run tomorrow 06:00 local", async () => {
    // 06:00 in Kuala Lumpur (UTC+8) on 10 March 2025 is 2025-03-09T22:00Z.
    fakeTime("2025-03-09T21:59:00Z");
    const first = await embedded({ processEveryMs: MIN });
    const runs: JobContext[] = [];
    first.define("morning.brief", async (job) => {
      runs.push(job);
    });
    await first.start();
    const timing = { kind: "cron", cron: "0 6 * * *", timeZone: "Asia/Kuala_Lumpur" } as const;
    expect(await first.schedule({ name: "morning.brief", key: "p1", data: {}, timing })).toEqual(new Date("2025-03-09T22:00:00Z"));
    await vi.advanceTimersByTimeAsync(2 * MIN);
    expect(runs.map((r) => r.dueAt)).toEqual([new Date("2025-03-09T22:00:00Z")]);
    await first.drain(1000);

    // Restart at 17:20 local (09:20Z); start-up registers its schedules again, by key.
    vi.setSystemTime(new Date("2025-03-10T09:20:00Z"));
    const second = await embedded({ processEveryMs: MIN });
    second.define("morning.brief", async (job) => {
      runs.push(job);
    });
    expect(await second.nextRunAt("morning.brief", "p1")).toEqual(new Date("2025-03-10T22:00:00Z"));
    await second.start();
    expect(await second.schedule({ name: "morning.brief", key: "p1", data: {}, timing })).toEqual(new Date("2025-03-10T22:00:00Z"));
    await vi.advanceTimersByTimeAsync(HOUR);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(12 * HOUR); // past 2025-03-10T22:00Z
    expect(runs.map((r) => r.dueAt)).toEqual([new Date("2025-03-09T22:00:00Z"), new Date("2025-03-10T22:00:00Z")]);
  });
});

describe("time zones", () => {
  const at = async (now: string, cron: string, timeZone: string): Promise<Date | null> => {
    const s = await embedded({ processEveryMs: 5000, now: () => new Date(now) });
    s.define("tz", async () => {});
    return s.schedule({ name: "tz", key: `${cron}@${timeZone}@${now}`, data: {}, timing: { kind: "cron", cron, timeZone } });
  };

  it("follows daylight saving time: 09:00 Berlin is 08:00Z in winter and 07:00Z after the March change", async () => {
    expect(await at("2025-03-28T12:00:00Z", "0 9 * * *", "Europe/Berlin")).toEqual(new Date("2025-03-29T08:00:00Z"));
    expect(await at("2025-03-29T12:00:00Z", "0 9 * * *", "Europe/Berlin")).toEqual(new Date("2025-03-30T07:00:00Z"));
  });

  it("uses the local calendar day of the zone for weekdays (Monday 08:00 in New York)", async () => {
    // Sunday 2025-03-09 23:30 in New York is Monday 03:30Z; the next Monday 08:00 local is 12:00Z the same UTC day.
    expect(await at("2025-03-10T03:30:00Z", "0 8 * * 1", "America/New_York")).toEqual(new Date("2025-03-10T12:00:00Z"));
  });

  it("handles half-hour offsets (Asia/Kolkata, UTC+5:30)", async () => {
    expect(await at("2025-03-10T00:00:00Z", "0 9 * * *", "Asia/Kolkata")).toEqual(new Date("2025-03-10T03:30:00Z"));
  });
});
