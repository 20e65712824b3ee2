/**
 * Proactive candidate → notification filter → outbox: what a background activation wants to say
 * becomes candidates that say what they are (core/notify/producers.ts: a reminder the person asked
 * for, a question, an approval, the model's own proposals with their urgency and deadline, monitor
 * state), and the notifier decides send now / hold / drop. Delivery keys follow the occurrence, so a
 * wake-up occurrence that runs again says its piece once.
 */
import {
  type Notifier,
  backgroundCandidates,
  occurrenceKeyOf,
  reminderCandidate,
  wakeupProvenance,
} from "../notify/index.js";
import type { Store } from "../storage/index.js";
import type { Person } from "../persons/records.js";
import type { Task } from "../tasks/records.js";
import type { TaskCheckpoint, Trigger } from "../tasks/index.js";

/** What a finished background activation hands over. */
export interface ProactiveInput {
  task: Task;
  checkpoint: TaskCheckpoint;
  /** What started the activation (its occurrence, for wake-ups and check-ins). */
  origin: Trigger;
  person: Person;
  /** The activation's number (its journal holds the model's proposals). */
  activation: number;
  /** What the model said (null: nothing, or no model). */
  text: string | null;
  /** The activation's key (`<task>:a<n>[p<round>]`). */
  key: string;
  /** The task now waits for the person: an approval, or the answer to this question. */
  waitsFor: { approval: boolean; reply: string | null };
  /** Untrusted content entered the activation. */
  tainted: boolean;
  /** The activation's journal may hold proposals (it called tools, or it resumed an earlier run). */
  mayHaveProposals: boolean;
  /** The title of the task's goal, if any. */
  goal: string | null;
}

export class ProactiveFlow {
  constructor(
    private readonly deps: {
      store: Pick<Store, "journal">;
      notifier: Pick<Notifier, "propose">;
      /** Makes links in what a tainted activation says inert (issue 11; core/sentinel/inert-links.ts). */
      inertLinks?: (person: Person, text: string) => Promise<string>;
    },
  ) {}

  /** Proposes the activation's output (or an asked-for reminder's own note) to the notification filter. */
  async propose(input: ProactiveInput): Promise<void> {
    const { task, checkpoint, origin } = input;
    const spec = checkpoint.kind === "wakeup" ? checkpoint : null;
    const dueAt = origin.kind === "wakeup" || origin.kind === "checkin" ? new Date(origin.dueAt) : null;
    // An activation that called no tool has nothing in its journal to propose: skip the read.
    const journal: Pick<Store, "journal"> = input.mayHaveProposals ? this.deps.store : { journal: { ...this.deps.store.journal, listJournal: async () => [] } };
    const candidates = await backgroundCandidates(journal, {
      task,
      activation: input.activation,
      text: input.text,
      waitsFor: input.waitsFor,
      tainted: input.tainted,
      spec,
      dueAt,
      goal: input.goal,
    });
    const base = this.deliveryKeyBase(input, dueAt);
    for (const [i, proposed] of candidates.entries()) {
      const inert = this.deps.inertLinks;
      const candidate = inert && (input.tainted || proposed.provenance.tainted) ? { ...proposed, text: await inert(input.person, proposed.text) } : proposed;
      await this.deps.notifier.propose({ personId: task.personId, taskId: task.id, deliveryKey: `${base}${i > 0 ? `:${i}` : ""}`, candidate });
    }
  }

  /** Without a model: an asked-for reminder still arrives, with its own note as the honest content. */
  async remindWithoutModel(input: Pick<ProactiveInput, "task" | "checkpoint" | "origin" | "key"> & { person?: Person }): Promise<void> {
    const { task, checkpoint, origin } = input;
    if (checkpoint.kind !== "wakeup" || checkpoint.notify !== "always") return;
    const dueAt = origin.kind === "wakeup" ? new Date(origin.dueAt) : null;
    const reminder = reminderCandidate(checkpoint, occurrenceKeyOf(task, dueAt), wakeupProvenance(checkpoint, false));
    // A note made in a tainted activation may carry links out: made inert like anything a tainted activation says.
    const candidate = reminder.provenance.tainted && this.deps.inertLinks && input.person ? { ...reminder, text: await this.deps.inertLinks(input.person, reminder.text) } : reminder;
    await this.deps.notifier.propose({ personId: task.personId, taskId: task.id, deliveryKey: `${this.deliveryKeyBase(input, dueAt)}:nomodel`, candidate });
  }

  /** `notify:<task>@<occurrence>[p<round>]` for scheduled work, else `notify:<activation key>`. */
  private deliveryKeyBase(input: Pick<ProactiveInput, "task" | "key">, dueAt: Date | null): string {
    const round = /p\d+$/.exec(input.key)?.[0] ?? "";
    return `notify:${dueAt ? `${occurrenceKeyOf(input.task, dueAt)}${round}` : input.key}`;
  }
}
