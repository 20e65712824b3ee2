/**
 * Jobs: the catalogue of every Agenda job Familiar runs (name, payload schema, handler) and the
 * scheduler that loads Agenda only when there is a job to run. Agenda itself is in jobs/agenda,
 * imported lazily.
 */
export { inboundRetentionMs, jobs, registerJobs, retiredJobNames, startHousekeeping } from "./catalogue.js";
export { LazyScheduler, sqliteJobsExist } from "./lazy.js";
