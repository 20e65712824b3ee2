/**
 * A Scheduler that loads Agenda only when there is a job to run: in embedded mode most installs
 * have none most of the time (wake-ups live in the task store; Agenda keeps approval expiries and
 * digests), so an idle Familiar does not pay Agenda's start-up and memory. It starts Agenda at once
 * when the job store already holds jobs, and on the first `schedule` otherwise.
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import type { Logger } from "../core/log/index.js";
import type { JobHandler, ScheduleRequest, Scheduler, SchedulerStatus } from "../core/scheduling/index.js";

/** True when the embedded job file holds at least one job (false for a missing file or table). */
export function sqliteJobsExist(path: string, tableName = "agenda_jobs"): boolean {
  if (!existsSync(path)) return false;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(tableName);
    return table !== undefined && db.prepare(`SELECT 1 FROM "${tableName}" LIMIT 1`).get() !== undefined;
  } finally {
    db.close();
  }
}

export class LazyScheduler implements Scheduler {
  private readonly definitions: { name: string; handler: JobHandler; options?: { concurrency?: number; lockLifetimeMs?: number } }[] = [];
  private loaded: Promise<Scheduler> | null = null;
  private started = false;

  constructor(
    private readonly options: {
      /** Builds (and connects) the real scheduler. */
      load: () => Promise<Scheduler>;
      /** Whether the job store holds jobs already (then Agenda starts with Familiar). */
      hasJobs: () => boolean;
      backend: string;
      logger?: Logger;
    },
  ) {}

  define(name: string, handler: JobHandler, options?: { concurrency?: number; lockLifetimeMs?: number }): void {
    this.definitions.push({ name, handler, ...(options && { options }) });
  }

  async schedule(request: ScheduleRequest): Promise<Date | null> {
    return (await this.real()).schedule(request);
  }

  async cancel(name: string, key: string): Promise<number> {
    return this.loaded || this.options.hasJobs() ? (await this.real()).cancel(name, key) : 0;
  }

  async cancelAll(name: string): Promise<number> {
    return this.loaded || this.options.hasJobs() ? (await this.real()).cancelAll(name) : 0;
  }

  async nextRunAt(name: string, key: string): Promise<Date | null> {
    return this.loaded || this.options.hasJobs() ? (await this.real()).nextRunAt(name, key) : null;
  }

  /** Starts Agenda now if there are jobs to run; otherwise it starts with the first `schedule`. */
  async start(): Promise<void> {
    this.started = true;
    if (this.options.hasJobs()) await this.real();
  }

  async drain(deadlineMs: number): Promise<void> {
    this.started = false;
    if (this.loaded) await (await this.loaded).drain(deadlineMs);
  }

  status(): SchedulerStatus {
    return { running: this.started, backend: this.loaded ? this.options.backend : `${this.options.backend} (not loaded: no jobs yet)` };
  }

  private real(): Promise<Scheduler> {
    this.loaded ??= (async () => {
      const scheduler = await this.options.load();
      for (const d of this.definitions) scheduler.define(d.name, d.handler, d.options);
      if (this.started) await scheduler.start();
      this.options.logger?.debug("scheduler loaded");
      return scheduler;
    })().catch((err: unknown) => {
      this.loaded = null;
      throw err;
    });
    return this.loaded;
  }
}
