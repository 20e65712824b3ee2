/**
 * Row layout of the SQLite job table and the mapping between rows and Agenda's `JobParameters`.
 * Instants are INTEGER milliseconds since the epoch (UTC), so SQL comparison and ordering are
 * numeric and NULLs sort first ascending, as in MongoDB. Job data is JSON text.
 */
import { toJobId, type JobParameters } from "agenda";

/** One row as better-sqlite3 returns it. */
export interface JobRow {
  id: string;
  name: string;
  priority: number;
  next_run_at: number | null;
  type: string;
  locked_at: number | null;
  last_finished_at: number | null;
  failed_at: number | null;
  fail_count: number | null;
  fail_reason: string | null;
  repeat_timezone: string | null;
  last_run_at: number | null;
  /** Untyped column: keeps a numeric interval a number and a cron/human interval a string. */
  repeat_interval: string | number | null;
  repeat_at: string | null;
  data: string | null;
  disabled: number | null;
  progress: number | null;
  last_modified_by: string | null;
  fork: number | null;
  debounce_started_at: number | null;
  start_date: number | null;
  end_date: number | null;
  skip_days: string | null;
}

/** The columns `saveJob` writes (everything except `id`). */
export type JobColumns = Omit<JobRow, "id">;

export const COLUMN_NAMES: readonly (keyof JobColumns)[] = [
  "name",
  "priority",
  "next_run_at",
  "type",
  "locked_at",
  "last_finished_at",
  "failed_at",
  "fail_count",
  "fail_reason",
  "repeat_timezone",
  "last_run_at",
  "repeat_interval",
  "repeat_at",
  "data",
  "disabled",
  "progress",
  "last_modified_by",
  "fork",
  "debounce_started_at",
  "start_date",
  "end_date",
  "skip_days",
];

/** Agenda field name → column, for the top-level fields a `unique` query or a sort may name. */
export const FIELD_TO_COLUMN: Readonly<Record<string, keyof JobRow>> = {
  _id: "id",
  name: "name",
  priority: "priority",
  nextRunAt: "next_run_at",
  type: "type",
  lockedAt: "locked_at",
  lastFinishedAt: "last_finished_at",
  failedAt: "failed_at",
  failCount: "fail_count",
  failReason: "fail_reason",
  repeatTimezone: "repeat_timezone",
  lastRunAt: "last_run_at",
  repeatInterval: "repeat_interval",
  repeatAt: "repeat_at",
  disabled: "disabled",
  progress: "progress",
  lastModifiedBy: "last_modified_by",
  fork: "fork",
  debounceStartedAt: "debounce_started_at",
  startDate: "start_date",
  endDate: "end_date",
};

export const DATE_COLUMNS: ReadonlySet<keyof JobRow> = new Set([
  "next_run_at",
  "locked_at",
  "last_finished_at",
  "failed_at",
  "last_run_at",
  "debounce_started_at",
  "start_date",
  "end_date",
]);

/** DDL of the job table and its indexes. `table` must already be validated as an identifier. */
export function schemaSql(table: string): string {
  return `
CREATE TABLE IF NOT EXISTS "${table}" (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  next_run_at INTEGER,
  type TEXT NOT NULL DEFAULT 'normal',
  locked_at INTEGER,
  last_finished_at INTEGER,
  failed_at INTEGER,
  fail_count INTEGER,
  fail_reason TEXT,
  repeat_timezone TEXT,
  last_run_at INTEGER,
  repeat_interval,
  repeat_at TEXT,
  data TEXT,
  disabled INTEGER,
  progress REAL,
  last_modified_by TEXT,
  fork INTEGER,
  debounce_started_at INTEGER,
  start_date INTEGER,
  end_date INTEGER,
  skip_days TEXT
);
CREATE INDEX IF NOT EXISTS "${table}_find_and_lock" ON "${table}" (name, next_run_at, priority DESC, locked_at, disabled);
CREATE INDEX IF NOT EXISTS "${table}_locked_at" ON "${table}" (name, locked_at);
CREATE INDEX IF NOT EXISTS "${table}_single" ON "${table}" (name, type);
CREATE INDEX IF NOT EXISTS "${table}_data_key" ON "${table}" (name, json_extract(data, '$."key"'));
`;
}

/** A Date, ISO string or epoch number as epoch milliseconds; null for absent or unparsable values. */
export function toMs(value: unknown): number | null {
  if (value === null || value === undefined || value === "") return null;
  const ms = value instanceof Date ? value.getTime() : new Date(value as string | number).getTime();
  return Number.isNaN(ms) ? null : ms;
}

function toDate(ms: number | null): Date | undefined {
  return ms === null ? undefined : new Date(ms);
}

function toFlag(value: boolean | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  return value ? 1 : 0;
}

/**
 * better-sqlite3 binds only strings, numbers, bigints, buffers and null; Agenda can hand over a
 * non-string `failReason` (whatever a handler threw), so anything else is stringified.
 */
export function toText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  if (typeof value === "object") {
    try {
      return JSON.stringify(value);
    } catch {
      // A cycle or a BigInt inside: what String() would say of it.
      return Object.prototype.toString.call(value);
    }
  }
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  // What is left: symbols and functions (a function as its source, as String() says it).
  return typeof value === "symbol" ? value.toString() : Function.prototype.toString.call(value);
}

function toNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === "number" ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

/** Job data as JSON text (a Date inside becomes an ISO string, as everywhere in SQL backends). */
export function dataToJson(data: unknown): string | null {
  return data === undefined ? null : JSON.stringify(data);
}

/** Column values for a job, with every absent field NULL (what MongoBackend writes as null). */
export function toColumns(job: Omit<JobParameters, "_id" | "unique" | "uniqueOpts">, lastModifiedBy: string | undefined): JobColumns {
  const interval = job.repeatInterval;
  return {
    name: job.name,
    priority: toNumber(job.priority) ?? 0,
    next_run_at: toMs(job.nextRunAt),
    type: job.type ?? "normal",
    locked_at: toMs(job.lockedAt),
    last_finished_at: toMs(job.lastFinishedAt),
    failed_at: toMs(job.failedAt),
    fail_count: toNumber(job.failCount),
    fail_reason: toText(job.failReason),
    repeat_timezone: job.repeatTimezone ?? null,
    last_run_at: toMs(job.lastRunAt),
    repeat_interval: interval === undefined || interval === null ? null : typeof interval === "number" ? interval : String(interval),
    repeat_at: job.repeatAt ?? null,
    data: dataToJson(job.data),
    disabled: toFlag(job.disabled),
    progress: toNumber(job.progress),
    last_modified_by: lastModifiedBy ?? null,
    fork: toFlag(job.fork),
    debounce_started_at: toMs(job.debounceStartedAt),
    start_date: toMs(job.startDate),
    end_date: toMs(job.endDate),
    skip_days: job.skipDays ? JSON.stringify(job.skipDays) : null,
  };
}

/** A row as Agenda's `JobParameters`: NULL columns become `undefined`, except `nextRunAt` (null). */
export function fromRow<DATA = unknown>(row: JobRow): JobParameters<DATA> {
  return {
    _id: toJobId(row.id),
    name: row.name,
    priority: row.priority,
    nextRunAt: row.next_run_at === null ? null : new Date(row.next_run_at),
    type: row.type === "single" ? "single" : "normal",
    data: (row.data === null ? null : JSON.parse(row.data)) as DATA,
    lockedAt: toDate(row.locked_at),
    lastFinishedAt: toDate(row.last_finished_at),
    failedAt: toDate(row.failed_at),
    failCount: row.fail_count ?? undefined,
    failReason: row.fail_reason ?? undefined,
    repeatTimezone: row.repeat_timezone ?? undefined,
    lastRunAt: toDate(row.last_run_at),
    repeatInterval: row.repeat_interval ?? undefined,
    repeatAt: row.repeat_at ?? undefined,
    disabled: row.disabled === null ? undefined : row.disabled === 1,
    progress: row.progress ?? undefined,
    lastModifiedBy: row.last_modified_by ?? undefined,
    fork: row.fork === null ? undefined : row.fork === 1,
    debounceStartedAt: toDate(row.debounce_started_at),
    startDate: toDate(row.start_date),
    endDate: toDate(row.end_date),
    skipDays: row.skip_days === null ? undefined : (JSON.parse(row.skip_days) as number[]),
  };
}
