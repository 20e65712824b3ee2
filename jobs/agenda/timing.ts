/**
 * Checks a `ScheduleRequest` and applies its timing to an Agenda job. Cron expressions are
 * evaluated by Agenda's own cron-parser (through `Job.repeatEvery`), the same code that computes
 * every later run, so what validates here is what runs.
 */
import type { Job } from "agenda";
import { ValidationError } from "../../core/errors.js";
import type { JobTiming, ScheduleRequest } from "../../core/scheduling/index.js";

/** True if `timeZone` is an IANA zone the runtime knows (`Asia/Tokyo`, `UTC`). */
export function isValidTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== "string" || timeZone.trim() === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** Shape checks that do not need Agenda; throws ValidationError listing every problem. */
export function checkRequest(request: ScheduleRequest): void {
  const issues: string[] = [];
  if (typeof request.name !== "string" || request.name.trim() === "") issues.push("name: a non-empty job name");
  if (typeof request.key !== "string" || request.key === "") issues.push("key: a non-empty idempotency key");
  if (request.data === null || typeof request.data !== "object" || Array.isArray(request.data)) issues.push("data: a JSON object");
  const t: JobTiming | undefined = request.timing;
  switch (t?.kind) {
    case "at":
      if (!(t.at instanceof Date) || Number.isNaN(t.at.getTime())) issues.push("timing.at: a valid Date");
      break;
    case "now":
      break;
    case "every":
      if (!Number.isSafeInteger(t.intervalMs) || t.intervalMs <= 0) issues.push("timing.intervalMs: a positive whole number of milliseconds");
      break;
    case "cron":
      if (typeof t.cron !== "string" || t.cron.trim().split(/\s+/).length !== 5) {
        issues.push(`timing.cron: 5 fields "minute hour day-of-month month day-of-week", got ${JSON.stringify(t.cron)}`);
      }
      if (!isValidTimeZone(t.timeZone)) issues.push(`timing.timeZone: an IANA time zone such as "Europe/Berlin", got ${JSON.stringify(t.timeZone)}`);
      break;
    default:
      issues.push('timing.kind: one of "at", "now", "every", "cron"');
  }
  if (issues.length > 0) throw new ValidationError(`cannot schedule ${request.name}/${request.key}: ${issues.join("; ")}`, issues);
}

/**
 * Sets the job's first run. Repeating timings skip the immediate run: `every` first runs one
 * interval from now, `cron` at its next matching minute in `timeZone`.
 *
 * @throws ValidationError when Agenda cannot compute a next run (an out-of-range cron field).
 */
export function applyTiming(job: Job<unknown>, timing: JobTiming, now: Date): void {
  switch (timing.kind) {
    case "at":
      job.schedule(timing.at);
      return;
    case "now":
      job.schedule(now);
      return;
    case "every":
      job.attrs.nextRunAt = now;
      job.repeatEvery(timing.intervalMs, { skipImmediate: true });
      return;
    case "cron": {
      job.attrs.nextRunAt = now;
      job.repeatEvery(timing.cron.trim(), { timezone: timing.timeZone, skipImmediate: true });
      const next = job.attrs.nextRunAt as Date | null;
      if (job.attrs.failReason || !(next instanceof Date) || Number.isNaN(next.getTime())) {
        throw new ValidationError(`cron expression ${JSON.stringify(timing.cron)} in ${timing.timeZone} is invalid: ${job.attrs.failReason ?? "no next run"}`, [
          `timing.cron: ${job.attrs.failReason ?? "no next run"}`,
        ]);
      }
      return;
    }
  }
}
