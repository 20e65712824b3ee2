/**
 * SQLite implementation of Agenda's `JobRepository` (better-sqlite3). Semantics mirror
 * `@agendajs/mongo-backend`'s MongoJobRepository method by method; read-modify-write steps run in
 * `BEGIN IMMEDIATE` transactions and locking uses one `UPDATE … WHERE id = (SELECT … LIMIT 1)
 * RETURNING *` statement, so several processes can share one database file.
 */
import { randomUUID } from "node:crypto";
import type BetterSqlite3 from "better-sqlite3";
import {
  computeJobState,
  type JobId,
  type JobParameters,
  type JobRepository,
  type JobRepositoryOptions,
  type JobsOverview,
  type JobsQueryOptions,
  type JobsResult,
  type JobWithState,
  type RemoveJobsOptions,
} from "agenda";
import { COLUMN_NAMES, fromRow, schemaSql, toColumns, toMs, type JobColumns, type JobRow } from "./rows.js";
import { dataFilter, inList, orderBy, removeFilter, uniqueFilter, where, type Condition } from "./filters.js";

type Db = BetterSqlite3.Database;

/** Opens (or re-opens) the database; returns null when the connection is borrowed. */
export type DbOpener = () => Db;

export interface SqliteJobRepositoryConfig {
  /** A function returning an open connection; called on construction and again after `disconnect`. */
  open: DbOpener;
  /** Whether `disconnect` closes the connection (true when the backend opened it). */
  ownsConnection: boolean;
  /** Table name, a plain SQL identifier. */
  tableName: string;
}

/** Agenda's JobRepository on one SQLite table. */
export class SqliteJobRepository implements JobRepository {
  private db: Db;
  private open = true;
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private readonly table: string;
  private readonly insertSql: string;
  private readonly updateAllSql: string;

  constructor(private readonly config: SqliteJobRepositoryConfig) {
    this.table = config.tableName;
    this.db = config.open();
    this.db.exec(schemaSql(this.table));
    const cols = COLUMN_NAMES.map((c) => `"${c}"`).join(", ");
    const named = COLUMN_NAMES.map((c) => `@${c}`).join(", ");
    this.insertSql = `INSERT INTO "${this.table}" (id, ${cols}) VALUES (@id, ${named}) RETURNING *`;
    this.updateAllSql = `UPDATE "${this.table}" SET ${COLUMN_NAMES.map((c) => `"${c}" = @${c}`).join(", ")} WHERE id = @id RETURNING *`;
  }

  /** The underlying connection (for tests and for sharing with other stores). */
  get database(): Db {
    return this.db;
  }

  /** Re-opens an owned connection closed by `disconnect`; the schema already exists. */
  async connect(): Promise<void> {
    if (this.open) return;
    this.db = this.config.open();
    this.db.exec(schemaSql(this.table));
    this.statements.clear();
    this.open = true;
  }

  /** Closes the connection if this repository opened it. */
  async disconnect(): Promise<void> {
    if (!this.config.ownsConnection || !this.open) return;
    this.statements.clear();
    this.db.close();
    this.open = false;
  }

  private stmt(sql: string): BetterSqlite3.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private all(sql: string, params: unknown[] = []): JobRow[] {
    return this.stmt(sql).all(...params) as JobRow[];
  }

  private get(sql: string, params: unknown[] = []): JobRow | undefined {
    return this.stmt(sql).get(...params) as JobRow | undefined;
  }

  private run(sql: string, params: unknown[] = []): number {
    return this.stmt(sql).run(...params).changes;
  }

  private immediate<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  async getJobById(id: string): Promise<JobParameters | null> {
    const row = this.get(`SELECT * FROM "${this.table}" WHERE id = ?`, [String(id)]);
    return row ? fromRow(row) : null;
  }

  async queryJobs(options: JobsQueryOptions = {}): Promise<JobsResult> {
    const { name, names, state, id, ids, search, data, includeDisabled = true, sort, skip = 0, limit = 0 } = options;
    const now = new Date();
    const conditions: Condition[] = [];
    // As in MongoBackend, a search replaces the name filter.
    if (search && typeof search === "string") {
      conditions.push({ sql: "name LIKE ? ESCAPE '\\'", params: [`%${search.replace(/[\\%_]/g, (c) => "\\" + c)}%`] });
    } else if (name && typeof name === "string") {
      conditions.push({ sql: "name = ?", params: [name] });
    } else if (Array.isArray(names) && names.some((n) => typeof n === "string")) {
      conditions.push(inList("name", names.filter((n) => typeof n === "string")));
    }
    if (id && typeof id === "string") conditions.push({ sql: "id = ?", params: [id] });
    else if (Array.isArray(ids) && ids.length > 0) conditions.push(inList("id", ids.map(String)));
    if (data !== undefined) conditions.push(...dataFilter(data));
    if (!includeDisabled) conditions.push({ sql: "disabled IS NOT 1", params: [] });

    const w = where(conditions);
    const base = `FROM "${this.table}" ${w.sql}`;
    const withState = (row: JobRow): JobWithState => {
      const job = fromRow(row);
      return { ...job, _id: job._id as JobId, state: computeJobState(job, now) };
    };

    if (!state) {
      // No state filter: pagination goes to the database.
      const page = limit > 0 || skip > 0 ? ` LIMIT ${limit > 0 ? Math.floor(limit) : -1} OFFSET ${Math.max(0, Math.floor(skip))}` : "";
      const rows = this.all(`SELECT * ${base} ${orderBy(sort)}${page}`, w.params);
      const total = (this.stmt(`SELECT COUNT(*) AS n ${base}`).get(...w.params) as { n: number }).n;
      return { jobs: rows.map(withState), total };
    }

    // The state is computed in code: filter everything, then paginate (MongoBackend does the same).
    let jobs = this.all(`SELECT * ${base} ${orderBy(sort)}`, w.params)
      .map(withState)
      .filter((job) => (state === "paused" ? job.disabled === true : job.state === state));
    const total = jobs.length;
    if (limit > 0) jobs = jobs.slice(skip, skip + limit);
    else if (skip > 0) jobs = jobs.slice(skip);
    return { jobs, total };
  }

  async getJobsOverview(): Promise<JobsOverview[]> {
    const now = new Date();
    const names = await this.getDistinctJobNames();
    return names.map((name) => {
      const overview: JobsOverview = { name, total: 0, running: 0, scheduled: 0, queued: 0, completed: 0, failed: 0, repeating: 0, paused: 0 };
      for (const row of this.all(`SELECT * FROM "${this.table}" WHERE name = ?`, [name])) {
        const job = fromRow(row);
        overview.total++;
        overview[computeJobState(job, now)]++;
        if (job.disabled === true) overview.paused++;
      }
      return overview;
    });
  }

  async getDistinctJobNames(): Promise<string[]> {
    return (this.stmt(`SELECT DISTINCT name FROM "${this.table}" ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
  }

  /** Jobs whose `nextRunAt` is in the past (disabled ones included, as in MongoBackend). */
  async getQueueSize(): Promise<number> {
    return (this.stmt(`SELECT COUNT(*) AS n FROM "${this.table}" WHERE next_run_at < ?`).get(Date.now()) as { n: number }).n;
  }

  async removeJobs(options: RemoveJobsOptions): Promise<number> {
    const filter = removeFilter(options);
    if (!filter) return 0;
    const w = where(filter);
    return this.run(`DELETE FROM "${this.table}" ${w.sql}`, w.params);
  }

  /** Counts only jobs that actually changed, like MongoDB's `modifiedCount`. */
  async disableJobs(options: RemoveJobsOptions): Promise<number> {
    const filter = removeFilter(options);
    if (!filter) return 0;
    const w = where([...filter, { sql: "disabled IS NOT 1", params: [] }]);
    return this.run(`UPDATE "${this.table}" SET disabled = 1 ${w.sql}`, w.params);
  }

  async enableJobs(options: RemoveJobsOptions): Promise<number> {
    const filter = removeFilter(options);
    if (!filter) return 0;
    const w = where([...filter, { sql: "disabled IS NOT 0", params: [] }]);
    return this.run(`UPDATE "${this.table}" SET disabled = 0 ${w.sql}`, w.params);
  }

  async purgeAllJobs(): Promise<number> {
    return this.run(`DELETE FROM "${this.table}"`);
  }

  /**
   * Unlocks every job (returns how many were locked). For embedded mode at start-up: one process
   * owns the file, so any lock belongs to a process that is gone — its jobs run now, not after the
   * lock lifetime.
   */
  releaseAllLocks(): number {
    return this.run(`UPDATE "${this.table}" SET locked_at = NULL WHERE locked_at IS NOT NULL`);
  }

  /** Unlocks a job unless it is running a one-time execution (`nextRunAt` null). */
  async unlockJob(job: JobParameters): Promise<void> {
    if (!job._id) return;
    this.run(`UPDATE "${this.table}" SET locked_at = NULL WHERE id = ? AND next_run_at IS NOT NULL`, [String(job._id)]);
  }

  async unlockJobs(jobIds: (JobId | string)[]): Promise<void> {
    if (jobIds.length === 0) return;
    const list = inList("id", jobIds.map(String));
    this.run(`UPDATE "${this.table}" SET locked_at = NULL WHERE ${list.sql}`, list.params);
  }

  /** Locks the job if it is unlocked, enabled and still due at the `nextRunAt` the caller saw. */
  async lockJob(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<JobParameters | undefined> {
    if (!job._id) return undefined;
    const nextRunAt = toMs(job.nextRunAt);
    const row = this.get(
      `UPDATE "${this.table}" SET locked_at = ?, last_modified_by = ?
       WHERE id = ? AND name = ? AND locked_at IS NULL AND next_run_at IS ? AND disabled IS NOT 1
       RETURNING *`,
      [Date.now(), options?.lastModifiedBy ?? null, String(job._id), job.name, nextRunAt],
    );
    return row ? fromRow(row) : undefined;
  }

  /**
   * Atomically picks and locks one job of `jobName`: an unlocked one due by `nextScanAt`, or one
   * whose lock is older than `lockDeadline` (its worker died). Earliest `nextRunAt` first, then
   * highest priority. One statement, so two processes never lock the same row.
   */
  async getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    const lockTime = (now ?? new Date()).getTime();
    const row = this.get(
      `UPDATE "${this.table}" SET locked_at = ?, last_modified_by = ?
       WHERE id = (
         SELECT id FROM "${this.table}"
         WHERE name = ? AND disabled IS NOT 1
           AND ((locked_at IS NULL AND next_run_at <= ?) OR locked_at <= ?)
         ORDER BY next_run_at ASC, priority DESC, rowid ASC
         LIMIT 1
       )
       RETURNING *`,
      [lockTime, options?.lastModifiedBy ?? null, jobName, nextScanAt.getTime(), lockDeadline.getTime()],
    );
    return row ? fromRow(row) : undefined;
  }

  /** Writes the processor-managed fields; throws unless exactly one row (id and name) matched. */
  async saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    if (!job._id) throw new Error("Cannot save job state without job ID");
    const c = toColumns(job, options?.lastModifiedBy);
    const changed = this.run(
      `UPDATE "${this.table}" SET locked_at = ?, next_run_at = ?, last_run_at = ?, progress = ?, fail_reason = ?,
         fail_count = ?, failed_at = ?, last_finished_at = ?, last_modified_by = ?
       WHERE id = ? AND name = ?`,
      [c.locked_at, c.next_run_at, c.last_run_at, c.progress, c.fail_reason, c.fail_count, c.failed_at, c.last_finished_at, c.last_modified_by, String(job._id), job.name],
    );
    if (changed !== 1) {
      throw new Error(`job ${job._id} (name: ${job.name}) cannot be updated in the database, maybe it does not exist anymore?`);
    }
  }

  /**
   * Inserts or updates a job, following MongoBackend: with `_id`, update that job (a removed job
   * comes back unchanged); `type: 'single'`, upsert by name (a past `nextRunAt` is kept on update);
   * `unique`, upsert by that query (`insertOnly` leaves an existing job as it is; `debounce` moves
   * `nextRunAt`); otherwise insert.
   */
  async saveJob<DATA = unknown>(job: JobParameters<DATA>, options: JobRepositoryOptions | undefined): Promise<JobParameters<DATA>> {
    const { _id, unique, uniqueOpts, ...props } = job;
    const columns = toColumns(props, options?.lastModifiedBy);

    if (_id) {
      const row = this.immediate(() => {
        const existing = this.get(`SELECT id FROM "${this.table}" WHERE id = ? AND name = ?`, [String(_id), props.name]);
        return existing ? this.update(existing.id, columns) : undefined;
      });
      return row ? fromRow<DATA>(row) : job;
    }

    if (props.type === "single") {
      const row = this.immediate(() => {
        const existing = this.get(`SELECT * FROM "${this.table}" WHERE name = ? AND type = 'single' ORDER BY rowid LIMIT 1`, [props.name]);
        if (!existing) return this.insert(columns);
        const protect = columns.next_run_at !== null && columns.next_run_at <= Date.now();
        return this.update(existing.id, protect ? { ...columns, next_run_at: existing.next_run_at } : columns);
      });
      return fromRow<DATA>(row);
    }

    if (unique) {
      const filter = where([{ sql: "name = ?", params: [props.name] }, ...uniqueFilter(unique)]);
      const debounce = uniqueOpts?.debounce;
      const row = this.immediate(() => {
        const existing = this.get(`SELECT * FROM "${this.table}" ${filter.sql} ORDER BY rowid LIMIT 1`, filter.params);
        const now = Date.now();
        if (debounce) {
          if (existing) {
            const startedAt = existing.debounce_started_at ?? now;
            if (debounce.strategy === "leading") {
              return this.update(existing.id, { ...columns, next_run_at: existing.next_run_at, debounce_started_at: startedAt });
            }
            const forced = debounce.maxWait !== undefined && debounce.maxWait > 0 && now - startedAt >= debounce.maxWait;
            return this.update(existing.id, {
              ...columns,
              next_run_at: forced ? now : now + debounce.delay,
              debounce_started_at: forced ? null : startedAt,
            });
          }
          return this.insert(
            debounce.strategy === "leading"
              ? { ...columns, debounce_started_at: now }
              : { ...columns, next_run_at: now + debounce.delay, debounce_started_at: now },
          );
        }
        if (!existing) return this.insert(columns);
        if (uniqueOpts?.insertOnly) return existing;
        return this.update(existing.id, columns);
      });
      return fromRow<DATA>(row);
    }

    return fromRow<DATA>(this.insert(columns));
  }

  private insert(columns: JobColumns): JobRow {
    return this.stmt(this.insertSql).get({ id: randomUUID(), ...columns }) as JobRow;
  }

  private update(id: string, columns: JobColumns): JobRow {
    return this.stmt(this.updateAllSql).get({ id, ...columns }) as JobRow;
  }
}
