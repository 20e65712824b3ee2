import { z } from "zod";
import type { MonitorState, NotificationOrigin, Urgency } from "./records.js";
import { monitorStateSchema, originSchema, urgencySchema } from "./records.js";

/**
 * A candidate message from background work, saying what it is. Producers set the fields: the
 * runtime for reminders, approvals and questions; the model through `propose_message` (validated);
 * monitors add their structured state (`report_monitor_state`).
 */
export interface Candidate {
  text: string;
  origin: NotificationOrigin;
  /** `always`: the person asked to be told (counts only with the person's provenance, see `Provenance`). */
  notify: "always" | "if_worthwhile";
  urgency: Urgency;
  /** The person must do something (answer, approve, act before a deadline). */
  needsAction: boolean;
  /** When the action or the news stops being useful, UTC. */
  deadline?: Date | null;
  /** The goal (title or id) the message serves, for the judge and the log. */
  goal?: string | null;
  /** For recurring work: identifies this occurrence (its scheduled time), so it is delivered at most once. */
  occurrenceKey?: string | null;
  monitor?: MonitorState | null;
  /** Filled by the runtime, never by the model (issue 11: only the person can make a notification "always"). */
  provenance: Provenance;
}

/**
 * Where a candidate's `notify: always` comes from. It counts only when `fromPersonWords` (it traces
 * to the person's own message, e.g. a wake-up scheduled in a turn the person started) and the
 * activations involved were not `tainted` by untrusted content; otherwise it is `if_worthwhile`.
 */
export interface Provenance {
  tainted: boolean;
  fromPersonWords: boolean;
}

/** The provenance of work nobody asked for explicitly (the model's own initiative). */
export const ownInitiative: Provenance = { tainted: false, fromPersonWords: false };

/** Fields a model may propose for a message (the runtime adds occurrence key and provenance). */
export const proposalSchema = z
  .object({
    text: z.string().trim().min(1).max(4_000),
    origin: z
      .enum(["checkin", "monitor", "question", "digest-item", "heartbeat"])
      .default("checkin")
      .describe("what produced it: checkin (goal check-in), monitor (a watched value or status), question (you need an answer), digest-item (fine to read later), heartbeat (routine status)"),
    urgency: urgencySchema
      .default("normal")
      .describe("low (whenever), normal, high (today, time-sensitive), critical (safety, money or travel at risk right now — interrupts quiet hours)"),
    needsAction: z.boolean().default(false).describe("the person must do something"),
    deadline: z.iso.datetime({ offset: true }).optional().describe("when it stops being useful or the action is due, ISO-8601 with offset"),
    goal: z.string().max(200).optional(),
  })
  .strict();

export type Proposal = z.infer<typeof proposalSchema>;

/** Validates a candidate built by code (the eval command, tests): throws ZodError naming the bad fields. */
export const candidateSchema = z
  .object({
    text: z.string().max(8_000),
    origin: originSchema,
    notify: z.enum(["always", "if_worthwhile"]).default("if_worthwhile"),
    urgency: urgencySchema.default("normal"),
    needsAction: z.boolean().default(false),
    deadline: z.coerce.date().nullish(),
    goal: z.string().max(500).nullish(),
    occurrenceKey: z.string().max(300).nullish(),
    monitor: monitorStateSchema.nullish(),
    provenance: z.object({ tainted: z.boolean(), fromPersonWords: z.boolean() }).strict().default({ tainted: false, fromPersonWords: true }),
  })
  .strict();
