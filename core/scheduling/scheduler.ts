/**
 * The Scheduler port: all time-based work goes through it (implemented in `jobs/` with Agenda 6).
 * Job payloads are plain JSON (ids and ISO-8601 strings, never `Date` objects): SQL backends
 * store job data as JSON text.
 */

/** A job's JSON payload. */
export type JobData = Record<string, string | number | boolean | null>;

/** When a job runs. */
export type JobTiming =
  /** Once, at an absolute instant. */
  | { kind: "at"; at: Date }
  /** As soon as possible (within milliseconds in one process). */
  | { kind: "now" }
  /** Repeatedly every `intervalMs` milliseconds. */
  | { kind: "every"; intervalMs: number }
  /** Repeatedly on a 5-field cron expression evaluated in an IANA time zone (`Asia/Tokyo`). */
  | { kind: "cron"; cron: string; timeZone: string };

export interface ScheduleRequest {
  /** Job name, e.g. `task.wake`. Must have a handler defined. */
  name: string;
  /**
   * Idempotency key: scheduling the same (name, key) again replaces the earlier schedule instead of
   * adding a second job. Cancel by the same key.
   */
  key: string;
  data: JobData;
  timing: JobTiming;
}

/** What a job handler receives. */
export interface JobContext {
  name: string;
  key: string;
  data: JobData;
  /** When the job was due (its scheduled time), UTC. */
  dueAt: Date;
}

export type JobHandler = (job: JobContext) => Promise<void>;

export interface SchedulerStatus {
  running: boolean;
  backend: string;
}

/**
 * Schedules, runs and cancels jobs. Errors: `schedule` throws ValidationError for an invalid cron
 * expression or time zone.
 */
export interface Scheduler {
  /** Registers the handler of a job name; call before `start`. */
  define(name: string, handler: JobHandler, options?: { concurrency?: number; lockLifetimeMs?: number }): void;
  /** Creates or replaces the job identified by (name, key). Returns the next run time (null if none). */
  schedule(request: ScheduleRequest): Promise<Date | null>;
  /** Removes the job(s) identified by (name, key). Returns how many were removed. */
  cancel(name: string, key: string): Promise<number>;
  /** Removes every job of `name` (a job name no longer in use). Returns how many were removed. */
  cancelAll(name: string): Promise<number>;
  /** Next run time of (name, key), or null if there is no such job. */
  nextRunAt(name: string, key: string): Promise<Date | null>;
  start(): Promise<void>;
  /** Stops picking up jobs and waits up to `deadlineMs` for running ones to finish (Agenda `drain`). */
  drain(deadlineMs: number): Promise<void>;
  status(): SchedulerStatus;
}
