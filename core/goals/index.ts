/**
 * Goals: what a person hands Familiar to work on for weeks, with an optional recurring check-in (a
 * cron in a time zone). The room holds the records; the core tools (core/runtime) and the
 * dashboard's typed API change them through the store. It must not run work itself: check-ins are
 * tasks (core/tasks).
 */
export { type CheckInSchedule, type Goal, type GoalPatch, type GoalStatus, type NewGoal } from "./records.js";
