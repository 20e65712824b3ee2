/**
 * Scheduling: when work runs. The due loop that arms one timer at the earliest due time and claims
 * due rows (tasks, outbox) atomically, the process heartbeat that renews this process's leases, and
 * the `Scheduler` port for jobs that belong to no task (Agenda, in jobs/). It knows nothing of what
 * the work is.
 */
export { DueLoop, type DueSource } from "./due-loop.js";
export { Heartbeat, takeOverLeases } from "./heartbeat.js";
export { KeyedQueue } from "./keyed-queue.js";
export type {
  JobContext,
  JobData,
  JobHandler,
  JobTiming,
  ScheduleRequest,
  Scheduler,
  SchedulerStatus,
} from "./scheduler.js";
