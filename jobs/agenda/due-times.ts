/**
 * Remembers when each locked job was due. Agenda's `Job.run()` replaces `nextRunAt` with the
 * *following* run time before it calls the handler, so the scheduled time a handler needs
 * (`JobContext.dueAt`) must be captured when the repository hands the job out.
 */
import type {
  AgendaBackend,
  JobId,
  JobParameters,
  JobRepository,
  JobRepositoryOptions,
  JobsOverview,
  JobsQueryOptions,
  JobsResult,
  RemoveJobsOptions,
} from "agenda";

/** Due times of jobs this process has locked, by job id; entries go when taken or unlocked. */
export class DueTimes {
  private readonly byId = new Map<string, Date | null>();

  record(job: JobParameters | undefined): void {
    if (job?._id) this.byId.set(String(job._id), job.nextRunAt ?? null);
  }

  forget(id: string): void {
    this.byId.delete(id);
  }

  /** The due time recorded for `id` (and forgets it); undefined if this process never locked it. */
  take(id: string): Date | null | undefined {
    const due = this.byId.get(id);
    this.byId.delete(id);
    return due;
  }

  get size(): number {
    return this.byId.size;
  }
}

/** A JobRepository that records due times on lock and otherwise delegates every call. */
class RecordingRepository implements JobRepository {
  constructor(
    private readonly inner: JobRepository,
    private readonly due: DueTimes,
  ) {}

  connect(): Promise<void> {
    return this.inner.connect();
  }
  queryJobs(options?: JobsQueryOptions): Promise<JobsResult> {
    return this.inner.queryJobs(options);
  }
  getJobsOverview(): Promise<JobsOverview[]> {
    return this.inner.getJobsOverview();
  }
  getDistinctJobNames(): Promise<string[]> {
    return this.inner.getDistinctJobNames();
  }
  getJobById(id: string): Promise<JobParameters | null> {
    return this.inner.getJobById(id);
  }
  getQueueSize(): Promise<number> {
    return this.inner.getQueueSize();
  }
  removeJobs(options: RemoveJobsOptions): Promise<number> {
    return this.inner.removeJobs(options);
  }
  saveJob<DATA = unknown>(job: JobParameters<DATA>, options: JobRepositoryOptions | undefined): Promise<JobParameters<DATA>> {
    return this.inner.saveJob(job, options);
  }
  saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    return this.inner.saveJobState(job, options);
  }
  async lockJob(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<JobParameters | undefined> {
    const locked = await this.inner.lockJob(job, options);
    this.due.record(locked);
    return locked;
  }
  async unlockJob(job: JobParameters): Promise<void> {
    await this.inner.unlockJob(job);
    if (job._id) this.due.forget(String(job._id));
  }
  async unlockJobs(jobIds: (JobId | string)[]): Promise<void> {
    await this.inner.unlockJobs(jobIds);
    for (const id of jobIds) this.due.forget(String(id));
  }
  async getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    const job = await this.inner.getNextJobToRun(jobName, nextScanAt, lockDeadline, now, options);
    this.due.record(job);
    return job;
  }
  disableJobs(options: RemoveJobsOptions): Promise<number> {
    return this.inner.disableJobs(options);
  }
  enableJobs(options: RemoveJobsOptions): Promise<number> {
    return this.inner.enableJobs(options);
  }
  purgeAllJobs(): Promise<number> {
    return this.inner.purgeAllJobs();
  }
}

/**
 * Wraps a backend so its repository records due times into `due`. `connect()` runs the inner
 * connect once and memoizes it, so a factory can await it (and see its error) before Agenda's
 * constructor calls it again without a catch.
 */
export function recordDueTimes(backend: AgendaBackend, due: DueTimes): AgendaBackend {
  let connecting: Promise<void> | undefined;
  return {
    name: backend.name,
    repository: new RecordingRepository(backend.repository, due),
    notificationChannel: backend.notificationChannel,
    logger: backend.logger,
    ownsConnection: backend.ownsConnection,
    connect: () => {
      connecting ??= backend.connect().catch((error: unknown) => {
        connecting = undefined;
        throw error;
      });
      return connecting;
    },
    disconnect: async () => {
      connecting = undefined;
      await backend.disconnect();
    },
  };
}
