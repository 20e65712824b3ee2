/**
 * SqliteJobRepository against Agenda's repository contract: the cases of Agenda's shared
 * repository suite (agenda/agenda packages/agenda/test/shared/repository-test-suite.ts) plus the
 * MongoBackend semantics the suite leaves implicit (unique / insertOnly / single upserts, state
 * filters, sorting, NULL ordering, modified counts).
 */
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../jobs/agenda/sqlite-backend.js";
import { SqliteJobRepository } from "../../jobs/agenda/sqlite/repository.js";
import { ValidationError } from "../../core/errors.js";
import { job, tempDir } from "./helpers.js";

let tmp: ReturnType<typeof tempDir>;
let backend: SqliteBackend;
let repo: SqliteJobRepository;
const past = (ms: number) => new Date(Date.now() - ms);
const future = (ms: number) => new Date(Date.now() + ms);

beforeEach(() => {
  tmp = tempDir();
  backend = new SqliteBackend({ path: tmp.file() });
  repo = backend.repository;
});

afterEach(async () => {
  await backend.disconnect();
  tmp.cleanup();
});

describe("saveJob", () => {
  it("inserts a new job with an id and round-trips every field", async () => {
    const at = new Date("2030-01-02T03:04:05.678Z");
    const saved = await repo.saveJob(
      job("full", {
        priority: 10,
        nextRunAt: at,
        data: { foo: "bar", n: 2, nested: { ok: true }, list: [1, "a"] },
        repeatInterval: "0 6 * * *",
        repeatTimezone: "Asia/Tokyo",
        repeatAt: "3:30pm",
        disabled: false,
        startDate: at,
        endDate: at,
        skipDays: [0, 6],
        fork: false,
      }),
      { lastModifiedBy: "worker-a" },
    );
    expect(saved._id).toEqual(expect.any(String));
    const back = await repo.getJobById(saved._id!);
    expect(back).toMatchObject({
      name: "full",
      priority: 10,
      type: "normal",
      nextRunAt: at,
      data: { foo: "bar", n: 2, nested: { ok: true }, list: [1, "a"] },
      repeatInterval: "0 6 * * *",
      repeatTimezone: "Asia/Tokyo",
      repeatAt: "3:30pm",
      disabled: false,
      startDate: at,
      endDate: at,
      skipDays: [0, 6],
      fork: false,
      lastModifiedBy: "worker-a",
    });
    expect(back!.lockedAt).toBeUndefined();
    expect(back!.lastRunAt).toBeUndefined();
  });

  it("keeps a numeric repeat interval a number and stores a Date in data as an ISO string", async () => {
    const saved = await repo.saveJob(job("n", { repeatInterval: 5000, data: { when: new Date("2030-01-01T00:00:00Z") } }), undefined);
    const back = await repo.getJobById(saved._id!);
    expect(back!.repeatInterval).toBe(5000);
    expect(back!.data).toEqual({ when: "2030-01-01T00:00:00.000Z" });
  });

  it("updates an existing job by id", async () => {
    const saved = await repo.saveJob(job("update-test", { priority: 5, data: { version: 1 } }), undefined);
    const updated = await repo.saveJob({ ...saved, priority: 20, data: { version: 2 } }, undefined);
    expect(updated._id).toBe(saved._id);
    expect(updated.priority).toBe(20);
    expect(updated.data).toEqual({ version: 2 });
    expect((await repo.queryJobs()).total).toBe(1);
  });

  it("returns the job unchanged when its id no longer exists", async () => {
    const saved = await repo.saveJob(job("gone"), undefined);
    await repo.removeJobs({ id: saved._id! });
    const again = await repo.saveJob({ ...saved, priority: 7 }, undefined);
    expect(again.priority).toBe(7);
    expect(await repo.getJobById(saved._id!)).toBeNull();
    expect((await repo.queryJobs()).total).toBe(0);
  });

  it("upserts type 'single' jobs by name", async () => {
    const first = await repo.saveJob(job("single-job", { type: "single", priority: 5, nextRunAt: future(60_000), data: { run: 1 } }), undefined);
    const second = await repo.saveJob(job("single-job", { type: "single", priority: 10, nextRunAt: future(120_000), data: { run: 2 } }), undefined);
    expect(second._id).toBe(first._id);
    expect(second.priority).toBe(10);
    expect(second.data).toEqual({ run: 2 });
    expect((await repo.queryJobs({ name: "single-job" })).total).toBe(1);
  });

  it("keeps the stored nextRunAt of a 'single' job when the new one is already past", async () => {
    const stored = future(3_600_000);
    const first = await repo.saveJob(job("every", { type: "single", nextRunAt: stored }), undefined);
    const second = await repo.saveJob(job("every", { type: "single", nextRunAt: past(1000), data: { v: 2 } }), undefined);
    expect(second._id).toBe(first._id);
    expect(second.nextRunAt).toEqual(stored);
    expect(second.data).toEqual({ v: 2 });
  });

  it("inserts a 'single' job with a past nextRunAt when none exists", async () => {
    const when = past(1000);
    const saved = await repo.saveJob(job("every-new", { type: "single", nextRunAt: when }), undefined);
    expect(saved.nextRunAt).toEqual(when);
  });

  it("upserts by a unique query on data paths, per name", async () => {
    const a = await repo.saveJob(job("wake", { data: { key: "p1", v: 1 }, unique: { "data.key": "p1" } }), undefined);
    const b = await repo.saveJob(job("wake", { data: { key: "p1", v: 2 }, unique: { "data.key": "p1" } }), undefined);
    const c = await repo.saveJob(job("wake", { data: { key: "p2", v: 3 }, unique: { "data.key": "p2" } }), undefined);
    const other = await repo.saveJob(job("deliver", { data: { key: "p1" }, unique: { "data.key": "p1" } }), undefined);
    expect(b._id).toBe(a._id);
    expect(b.data).toEqual({ key: "p1", v: 2 });
    expect(c._id).not.toBe(a._id);
    expect(other._id).not.toBe(a._id);
    expect((await repo.queryJobs({ name: "wake" })).total).toBe(2);
  });

  it("distinguishes JSON types in unique keys (the string '1', the number 1 and true differ)", async () => {
    const s = await repo.saveJob(job("t", { data: { k: "1" }, unique: { "data.k": "1" } }), undefined);
    const n = await repo.saveJob(job("t", { data: { k: 1 }, unique: { "data.k": 1 } }), undefined);
    const b = await repo.saveJob(job("t", { data: { k: true }, unique: { "data.k": true } }), undefined);
    expect(new Set([s._id, n._id, b._id]).size).toBe(3);
    const n2 = await repo.saveJob(job("t", { data: { k: 1, again: true }, unique: { "data.k": 1 } }), undefined);
    expect(n2._id).toBe(n._id);
  });

  it("matches nested data paths and top-level fields in unique queries", async () => {
    const a = await repo.saveJob(job("u", { priority: 3, data: { person: { id: "x" } }, unique: { "data.person.id": "x", priority: 3 } }), undefined);
    const b = await repo.saveJob(job("u", { priority: 3, data: { person: { id: "x" }, v: 2 }, unique: { "data.person.id": "x", priority: 3 } }), undefined);
    const c = await repo.saveJob(job("u", { priority: 4, data: { person: { id: "x" } }, unique: { "data.person.id": "x", priority: 4 } }), undefined);
    expect(b._id).toBe(a._id);
    expect(c._id).not.toBe(a._id);
  });

  it("leaves an existing job untouched with insertOnly", async () => {
    const a = await repo.saveJob(job("once", { data: { key: "k", v: 1 }, unique: { "data.key": "k" }, uniqueOpts: { insertOnly: true } }), undefined);
    const b = await repo.saveJob(job("once", { data: { key: "k", v: 2 }, unique: { "data.key": "k" }, uniqueOpts: { insertOnly: true } }), undefined);
    expect(b._id).toBe(a._id);
    expect(b.data).toEqual({ key: "k", v: 1 });
    expect((await repo.queryJobs({ name: "once" })).total).toBe(1);
  });

  it("rejects query operators and object values in unique queries", async () => {
    await expect(repo.saveJob(job("x", { unique: { "data.key": { $gt: 1 } } }), undefined)).rejects.toBeInstanceOf(ValidationError);
    await expect(repo.saveJob(job("x", { unique: { $where: "1" } }), undefined)).rejects.toBeInstanceOf(ValidationError);
    await expect(repo.saveJob(job("x", { unique: { "data.person": { id: 1 } } }), undefined)).rejects.toBeInstanceOf(ValidationError);
    await expect(repo.saveJob(job("x", { unique: { colour: "red" } }), undefined)).rejects.toBeInstanceOf(ValidationError);
    expect((await repo.queryJobs()).total).toBe(0);
  });

  it("debounces (trailing): a second save pushes nextRunAt to delay after now and keeps one job", async () => {
    const opts = { unique: { "data.key": "d" }, uniqueOpts: { debounce: { delay: 60_000 } } };
    const before = Date.now();
    const a = await repo.saveJob(job("deb", { data: { key: "d", v: 1 }, ...opts }), undefined);
    expect(a.nextRunAt!.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    expect(a.debounceStartedAt).toBeInstanceOf(Date);
    const b = await repo.saveJob(job("deb", { data: { key: "d", v: 2 }, ...opts }), undefined);
    expect(b._id).toBe(a._id);
    expect(b.nextRunAt!.getTime()).toBeGreaterThanOrEqual(a.nextRunAt!.getTime());
    expect(b.debounceStartedAt).toEqual(a.debounceStartedAt);
    expect(b.data).toEqual({ key: "d", v: 2 });
  });

  it("debounces (maxWait exceeded): the job becomes due now and the window restarts", async () => {
    const opts = { unique: { "data.key": "m" }, uniqueOpts: { debounce: { delay: 60_000, maxWait: 1 } } };
    const a = await repo.saveJob(job("deb2", { data: { key: "m" }, ...opts }), undefined);
    await new Promise((r) => setTimeout(r, 5)); // on purpose: more than the 1 ms maxWait passes between the saves
    const b = await repo.saveJob(job("deb2", { data: { key: "m" }, ...opts }), undefined);
    expect(b._id).toBe(a._id);
    expect(b.nextRunAt!.getTime()).toBeLessThanOrEqual(Date.now());
    expect(b.debounceStartedAt).toBeUndefined();
  });

  it("debounces (leading): the first nextRunAt stays", async () => {
    const opts = { unique: { "data.key": "l" }, uniqueOpts: { debounce: { delay: 60_000, strategy: "leading" as const } } };
    const first = past(10);
    const a = await repo.saveJob(job("deb3", { nextRunAt: first, data: { key: "l" }, ...opts }), undefined);
    expect(a.nextRunAt).toEqual(first);
    const b = await repo.saveJob(job("deb3", { nextRunAt: future(5000), data: { key: "l", v: 2 }, ...opts }), undefined);
    expect(b.nextRunAt).toEqual(first);
    expect(b.data).toEqual({ key: "l", v: 2 });
  });

  it("preserves the disabled flag", async () => {
    const saved = await repo.saveJob(job("disabled-job", { disabled: true }), undefined);
    expect(saved.disabled).toBe(true);
    expect((await repo.getJobById(saved._id!))!.disabled).toBe(true);
  });
});

describe("getJobById", () => {
  it("returns null for an unknown id", async () => {
    const saved = await repo.saveJob(job("temp"), undefined);
    await repo.removeJobs({ id: saved._id! });
    expect(await repo.getJobById(saved._id!)).toBeNull();
    expect(await repo.getJobById("not-an-id")).toBeNull();
  });
});

describe("queryJobs", () => {
  let ids: string[];
  beforeEach(async () => {
    ids = [];
    ids.push((await repo.saveJob(job("job-a", { priority: 10, nextRunAt: future(60_000), data: { type: "alpha", count: 1 } }), undefined))._id!);
    ids.push((await repo.saveJob(job("job-b", { priority: 5, nextRunAt: future(120_000), data: { type: "beta", count: 2 } }), undefined))._id!);
    ids.push((await repo.saveJob(job("job-a", { priority: 15, nextRunAt: future(180_000), data: { type: "alpha", count: 3 } }), undefined))._id!);
  });

  it("queries all, by name, by names, by id and ids", async () => {
    expect((await repo.queryJobs()).total).toBe(3);
    const byName = await repo.queryJobs({ name: "job-a" });
    expect(byName.total).toBe(2);
    expect(byName.jobs.every((j) => j.name === "job-a")).toBe(true);
    expect((await repo.queryJobs({ names: ["job-a", "job-b"] })).total).toBe(3);
    expect((await repo.queryJobs({ id: ids[1] })).jobs.map((j) => j.name)).toEqual(["job-b"]);
    expect((await repo.queryJobs({ ids: [ids[0]!, ids[1]!] })).total).toBe(2);
  });

  it("searches names case-insensitively and literally (% and _ are not wildcards)", async () => {
    expect((await repo.queryJobs({ search: "JOB" })).total).toBe(3);
    expect((await repo.queryJobs({ search: "-b" })).total).toBe(1);
    expect((await repo.queryJobs({ search: "%" })).total).toBe(0);
    expect((await repo.queryJobs({ search: "job_a" })).total).toBe(0);
  });

  it("filters by partial data", async () => {
    expect((await repo.queryJobs({ data: { type: "alpha" } })).total).toBe(2);
    expect((await repo.queryJobs({ data: { type: "alpha", count: 3 } })).jobs.map((j) => j.priority)).toEqual([15]);
    expect((await repo.queryJobs({ data: { type: "gamma" } })).total).toBe(0);
  });

  it("paginates with skip and limit and reports the total before pagination", async () => {
    const page = await repo.queryJobs({ skip: 1, limit: 1, sort: { priority: "desc" } });
    expect(page.total).toBe(3);
    expect(page.jobs.map((j) => j.priority)).toEqual([10]);
    expect((await repo.queryJobs({ skip: 2, sort: { priority: "desc" } })).jobs.map((j) => j.priority)).toEqual([5]);
  });

  it("sorts by nextRunAt descending by default and by the given fields otherwise", async () => {
    expect((await repo.queryJobs()).jobs.map((j) => j.priority)).toEqual([15, 5, 10]);
    expect((await repo.queryJobs({ sort: { nextRunAt: "asc" } })).jobs.map((j) => j.priority)).toEqual([10, 5, 15]);
    // Keys apply in MongoBackend's fixed order (nextRunAt, lastRunAt, lastFinishedAt, priority, name, data).
    expect((await repo.queryJobs({ sort: { name: "asc", priority: "asc" } })).jobs.map((j) => j.priority)).toEqual([5, 10, 15]);
    expect((await repo.queryJobs({ sort: { name: "desc" } })).jobs.map((j) => j.priority)).toEqual([5, 10, 15]);
    expect((await repo.queryJobs({ sort: { name: "asc" } })).jobs.map((j) => j.priority)).toEqual([10, 15, 5]);
  });

  it("sorts NULL nextRunAt first ascending and last descending, like MongoDB", async () => {
    await repo.saveJob(job("done", { nextRunAt: null, priority: 99 }), undefined);
    expect((await repo.queryJobs({ sort: { nextRunAt: "asc" } })).jobs[0]!.priority).toBe(99);
    expect((await repo.queryJobs({ sort: { nextRunAt: "desc" } })).jobs.at(-1)!.priority).toBe(99);
  });

  it("excludes disabled jobs only when includeDisabled is false", async () => {
    await repo.saveJob(job("disabled-job", { disabled: true }), undefined);
    expect((await repo.queryJobs({ includeDisabled: true })).total).toBe(4);
    expect((await repo.queryJobs({ includeDisabled: false })).total).toBe(3);
  });

  it("computes states and filters by state before paginating", async () => {
    await repo.purgeAllJobs();
    const now = Date.now();
    await repo.saveJob(job("s", { nextRunAt: future(60_000) }), undefined); // scheduled
    await repo.saveJob(job("s", { nextRunAt: past(60_000) }), undefined); // queued
    await repo.saveJob(job("s", { nextRunAt: null, lastFinishedAt: new Date(now) }), undefined); // completed
    await repo.saveJob(job("s", { nextRunAt: null, failedAt: new Date(now), lastFinishedAt: new Date(now) }), undefined); // failed
    await repo.saveJob(job("s", { repeatInterval: "1 hour", nextRunAt: future(3_600_000) }), undefined); // repeating
    const running = await repo.saveJob(job("s", { nextRunAt: past(1000) }), undefined);
    await repo.lockJob(running, undefined); // running
    await repo.saveJob(job("s", { nextRunAt: future(60_000), disabled: true }), undefined); // scheduled + paused

    const states = (await repo.queryJobs({ name: "s" })).jobs.map((j) => j.state).sort();
    expect(states).toEqual(["completed", "failed", "queued", "repeating", "running", "scheduled", "scheduled"]);
    expect((await repo.queryJobs({ state: "scheduled" })).total).toBe(2);
    expect((await repo.queryJobs({ state: "paused" })).total).toBe(1);
    const page = await repo.queryJobs({ state: "scheduled", limit: 1, skip: 1 });
    expect(page.total).toBe(2);
    expect(page.jobs).toHaveLength(1);
  });
});

describe("removeJobs / disableJobs / enableJobs / purgeAllJobs", () => {
  it("removes by name, id, ids, names, notNames and data; nothing without criteria", async () => {
    const a = await repo.saveJob(job("remove-test"), undefined);
    await repo.saveJob(job("remove-test"), undefined);
    const k = await repo.saveJob(job("keep-test", { data: { key: "x" } }), undefined);
    const o = await repo.saveJob(job("other", { data: { key: "y" } }), undefined);
    expect(await repo.removeJobs({})).toBe(0);
    expect(await repo.removeJobs({ name: "non-existent" })).toBe(0);
    expect(await repo.removeJobs({ name: "remove-test", id: k._id! })).toBe(0);
    expect(await repo.removeJobs({ id: a._id! })).toBe(1);
    expect(await repo.removeJobs({ name: "remove-test" })).toBe(1);
    expect(await repo.removeJobs({ data: { key: "nope" } })).toBe(0);
    expect(await repo.removeJobs({ notNames: ["keep-test"] })).toBe(1);
    expect((await repo.queryJobs()).jobs.map((j) => j._id)).toEqual([k._id]);
    expect(await repo.removeJobs({ names: ["keep-test"], data: { key: "x" } })).toBe(1);
    const p = await repo.saveJob(job("p"), undefined);
    const q = await repo.saveJob(job("q"), undefined);
    expect(await repo.removeJobs({ ids: [p._id!, q._id!, o._id!] })).toBe(2);
  });

  it("disables and enables matching jobs, counting only the ones that changed", async () => {
    await repo.saveJob(job("d"), undefined);
    await repo.saveJob(job("d", { disabled: true }), undefined);
    await repo.saveJob(job("e"), undefined);
    expect(await repo.disableJobs({})).toBe(0);
    expect(await repo.disableJobs({ name: "d" })).toBe(1);
    expect((await repo.queryJobs({ name: "d" })).jobs.every((j) => j.disabled === true)).toBe(true);
    expect(await repo.enableJobs({ names: ["d", "e"] })).toBe(3);
    expect(await repo.enableJobs({ name: "d" })).toBe(0);
    expect((await repo.queryJobs()).jobs.every((j) => j.disabled === false)).toBe(true);
  });

  it("purges everything", async () => {
    await repo.saveJob(job("a"), undefined);
    await repo.saveJob(job("b"), undefined);
    expect(await repo.purgeAllJobs()).toBe(2);
    expect(await repo.getDistinctJobNames()).toEqual([]);
  });
});

describe("getDistinctJobNames / getQueueSize / getJobsOverview", () => {
  it("lists unique names", async () => {
    for (const n of ["name-a", "name-b", "name-a"]) await repo.saveJob(job(n), undefined);
    expect(await repo.getDistinctJobNames()).toEqual(["name-a", "name-b"]);
  });

  it("counts jobs whose nextRunAt is past", async () => {
    await repo.saveJob(job("p1", { nextRunAt: past(60_000) }), undefined);
    await repo.saveJob(job("p2", { nextRunAt: past(30_000) }), undefined);
    await repo.saveJob(job("f", { nextRunAt: future(60_000) }), undefined);
    await repo.saveJob(job("n", { nextRunAt: null }), undefined);
    expect(await repo.getQueueSize()).toBe(2);
  });

  it("summarises states per name", async () => {
    await repo.saveJob(job("overview-job", { nextRunAt: future(60_000) }), undefined);
    await repo.saveJob(job("overview-job", { nextRunAt: null, lastFinishedAt: new Date() }), undefined);
    await repo.saveJob(job("overview-job", { nextRunAt: future(60_000), disabled: true }), undefined);
    await repo.saveJob(job("other-job", { nextRunAt: future(60_000) }), undefined);
    const overview = await repo.getJobsOverview();
    expect(overview.find((o) => o.name === "overview-job")).toEqual({
      name: "overview-job", total: 3, running: 0, scheduled: 2, queued: 0, completed: 1, failed: 0, repeating: 0, paused: 1,
    });
    expect(overview.find((o) => o.name === "other-job")!.total).toBe(1);
  });
});

describe("locking", () => {
  it("locks a due job once; a second lock with the same view fails", async () => {
    const saved = await repo.saveJob(job("lock-test", { nextRunAt: past(1000) }), undefined);
    const locked = await repo.lockJob(saved, { lastModifiedBy: "w1" });
    expect(locked!.lockedAt).toBeInstanceOf(Date);
    expect(locked!.lastModifiedBy).toBe("w1");
    expect(await repo.lockJob(saved, undefined)).toBeUndefined();
  });

  it("does not lock when nextRunAt changed since the caller read it, or the job is disabled", async () => {
    const saved = await repo.saveJob(job("lock-stale", { nextRunAt: past(1000) }), undefined);
    expect(await repo.lockJob({ ...saved, nextRunAt: past(5000) }, undefined)).toBeUndefined();
    const disabled = await repo.saveJob(job("lock-disabled", { nextRunAt: past(1000), disabled: true }), undefined);
    expect(await repo.lockJob(disabled, undefined)).toBeUndefined();
    const nullNext = await repo.saveJob(job("lock-null", { nextRunAt: null }), undefined);
    expect(await repo.lockJob(nullNext, undefined)).toBeDefined();
  });

  it("unlocks one job unless it is a running one-time job (nextRunAt null); unlockJobs always", async () => {
    const a = await repo.saveJob(job("u1", { nextRunAt: past(1000) }), undefined);
    const b = await repo.saveJob(job("u2", { nextRunAt: null }), undefined);
    await repo.lockJob(a, undefined);
    await repo.lockJob(b, undefined);
    await repo.unlockJob(a);
    await repo.unlockJob(b);
    expect((await repo.getJobById(a._id!))!.lockedAt).toBeUndefined();
    expect((await repo.getJobById(b._id!))!.lockedAt).toBeInstanceOf(Date);
    await repo.unlockJobs([b._id!]);
    expect((await repo.getJobById(b._id!))!.lockedAt).toBeUndefined();
    await repo.unlockJobs([]);
  });
});

describe("getNextJobToRun", () => {
  const window = () => {
    const now = new Date();
    return { now, nextScanAt: new Date(now.getTime() + 5000), lockDeadline: new Date(now.getTime() - 600_000) };
  };

  it("locks the earliest due job first, then by priority", async () => {
    const same = past(60_000);
    await repo.saveJob(job("p", { priority: 5, nextRunAt: same, data: { p: "low" } }), undefined);
    await repo.saveJob(job("p", { priority: 10, nextRunAt: same, data: { p: "high" } }), undefined);
    await repo.saveJob(job("p", { priority: 100, nextRunAt: past(1000), data: { p: "later" } }), undefined);
    const { now, nextScanAt, lockDeadline } = window();
    const order: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const next = await repo.getNextJobToRun("p", nextScanAt, lockDeadline, now, { lastModifiedBy: "w" });
      order.push(next ? (next.data as { p: string }).p : undefined);
      if (next) expect(next.lockedAt).toEqual(now);
    }
    expect(order).toEqual(["high", "low", "later", undefined]);
  });

  it("includes jobs due within the scan window, skips later, disabled and other names", async () => {
    await repo.saveJob(job("w", { nextRunAt: future(60_000) }), undefined);
    await repo.saveJob(job("w", { nextRunAt: past(1000), disabled: true }), undefined);
    await repo.saveJob(job("other", { nextRunAt: past(1000) }), undefined);
    const { now, nextScanAt, lockDeadline } = window();
    expect(await repo.getNextJobToRun("w", nextScanAt, lockDeadline, now, undefined)).toBeUndefined();
    const soon = await repo.saveJob(job("w", { nextRunAt: future(2000) }), undefined);
    expect((await repo.getNextJobToRun("w", nextScanAt, lockDeadline, now, undefined))!._id).toBe(soon._id);
  });

  it("re-locks a job whose lock expired, whatever its nextRunAt; never a freshly locked one", async () => {
    const stale = await repo.saveJob(job("s", { nextRunAt: future(7_200_000) }), undefined);
    const fresh = await repo.saveJob(job("s", { nextRunAt: past(1000) }), undefined);
    repo.database.prepare(`UPDATE agenda_jobs SET locked_at = ? WHERE id = ?`).run(Date.now() - 11 * 60_000, stale._id);
    repo.database.prepare(`UPDATE agenda_jobs SET locked_at = ? WHERE id = ?`).run(Date.now() - 1000, fresh._id);
    const { now, nextScanAt, lockDeadline } = window();
    const got = await repo.getNextJobToRun("s", nextScanAt, lockDeadline, now, undefined);
    expect(got!._id).toBe(stale._id);
    expect(got!.lockedAt).toEqual(now);
    expect(await repo.getNextJobToRun("s", nextScanAt, lockDeadline, now, undefined)).toBeUndefined();
  });
});

describe("saveJobState", () => {
  it("writes the processor fields and stringifies a non-string failReason", async () => {
    const saved = await repo.saveJob(job("state-test"), undefined);
    const now = new Date();
    await repo.saveJobState(
      { ...saved, lastRunAt: now, lastFinishedAt: now, progress: 50, failCount: 1, failReason: { code: 42 } as unknown as string, failedAt: now, nextRunAt: null },
      { lastModifiedBy: "w2" },
    );
    const back = await repo.getJobById(saved._id!);
    expect(back).toMatchObject({ lastRunAt: now, lastFinishedAt: now, progress: 50, failCount: 1, failReason: '{"code":42}', failedAt: now, nextRunAt: null, lastModifiedBy: "w2" });
  });

  it("clears lockedAt when the job completes", async () => {
    const saved = await repo.saveJob(job("complete-test", { nextRunAt: past(1000) }), undefined);
    const locked = await repo.lockJob(saved, undefined);
    await repo.saveJobState({ ...locked!, lockedAt: undefined, lastFinishedAt: new Date() }, undefined);
    expect((await repo.getJobById(saved._id!))!.lockedAt).toBeUndefined();
  });

  it("throws unless exactly one row (id and name) matched", async () => {
    const saved = await repo.saveJob(job("st"), undefined);
    await expect(repo.saveJobState({ ...saved, name: "renamed" }, undefined)).rejects.toThrow(/cannot be updated/);
    await repo.removeJobs({ id: saved._id! });
    await expect(repo.saveJobState(saved, undefined)).rejects.toThrow(/cannot be updated/);
    await expect(repo.saveJobState({ ...saved, _id: undefined }, undefined)).rejects.toThrow(/without job ID/);
  });
});

describe("connections", () => {
  it("uses a borrowed connection without closing it, with a custom table name", async () => {
    const db = new Database(tmp.file("borrowed.db"));
    const b = new SqliteBackend({ db, tableName: "familiar_jobs" });
    expect(b.ownsConnection).toBe(false);
    await b.repository.saveJob(job("x"), undefined);
    await b.disconnect();
    expect(db.open).toBe(true);
    expect((db.prepare("SELECT COUNT(*) AS n FROM familiar_jobs").get() as { n: number }).n).toBe(1);
    db.close();
  });

  it("opens an owned file in WAL mode, closes it on disconnect and re-opens it on connect", async () => {
    expect(backend.ownsConnection).toBe(true);
    expect(repo.database.pragma("journal_mode", { simple: true })).toBe("wal");
    await repo.saveJob(job("kept"), undefined);
    await backend.disconnect();
    expect(repo.database.open).toBe(false);
    await backend.connect();
    expect(await repo.getDistinctJobNames()).toEqual(["kept"]);
  });

  it("rejects a table name that is not an identifier and a config without a database", () => {
    expect(() => new SqliteBackend({ path: tmp.file(), tableName: 'jobs"; DROP TABLE x; --' })).toThrow(ValidationError);
    expect(() => new SqliteBackend({} as never)).toThrow(ValidationError);
  });
});
