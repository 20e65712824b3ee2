/**
 * `jobs/`: Agenda wiring — the SQLite backend for embedded mode and the `Scheduler` port
 * implementation (see core/scheduling/scheduler.ts).
 */
export { SqliteBackend, SqliteJobRepository, type SqliteBackendConfig } from "./sqlite-backend.js";
export { AgendaScheduler, type AgendaSchedulerOptions, type StoredJobData } from "./scheduler.js";
export { createEmbeddedScheduler, createMongoScheduler, type SchedulerTuning } from "./factories.js";
export { DueTimes, recordDueTimes } from "./due-times.js";
export { isValidTimeZone } from "./timing.js";
export { jobs, registerJobs, scheduleHousekeeping, inboundRetentionMs, type JobHandlers } from "./catalogue.js";
