/**
 * A task's checkpoint, typed: what the task is (its kind's spec), the state of its current
 * activation (`runtime`) and what resumed it (`input`). Parsed with zod whenever a task is loaded;
 * round-1 checkpoints (`type: "turn" | "wakeup" | "checkin"`, turns bound to a `messageId`) are read too.
 */
import { z } from "zod";
import type { Json } from "../json.js";
import type { Task, TaskKind } from "./records.js";
import { isValidTimeZone } from "../time/index.js";

const isoDate = z.iso.datetime({ offset: true });
const timeZone = z.string().refine(isValidTimeZone, "an IANA time zone such as Europe/Berlin");

/** Outside content that came with a trigger (a webhook body): untrusted, taints the activation. */
export const observationSchema = z.object({ source: z.string(), text: z.string() });

/**
 * What started (or resumed) an activation. Stored with the task, so a restarted process resumes it
 * with the same inputs and never adopts later ones.
 * - `turn`: the person's messages `fromSeq..toSeq` (the task's own range);
 * - `reply`: a task that waited for the person's reply got their messages `fromSeq..toSeq`;
 * - `wakeup` / `checkin`: the occurrence due at `dueAt` (ISO);
 * - `event`: a webhook delivered `observations`;
 * - `change`: a connection recorded a change the task waits for (a new mail), seq `seq`, with its
 *   `observations` (what the connector keeps of it, already filtered: untrusted);
 * - `approval`: the person decided an approval request the activation asked for;
 * - `recovery`: work interrupted by a restart resumes.
 */
export const triggerSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("turn") }),
  z.object({ kind: z.literal("reply"), fromSeq: z.number().int(), toSeq: z.number().int() }),
  z.object({ kind: z.literal("wakeup"), dueAt: isoDate }),
  z.object({ kind: z.literal("checkin"), dueAt: isoDate }),
  z.object({ kind: z.literal("event"), hookId: z.string(), description: z.string(), observations: z.array(observationSchema) }),
  z.object({ kind: z.literal("change"), seq: z.number().int().min(0), connectionId: z.string(), description: z.string(), observations: z.array(observationSchema) }),
  z.object({
    kind: z.literal("approval"),
    approvalId: z.string(),
    outcome: z.enum(["approved", "denied", "expired"]),
    summary: z.string(),
    scope: z.string().nullable(),
    /** This denial tripped the denial breaker (core/approvals/denials.ts): the task is paused, not resumed. */
    paused: z.enum(["task", "person"]).optional(),
  }),
  z.object({ kind: z.literal("recovery") }),
]);
export type Trigger = z.infer<typeof triggerSchema>;

/** Bookkeeping of the task's current (or last) activation. */
const runtimeFields = z.object({
  /** Number of the current (or last) activation, from 1. */
  activation: z.number().int().min(0),
  /** How often the current activation was resumed after an interruption. */
  resumes: z.number().int().min(0),
  /** True while an activation is in progress (a crash leaves it true: the next claim resumes it). */
  open: z.boolean(),
  /** Resumptions of the current activation after an approval (each may say something new). */
  round: z.number().int().min(0).default(0),
  /** Set while the task waits for an approval: the request the call asked for. */
  approvalId: z.string().nullish(),
  /** What started the activation (the first trigger); decides whether it answers directly. */
  origin: triggerSchema.optional(),
  /** The latest trigger (the same as `origin`, or what resumed it: an approval). */
  trigger: triggerSchema.optional(),
  /** Highest conversation seq the activation may see (fixed when it starts; later messages have their own turn). */
  horizonSeq: z.number().int().min(0).optional(),
  /** Background work: the person's messages from this seq on were waiting for their own turn when it started (hidden from it). */
  hideUserFrom: z.number().int().min(0).nullish(),
  /** The activation's session (kept across its resumptions, so session grants still apply after an approval). */
  sessionId: z.string().optional(),
  /** When the denial breaker last paused the task (ISO): denials before it no longer count once it is resumed. */
  pausedAt: isoDate.optional(),
  /** Highest activation number ever started (a parked activation may be resumed after later ones). */
  lastActivation: z.number().int().min(0).optional(),
  /** A watch: the latest change its activations started from (a parked call resumed after later ones must not re-arm the watch before it). */
  changeSeq: z.number().int().min(0).optional(),
  /** The person's daily model budget ran out: the activation waits, kept open, for its reset at this time (ISO). */
  budgetWait: isoDate.optional(),
});

/**
 * The runtime state, and — for recurring work — the activation **parked** while its approval card
 * waits (issue 18 item 9): the job's later occurrences run as new activations meanwhile, and the
 * decision resumes the parked one (its own history and journal) as one pending call.
 */
export const runtimeSchema = runtimeFields.extend({ parked: runtimeFields.optional() });
export type RuntimeState = z.infer<typeof runtimeSchema>;
export type ParkedRuntime = z.infer<typeof runtimeFields>;

const common = { runtime: runtimeSchema.optional(), input: triggerSchema.nullish() };

/**
 * Where a job (a wake-up, a goal's check-in) came from: scheduled in an activation the person's own
 * messages started (`fromPersonWords`), and whether that activation was tainted (`source`: the
 * untrusted content it had read). Its `notify: always` counts only from the person's words,
 * untainted (core/notify/producers.ts); an activation it starts begins tainted when it was made
 * tainted (issue 11). `depth` is its job-chain depth: 1 when the person's own activation made it,
 * n + 1 when an activation of a depth-n job did. Absent on older jobs (then: untainted, depth 1);
 * `source` and `depth` are absent on wake-ups made before they existed.
 */
export const provenanceSchema = z.object({
  tainted: z.boolean(),
  fromPersonWords: z.boolean(),
  source: z.string().max(2_000).nullish(),
  depth: z.number().int().min(1).optional(),
});
export type JobProvenance = z.infer<typeof provenanceSchema>;

/** The provenance of a job a tool call makes: its taint, whether the person's words started it, its chain depth. */
export function jobProvenance(ctx: { tainted?: boolean; taintSource?: string; originMessageId: string | null; chainDepth?: number }): JobProvenance {
  const tainted = ctx.tainted === true;
  return { tainted, fromPersonWords: ctx.originMessageId !== null && !tainted, source: tainted ? (ctx.taintSource ?? "outside content") : null, depth: (ctx.chainDepth ?? 0) + 1 };
}

export const turnSpecSchema = z.object({ fromSeq: z.number().int().min(0), toSeq: z.number().int().min(0), ...common });

/**
 * A wake-up that comes when one of the person's connections records a matching change (a new mail
 * from the school): `kind` is the connection kind whose changes count, `connectionId` one connection
 * or any of that kind (null); `filter` is the kind's structured filter, matched deterministically
 * (the model is not woken for what does not match); `once` ends the watch after the first match.
 */
export const onChangeSchema = z.object({
  kind: z.string().min(1).max(40),
  connectionId: z.string().nullable(),
  filter: z.record(z.string(), z.json()),
  once: z.boolean(),
  /** The filter in words, for the model and the person. */
  description: z.string().max(500),
});
export type OnChange = z.infer<typeof onChangeSchema>;

export const wakeupSpecSchema = z.object({
  note: z.string(),
  notify: z.enum(["always", "if_worthwhile"]),
  timing: z.union([z.object({ at: isoDate }), z.object({ cron: z.string(), timezone: timeZone }), z.object({ on: onChangeSchema })]),
  provenance: provenanceSchema.optional(),
  ...common,
});
export const checkinSpecSchema = z.object({ cron: z.string(), timeZone: timeZone, provenance: provenanceSchema.optional(), ...common });

export type TurnCheckpoint = z.infer<typeof turnSpecSchema>;
export type WakeupCheckpoint = z.infer<typeof wakeupSpecSchema>;
export type CheckinCheckpoint = z.infer<typeof checkinSpecSchema>;

/** A parsed checkpoint with its task's kind. */
export type TaskCheckpoint =
  | ({ kind: "turn" } & TurnCheckpoint)
  | ({ kind: "wakeup" } & WakeupCheckpoint)
  | ({ kind: "checkin" } & CheckinCheckpoint);

/** What an activation inherits from its task: starting taint (and its source) and job-chain depth. */
export interface Inherited {
  tainted: boolean;
  source: string | null;
  depth: number;
}

/**
 * What an activation of a task starts with (issue 11): a turn is the person's own (depth 0); a
 * wake-up or check-in has the depth and taint it was made with, and is tainted too when its goal is.
 */
export function inheritedOf(checkpoint: TaskCheckpoint, goal: { taint: { source: string } | null } | null): Inherited {
  if (checkpoint.kind === "turn") return { tainted: false, source: null, depth: 0 };
  const p = checkpoint.provenance;
  const own = p?.tainted === true ? (p.source ?? "outside content") : null;
  const source = own ?? (goal?.taint ? `goal made from ${goal.taint.source}` : null);
  return { tainted: source !== null, source, depth: p?.depth ?? 1 };
}

/** Thrown when a stored checkpoint does not match its kind's schema (the task cannot run safely). */
export class CheckpointError extends Error {
  readonly code = "VALIDATION" as const;
  constructor(taskId: string, kind: TaskKind, detail: string) {
    super(`task ${taskId}: its ${kind} checkpoint is invalid (${detail})`);
    this.name = "CheckpointError";
  }
}

const schemas = { turn: turnSpecSchema, wakeup: wakeupSpecSchema, checkin: checkinSpecSchema } as const;

/** Parses a task's checkpoint by its kind. Throws CheckpointError when it does not match. */
export function parseCheckpoint(task: Task): TaskCheckpoint {
  const parsed = schemas[task.kind].safeParse(task.checkpoint ?? {});
  if (!parsed.success) throw new CheckpointError(task.id, task.kind, parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return { kind: task.kind, ...parsed.data } as TaskCheckpoint;
}

/** The runtime state of a checkpoint (a fresh one for a task that never ran). */
export function runtimeOf(checkpoint: TaskCheckpoint): RuntimeState {
  return checkpoint.runtime ?? { activation: 0, resumes: 0, open: false, round: 0 };
}

/** The checkpoint as stored: the spec without `kind` (the task row has it), with `runtime` and `input` replaced. */
export function toStored(checkpoint: TaskCheckpoint, patch: { runtime?: RuntimeState; input?: Trigger | null }): Json {
  const { kind: _kind, ...rest } = { ...checkpoint, ...patch };
  return JSON.parse(JSON.stringify(rest)) as Json;
}

/** The spec of a new wake-up task's checkpoint. */
export function wakeupCheckpoint(spec: Omit<WakeupCheckpoint, "runtime" | "input">): Json {
  return JSON.parse(JSON.stringify(wakeupSpecSchema.parse(spec))) as Json;
}

/** The spec of a new check-in task's checkpoint. */
export function checkinCheckpoint(spec: Omit<CheckinCheckpoint, "runtime" | "input">): Json {
  return JSON.parse(JSON.stringify(checkinSpecSchema.parse(spec))) as Json;
}
