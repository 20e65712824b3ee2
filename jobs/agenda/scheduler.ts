/**
 * `AgendaScheduler`: the core `Scheduler` port on an Agenda 6 instance (SQLite or MongoDB backend).
 *
 * Job rows carry `data = { key, payload }`: `key` is the request's idempotency key (matched as
 * `data.key`), `payload` the request's JSON data.
 */
import type { Agenda, Job } from "agenda";
import { ValidationError } from "../../core/errors.js";
import type { Logger } from "../../core/log/index.js";
import type {
  JobContext,
  JobData,
  JobHandler,
  ScheduleRequest,
  Scheduler,
  SchedulerStatus,
} from "../../core/scheduling/index.js";
import type { DueTimes } from "./due-times.js";
import { applyTiming, checkRequest } from "./timing.js";

/** What a job row stores in Agenda's `data`. */
export interface StoredJobData {
  key: string;
  payload: JobData;
}

export interface AgendaSchedulerOptions {
  /** Backend name reported by `status()` (`SQLite`, `MongoDB`). */
  backend: string;
  /** Due times recorded by the backend wrapper (see `recordDueTimes`). */
  dueTimes: DueTimes;
  /** Whether `drain` closes the backend's connection (true when the backend opened it). */
  ownsConnection: boolean;
  /** Disconnects the backend after `drain`. */
  disconnect: () => Promise<void>;
  logger?: Logger;
  /** Source of "now" for computing first runs (tests pass a fixed one). */
  now?: () => Date;
}

/** The part of Agenda's private JobProcessor that `drain` needs (see `drain`). */
interface ProcessorInternals {
  stop(): { attrs: { _id?: unknown } }[];
}

/**
 * Schedules, runs and cancels Familiar's jobs through Agenda.
 *
 * - `schedule` is idempotent by (name, key): it removes the job(s) of that key, then upserts with
 *   `unique({ "data.key": key })`. Removing first means a handler that reschedules its own key
 *   keeps the new schedule: Agenda's end-of-run `saveJobState` then finds no row and is ignored,
 *   instead of overwriting the new `nextRunAt`.
 * - Delivery is at least once: a worker that dies mid-run leaves the job locked, and another
 *   worker runs it again after the definition's lock lifetime (Agenda default 10 min).
 * - Handlers that throw are recorded by Agenda (`failReason`, `failCount`); there is no retry.
 */
export class AgendaScheduler implements Scheduler {
  private running = false;

  constructor(
    /** The Agenda instance; exposed for wiring tests and dashboards. */
    readonly agenda: Agenda,
    private readonly options: AgendaSchedulerOptions,
  ) {
    agenda.on("fail", (error: unknown, job: unknown) => {
      const attrs = (job as Job | undefined)?.attrs;
      options.logger?.warn({ err: error, job: attrs?.name, id: attrs?._id }, "scheduled job failed");
    });
    agenda.on("error", (error: Error) => options.logger?.error({ err: error }, "scheduler error"));
  }

  /**
   * Registers the handler of `name`. `concurrency` limits parallel runs of this name in this
   * process; `lockLifetimeMs` is how long a run may go before another worker may take it over.
   */
  define(name: string, handler: JobHandler, options: { concurrency?: number; lockLifetimeMs?: number } = {}): void {
    const agendaOptions: { concurrency?: number; lockLifetime?: number } = {};
    if (options.concurrency !== undefined) agendaOptions.concurrency = options.concurrency;
    if (options.lockLifetimeMs !== undefined) agendaOptions.lockLifetime = options.lockLifetimeMs;
    this.agenda.define(
      name,
      async (job: Job<StoredJobData>) => {
        await handler(this.contextOf(job));
      },
      agendaOptions,
    );
  }

  private contextOf(job: Job<StoredJobData>): JobContext {
    const { attrs } = job;
    const stored = (attrs.data ?? {}) as Partial<StoredJobData>;
    const due = attrs._id ? this.options.dueTimes.take(String(attrs._id)) : undefined;
    return {
      name: attrs.name,
      key: typeof stored.key === "string" ? stored.key : "",
      data: stored.payload ?? {},
      dueAt: due ?? attrs.lastRunAt ?? new Date(),
    };
  }

  /**
   * Creates or replaces the job (name, key) and returns its next run (UTC).
   *
   * @throws ValidationError when the name has no handler here, or for a bad key, data, instant,
   *   interval, cron expression (5 fields, checked by Agenda's cron-parser) or IANA time zone.
   */
  async schedule(request: ScheduleRequest): Promise<Date | null> {
    checkRequest(request);
    if (!this.agenda.definitions[request.name]) {
      throw new ValidationError(`cannot schedule ${request.name}/${request.key}: no handler is defined for ${request.name}; call define() first`, [
        "name: a job name with a handler",
      ]);
    }
    const stored: StoredJobData = { key: request.key, payload: request.data };
    const job = this.agenda.create<StoredJobData>(request.name, stored);
    applyTiming(job, request.timing, this.options.now?.() ?? new Date());
    job.unique({ "data.key": request.key });
    await this.agenda.cancel({ name: request.name, data: { key: request.key } });
    await job.save();
    return job.attrs.nextRunAt ?? null;
  }

  /** Removes the job(s) of (name, key); returns how many. A run in progress finishes. */
  async cancel(name: string, key: string): Promise<number> {
    return this.agenda.cancel({ name, data: { key } });
  }

  /** Removes every job of `name` (jobs of a name no longer in use). */
  async cancelAll(name: string): Promise<number> {
    return this.agenda.cancel({ name });
  }

  /** Next run of (name, key) in UTC; null if there is no such job or it will not run again. */
  async nextRunAt(name: string, key: string): Promise<Date | null> {
    const { jobs } = await this.agenda.queryJobs({ name, data: { key }, sort: { nextRunAt: "asc" } });
    const next = jobs.map((j) => j.nextRunAt).find((d): d is Date => d instanceof Date);
    return next ?? null;
  }

  /** Starts processing; jobs saved in this process start within milliseconds when a notification channel is set. */
  async start(): Promise<void> {
    await this.agenda.start();
    this.running = true;
  }

  /**
   * Stops picking up jobs, waits up to `deadlineMs` for running ones (Agenda `drain`), then
   * releases the jobs this process had locked ahead but not started, and closes an owned
   * connection. Runs still going at the deadline keep their lock and are retaken by another
   * worker after their lock lifetime. Agenda's liveness timer of a finished run can keep the
   * process alive for up to lockLifetime / 2 afterwards: exit explicitly after shutdown.
   */
  async drain(deadlineMs: number): Promise<void> {
    // Agenda's drain() leaves jobs that were locked ahead (due within the next scan window) locked
    // in the database; its stop() would release them but also abandons running jobs. So: drain,
    // then ask the (private) job processor for what it still holds, as stop() does.
    const processor = (this.agenda as unknown as { jobProcessor?: ProcessorInternals }).jobProcessor;
    const result = await this.agenda.drain({ timeout: Math.max(0, deadlineMs), closeConnection: false });
    this.running = false;
    if (result.timedOut) this.options.logger?.warn({ stillRunning: result.running }, "scheduler drain deadline reached");
    const leftovers = processor?.stop() ?? [];
    const ids = leftovers.map((j) => j.attrs._id).filter((id) => id !== undefined && id !== null).map(String);
    if (ids.length > 0) await this.agenda.db.unlockJobs(ids);
    if (this.options.ownsConnection) await this.options.disconnect();
  }

  status(): SchedulerStatus {
    return { running: this.running, backend: this.options.backend };
  }
}
