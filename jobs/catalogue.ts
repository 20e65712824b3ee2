/**
 * The job catalogue: every Agenda job Familiar runs — its name, its payload schema and its handler
 * registration. Time-based *task* work (wake-ups, check-ins, retries of interrupted activations) is
 * not here: the task store holds when each task is due and the runtime's due loop claims it. Agenda
 * keeps the few jobs that belong to no task.
 */
import { z } from "zod";
import { approvalExpiryJobName } from "../core/runtime/approvals.js";
import { digestJobName } from "../core/notify/notifier.js";
import type { Logger } from "../core/log.js";
import type { JobContext, Scheduler } from "../core/scheduling/scheduler.js";

/** How long processed platform update ids are kept, ms: Telegram redelivers for up to 24 h, Slack retries within minutes. */
export const inboundRetentionMs = 14 * 24 * 60 * 60 * 1000;

/** Names and payload schemas of every job. */
export const jobs = {
  /** Expires an approval request at its deadline (edits its card, tells the waiting task). */
  approvalExpire: { name: approvalExpiryJobName, data: z.object({ approvalId: z.string().min(1) }) },
  /** Sends a person's digest of held messages. */
  digestSend: { name: digestJobName, data: z.object({ personId: z.string().min(1) }) },
  /** Deletes processed-update records older than {@link inboundRetentionMs} (daily). */
  inboundPrune: { name: "inbound.prune", data: z.object({}) },
} as const;

/** What the jobs do, from the composition root. */
export interface JobHandlers {
  expireApprovals(): Promise<unknown>;
  sendDigest(personId: string): Promise<unknown>;
  pruneInbound(before: Date): Promise<number>;
}

/**
 * Defines every job's handler on `scheduler` (before it starts). A payload that does not match its
 * schema is logged and skipped (it would fail the same way on every retry).
 */
export function registerJobs(scheduler: Scheduler, handlers: JobHandlers, options: { logger: Logger; now: () => Date }): void {
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
  scheduler.define(jobs.inboundPrune.name, async () => {
    const pruned = await handlers.pruneInbound(new Date(options.now().getTime() - inboundRetentionMs));
    options.logger.info({ pruned, retentionDays: inboundRetentionMs / 86_400_000 }, "pruned processed update ids");
  });
}

/** Schedules the repeating jobs that belong to no person (idempotent: the same key replaces). */
export async function scheduleHousekeeping(scheduler: Scheduler): Promise<void> {
  await scheduler.schedule({ name: jobs.inboundPrune.name, key: "daily", data: {}, timing: { kind: "every", intervalMs: 24 * 60 * 60 * 1000 } });
}
