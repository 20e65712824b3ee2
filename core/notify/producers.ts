import { z } from "zod";
import type { Store } from "../storage/index.js";
import type { JournalEntry, Task } from "../tasks/records.js";
import type { MonitorState } from "./records.js";
import { ownInitiative, proposalSchema, type Candidate, type Proposal, type Provenance } from "./candidate.js";
import { monitorStateSchema } from "./records.js";
import { withoutSilenceTokens } from "./silence.js";
import { isNoNews } from "./text.js";
import { proposeMessageToolName, reportMonitorStateToolName } from "./tools.js";

/**
 * Builds the candidates of a finished background activation for the runtime: what the activation
 * proposed (`propose_message`, validated), or its final text, with origin, urgency, needsAction,
 * occurrence key, monitor state and provenance filled from what the runtime knows.
 */

/** A wake-up's fields the producers read (from its checkpoint). */
export interface WakeupFields {
  note: string;
  notify: "always" | "if_worthwhile";
  /** Recorded by `schedule_wakeup`: where the wake-up came from (absent on wake-ups made before it existed). */
  provenance?: unknown;
}

const provenanceSchema = z.object({ tainted: z.boolean(), fromPersonWords: z.boolean() });

/**
 * The provenance of a wake-up's `notify: always` in the activation now running: it counts only when
 * the wake-up was scheduled from the person's own words in an untainted activation and this
 * activation is untainted too. A wake-up without recorded provenance counts as not the person's.
 */
export function wakeupProvenance(spec: WakeupFields | null, activationTainted: boolean): Provenance {
  const recorded = provenanceSchema.safeParse(spec?.provenance);
  if (!recorded.success) return { tainted: activationTainted, fromPersonWords: false };
  return { tainted: activationTainted || recorded.data.tainted, fromPersonWords: recorded.data.fromPersonWords };
}

/** Identifies one scheduled occurrence of a task's recurring work (its due time). */
export function occurrenceKeyOf(task: Pick<Task, "id">, dueAt: Date | null): string | null {
  return dueAt ? `${task.id}@${dueAt.toISOString()}` : null;
}

/** The reminder a wake-up delivers when the model failed or none is configured: its own note. */
export function reminderCandidate(spec: WakeupFields, occurrenceKey: string | null, provenance: Provenance): Candidate {
  return { text: `Reminder: ${spec.note}`, origin: "reminder", notify: "always", urgency: "normal", needsAction: false, occurrenceKey, provenance };
}

/** What one activation proposed and reported, from its journal (survives a crash and resume). */
export function activationReports(entries: JournalEntry[], taskId: string, activation: number): { proposals: Proposal[]; monitor: MonitorState | null } {
  const prefix = `${taskId}:a${activation}r`;
  const mine = entries
    .filter((e) => e.idempotencyKey.startsWith(prefix) && e.outcome?.ok === true)
    .sort((a, b) => a.intentAt.getTime() - b.intentAt.getTime() || a.idempotencyKey.localeCompare(b.idempotencyKey));
  const proposals: Proposal[] = [];
  let monitor: MonitorState | null = null;
  for (const e of mine) {
    if (e.tool === proposeMessageToolName) {
      const p = proposalSchema.safeParse(e.args);
      if (p.success) proposals.push(p.data);
    } else if (e.tool === reportMonitorStateToolName) {
      const m = monitorStateSchema.safeParse(e.args);
      if (m.success) monitor = m.data;
    }
  }
  return { proposals, monitor };
}

/**
 * The candidates of a background activation, in order. A pending approval or question comes
 * first (the runtime knows them); then each proposal; without proposals, the final text. A wake-up
 * the person asked for makes its message a reminder (`notify: always`, with its provenance); when
 * the model said nothing, the reminder's own note is the honest content.
 */
export async function backgroundCandidates(
  store: Pick<Store, "journal">,
  input: {
    task: Task;
    activation: number;
    text: string | null;
    waitsFor: { approval: boolean; reply: string | null };
    tainted: boolean;
    spec: WakeupFields | null;
    dueAt: Date | null;
    goal: string | null;
  },
): Promise<Candidate[]> {
  const { task, spec } = input;
  const { proposals, monitor } = activationReports(await store.journal.listJournal(task.id), task.id, input.activation);
  const occurrenceKey = occurrenceKeyOf(task, input.dueAt);
  const reminder = spec?.notify === "always";
  const provenance = reminder ? wakeupProvenance(spec, input.tainted) : { ...ownInitiative, tainted: input.tainted };
  const base = { notify: reminder ? ("always" as const) : ("if_worthwhile" as const), goal: input.goal, provenance };
  const out: Candidate[] = [];

  if (input.waitsFor.approval || input.waitsFor.reply !== null) {
    const text = input.text ?? input.waitsFor.reply;
    if (text) out.push({ ...base, notify: "if_worthwhile", provenance: { ...ownInitiative, tainted: input.tainted }, text, origin: input.waitsFor.approval ? "approval" : "question", urgency: "normal", needsAction: true });
  }
  // An asked-for wake-up is a reminder whatever the model made of it: a proposal or answer that says
  // nothing (empty, a no-news marker, a silence token) is not what the person asked to hear, so it
  // gives way to the reminder's own note below instead of being dropped as empty (issue 18).
  const said = (t: string) => !(reminder && isNoNews(withoutSilenceTokens(t)));
  proposals.filter((p) => said(p.text)).forEach((p, i) => {
    const origin = reminder ? "reminder" : p.origin;
    out.push({
      ...base,
      text: p.text,
      origin,
      urgency: p.urgency,
      needsAction: p.needsAction || p.origin === "question",
      deadline: p.deadline ? new Date(p.deadline) : null,
      goal: p.goal ?? input.goal,
      occurrenceKey: occurrenceKey && (i === 0 ? occurrenceKey : `${occurrenceKey}#${i}`),
      monitor: p.origin === "monitor" || proposals.length === 1 ? monitor : null,
    });
  });
  if (out.length === 0 && input.text !== null && said(input.text)) {
    out.push({ ...base, text: input.text, origin: reminder ? "reminder" : "checkin", urgency: "normal", needsAction: false, occurrenceKey, monitor });
  }
  if (out.length === 0 && reminder && spec) out.push(reminderCandidate(spec, occurrenceKey, provenance));
  return out;
}
