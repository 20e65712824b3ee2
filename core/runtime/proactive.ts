/**
 * Proactive candidate → notification filter → outbox: what a background activation wants to say is
 * a candidate; the notifier decides send now / hold for the digest / drop. The runtime says what the
 * candidate is (a reminder the person asked for, a check-in, a question that needs an answer); the
 * delivery key is the occurrence's, so a wake-up occurrence that runs again says its piece once.
 */
import type { Notifier } from "../notify/notifier.js";
import type { Person, Task } from "../storage/types.js";
import type { TaskCheckpoint, Trigger } from "./checkpoint.js";

/** What a finished background activation hands over. */
export interface ProactiveInput {
  task: Task;
  checkpoint: TaskCheckpoint;
  /** What started the activation (its occurrence, for wake-ups and check-ins). */
  origin: Trigger;
  person: Person;
  /** What the model said (null: nothing, or no model). */
  text: string | null;
  /** The activation's key (`<task>:a<n>[p<round>]`). */
  key: string;
  /** The person must act: the task asked them a question or waits for an approval. */
  needsAction: boolean;
}

export class ProactiveFlow {
  constructor(private readonly deps: { notifier: Pick<Notifier, "propose"> }) {}

  /** Proposes the activation's output (or an asked-for reminder's own note) to the notification filter. */
  async propose(input: ProactiveInput): Promise<void> {
    const { task, checkpoint, origin, text } = input;
    const askedFor = checkpoint.kind === "wakeup" && checkpoint.notify === "always";
    // An asked-for reminder still arrives when the model fails or has nothing to add: its note is the honest content.
    const candidate = text ?? (askedFor && checkpoint.kind === "wakeup" ? `Reminder: ${checkpoint.note}` : null);
    if (candidate === null) return;
    const round = input.key.match(/p\d+$/)?.[0] ?? "";
    const occurrence = origin.kind === "wakeup" || origin.kind === "checkin" ? `${task.id}@${origin.dueAt}${round}` : input.key;
    await this.deps.notifier.propose({
      personId: task.personId,
      taskId: task.id,
      deliveryKey: `notify:${occurrence}`,
      candidate: { text: candidate, askedFor, mustAct: input.needsAction },
    });
  }
}
