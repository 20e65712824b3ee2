/**
 * Tasks: what a task carries between activations — its typed checkpoint, a discriminated union by
 * kind parsed with zod when loaded (checkpoint.ts) — and the journal that makes side effects happen
 * once: intent before a call, outcome after, replay on resume (journal.ts). It runs no activation
 * (core/runtime does).
 */
export {
  checkinCheckpoint,
  inheritedOf,
  jobProvenance,
  onChangeSchema,
  parseCheckpoint,
  runtimeOf,
  toStored,
  turnSpecSchema,
  wakeupCheckpoint,
  wakeupSpecSchema,
  type Inherited,
  type JobProvenance,
  type OnChange,
  type ParkedRuntime,
  type RuntimeState,
  type TaskCheckpoint,
  type Trigger,
  type TurnCheckpoint,
  type WakeupCheckpoint,
} from "./checkpoint.js";
export { findTool, journalHistory, journaled, recordPlan } from "./journal.js";
export { legalTransitions, type ClaimedTask, type JournalEntry, type Lease, type NewJournalIntent, type NewTask, type Task, type TaskKind, type TaskState, type TaskStatus, type WaitCondition, type WaitMatch } from "./records.js";
