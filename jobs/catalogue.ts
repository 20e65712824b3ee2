/**
 * The job catalogue: every Agenda job Familiar runs — its name, its payload schema and its handler
 * registration — plus housekeeping. Time-based *task* work (wake-ups, check-ins, retries of
 * interrupted activations) is not here: the task store holds when each task is due and the
 * runtime's due loop claims it. Agenda keeps the jobs that belong to no task (approval expiry,
 * digests); housekeeping needs no persistence and runs on a plain timer.
 */
import { z } from "zod";
import { approvalExpiryJobName } from "../core/runtime/index.js";
import { digestJobName } from "../core/notify/index.js";
import type { Logger } from "../core/log/index.js";
import type { JobContext, Scheduler } from "../core/scheduling/index.js";

/** Job names Familiar no longer uses (round 1 kept wake-ups and retries in Agenda); purged at start. */
export const retiredJobNames = ["task.wake", "task.resume", "outbox.deliver"] as const;

/** How long processed platform update ids are kept, ms: Telegram redelivers for up to 24 h, Slack retries within minutes. */
export const inboundRetentionMs = 14 * 24 * 60 * 60 * 1000;

/** Names and payload schemas of every job. */
export const jobs = {
  /** Expires an approval request at its deadline (edits its card, tells the waiting task). */
  approvalExpire: { name: approvalExpiryJobName, data: z.object({ approvalId: z.string().min(1) }) },
  /** Sends a person's digest of held messages. */
  digestSend: { name: digestJobName, data: z.object({ personId: z.string().min(1) }) },
  /**
   * Syncs one calendar connection (a CalDAV account or a feed): repeats at the connection kind's
   * interval (key: the connection id), and once at once when it is made (key `<id>:now`). The name
   * is the calendar connector's `CALENDAR_SYNC_JOB`.
   */
  calendarSync: { name: "calendar.sync", data: z.object({ connectionId: z.string().min(1) }) },
  /**
   * Keeps one mailbox in sync for one session (its folders watched with IMAP IDLE or polled; then it
   * returns and schedules its next session at once — here or, with MongoDB, in whichever process
   * picks it up). One job per mailbox, keyed by its connection id.
   */
  emailSync: { name: "email.sync", data: z.object({ connectionId: z.string().min(1) }) },
} as const;

/** What the jobs do, from the composition root. */
export interface JobHandlers {
  expireApprovals(): Promise<unknown>;
  sendDigest(personId: string): Promise<unknown>;
  /** Absent when the calendar connector is not wired (its jobs are then skipped). */
  syncCalendar?: (connectionId: string) => Promise<unknown>;
  /** One sync session of a mailbox (connectors/email EmailService.runSession); absent when email is not wired. */
  syncMailbox?: (connectionId: string) => Promise<unknown>;
}

/**
 * Defines every job's handler on `scheduler` (before it starts). A payload that does not match its
 * schema is logged and skipped (it would fail the same way on every retry).
 */
export function registerJobs(scheduler: Scheduler, handlers: JobHandlers, options: { logger: Logger; now: () => Date; emailSessionMs?: number }): void {
  const parsed = <S extends z.ZodType>(schema: S, job: JobContext): z.infer<S> | null => {
    const result = schema.safeParse(job.data);
    if (result.success) return result.data;
    options.logger.error({ job: job.name, key: job.key, issues: result.error.issues }, "job payload invalid: skipped");
    return null;
  };
  scheduler.define(jobs.approvalExpire.name, async (job) => {
    if (parsed(jobs.approvalExpire.data, job)) await handlers.expireApprovals();
  });
  scheduler.define(jobs.digestSend.name, async (job) => {
    const data = parsed(jobs.digestSend.data, job);
    if (data) await handlers.sendDigest(data.personId);
  });
  const syncCalendar = handlers.syncCalendar;
  if (syncCalendar) {
    // A sync takes seconds, its interval minutes. Two syncs of one connection never overlap: the
    // calendar service serializes them in a process and holds a lease in the calendar store across
    // processes (the repeating job and a `:now` one are separate Agenda jobs, locked separately).
    scheduler.define(
      jobs.calendarSync.name,
      async (job) => {
        const data = parsed(jobs.calendarSync.data, job);
        if (data) await syncCalendar(data.connectionId);
      },
      { concurrency: 2, lockLifetimeMs: 10 * 60_000 },
    );
  }
  const syncMailbox = handlers.syncMailbox;
  if (syncMailbox) {
    // A session holds its lock for its whole length; a dead worker's session is taken over a minute after it would have ended.
    const session = options.emailSessionMs ?? 240_000;
    scheduler.define(
      jobs.emailSync.name,
      async (job) => {
        const data = parsed(jobs.emailSync.data, job);
        if (data) await syncMailbox(data.connectionId);
      },
      { concurrency: 50, lockLifetimeMs: session + 60_000 },
    );
  }
}

/**
 * Housekeeping: deletes processed-update records older than {@link inboundRetentionMs}, shortly after
 * start and then every 24 h (an unref'd timer: it never keeps the process alive). Returns a stop function.
 */
export function startHousekeeping(options: { pruneInbound: (before: Date) => Promise<number>; logger: Logger; now: () => Date }): () => void {
  const run = () => {
    options
      .pruneInbound(new Date(options.now().getTime() - inboundRetentionMs))
      .then((pruned) => options.logger.info({ pruned, retentionDays: inboundRetentionMs / 86_400_000 }, "pruned processed update ids"))
      .catch((err: unknown) => options.logger.warn({ err }, "could not prune processed update ids; trying again in 24 h"));
  };
  const first = setTimeout(run, 60_000);
  const daily = setInterval(run, 24 * 60 * 60 * 1000);
  first.unref();
  daily.unref();
  return () => {
    clearTimeout(first);
    clearInterval(daily);
  };
}
