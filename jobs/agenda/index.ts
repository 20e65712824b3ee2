/**
 * Agenda wiring: the `Scheduler` port on Agenda 6, its SQLite backend for embedded mode and the
 * MongoDB backend, due-time bookkeeping and schedule checks. Imported only when a job must run (see
 * jobs/lazy.ts).
 */
export { createEmbeddedScheduler, createMongoScheduler } from "./factories.js";
export type { AgendaScheduler } from "./scheduler.js";
