import type { Clock } from "../clock.js";
import { updateRollingSummary } from "../context/summary.js";
import type { TokenCounter } from "../context/tokens.js";
import type { PersonId } from "../ids.js";
import type { Logger } from "../log.js";
import type { ModelClient } from "../model/port.js";
import type { OutboxDelivery } from "../outbox/delivery.js";
import type { Store } from "../storage/ports.js";
import type { ConversationMessage, Person, Task } from "../storage/types.js";
import type { PersonQueue } from "./person-queue.js";
import { failureText, taskKind, type TaskRuntime } from "./tasks.js";

/** Short, honest texts for turns that produced no answer (field case M1: never a placeholder). */
export const turnFailureText = {
  empty: failureText("empty"),
  stepLimit: failureText("step_limit"),
  modelError: failureText("error"),
  noModel: failureText("no_model"),
} as const;

export interface TurnRuntimeDeps {
  store: Store;
  model: ModelClient | null;
  tokens: TokenCounter;
  clock: Clock;
  logger: Logger;
  queue: PersonQueue;
  outbox: OutboxDelivery;
  tasks: TaskRuntime;
  /** Shows typing on the person's channel while a turn runs. */
  typing?: (personId: PersonId) => () => void;
}

/**
 * Conversation turns. A person's message requests a turn; turns for one person run one at a time
 * (PersonQueue). Each turn is a task (kind `turn`), so its tool calls are journaled and a turn
 * interrupted by a crash resumes from its journal instead of repeating side effects. A message that
 * arrives while a turn runs is answered by the next turn, right after. When a task waits for the
 * person's reply, their message resumes that task instead.
 */
export class TurnRuntime {
  private readonly requested = new Set<string>();
  private readonly forced = new Set<string>();

  constructor(private readonly deps: TurnRuntimeDeps) {}

  /**
   * Queues a turn for the person unless one is already queued and not yet started. `force` answers
   * even when the conversation ends with an assistant message (a message arrived while the previous
   * turn ran, and that turn's reply was appended after it).
   */
  requestTurn(personId: PersonId, force = false): Promise<void> {
    if (force) this.forced.add(personId);
    if (this.requested.has(personId)) return Promise.resolve();
    this.requested.add(personId);
    return this.deps.queue
      .run(personId, async () => {
        this.requested.delete(personId);
        const forced = this.forced.delete(personId);
        await this.runTurn(personId, forced);
      })
      .catch((err: unknown) => {
        this.requested.delete(personId);
        this.deps.logger.error({ err, personId }, "conversation turn failed");
      });
  }

  /** Re-requests turns for every person whose conversation ends with an unanswered message. */
  async recover(): Promise<number> {
    let after: string | undefined;
    let count = 0;
    do {
      const page = await this.deps.store.persons.listPersons({ limit: 200, ...(after && { after }) });
      for (const person of page.items) {
        const [last] = await this.deps.store.conversation.listRecentMessages(person.id, 1);
        if (last?.role === "user") {
          void this.requestTurn(person.id);
          count++;
        }
      }
      after = page.next;
    } while (after);
    return count;
  }

  /** Records a turn's answer in the conversation and the outbox (once per key), then delivers it. */
  async deliverReply(task: Task, person: Person, text: string, deliveryKey: string): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const answering = (task.checkpoint as { messageId?: string } | null)?.messageId;
    const original = answering ? await store.conversation.getMessage(answering as never) : null;
    const recent = original ? [original] : await store.conversation.listRecentMessages(person.id, 20);
    const channel = [...recent].reverse().find((m) => m.role === "user")?.channel ?? "local";
    await store.transaction(async () => {
      const row = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey, text, channel }, now);
      if (row.createdAt.getTime() === now.getTime()) {
        await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel, text, taskId: taskKind(task) === "turn" ? null : task.id });
      }
    });
    await this.deps.outbox.deliver(person.id);
  }

  private async runTurn(personId: PersonId, force: boolean): Promise<void> {
    const { store } = this.deps;
    const person = await store.persons.getPerson(personId);
    if (!person) return;
    const recent = await store.conversation.listRecentMessages(personId, 20);
    const last = force ? [...recent].reverse().find((m) => m.role === "user") : recent.at(-1);
    if (!last || last.role !== "user") return;

    const stopTyping = this.deps.typing?.(personId);
    let lastSeq = last.seq;
    let firstVerbatimSeq: number | null = null;
    try {
      const waiting = await store.tasks.findWaitingTasks({ kind: "reply", personId });
      const outcome = waiting[0]
        ? await this.deps.tasks.runNow(waiting[0], { trigger: "the person replied (their latest message)", from: "waiting", direct: true, originMessageId: last.id })
        : await this.deps.tasks.runNow(await this.turnTask(person, last), { trigger: null, direct: true, originMessageId: last.id });
      if (outcome) {
        lastSeq = outcome.context.lastSeq;
        firstVerbatimSeq = outcome.context.firstVerbatimSeq;
      }
    } finally {
      stopTyping?.();
    }
    // Messages that arrived while this turn ran are answered by the next turn, right away.
    const newer = await store.conversation.listMessagesAfter(personId, lastSeq, 50);
    if (newer.some((m) => m.role === "user")) void this.requestTurn(personId, true);
    if (firstVerbatimSeq !== null) await this.summarize(person, firstVerbatimSeq);
  }

  /** The open turn task answering `message` (after a crash), or a new one. */
  private async turnTask(person: Person, message: ConversationMessage): Promise<Task> {
    const { store } = this.deps;
    const open = await store.tasks.listTasks({ personId: person.id, status: ["pending", "running"] }, { limit: 50 });
    const existing = open.items.find((t) => taskKind(t) === "turn" && (t.checkpoint as { messageId?: string }).messageId === message.id);
    return existing ?? store.tasks.createTask({ personId: person.id, title: "conversation turn", checkpoint: { type: "turn", messageId: message.id } });
  }

  private async summarize(person: Person, keepFromSeq: number): Promise<void> {
    if (!this.deps.model || this.deps.model.configured === false) return;
    try {
      await updateRollingSummary({ store: this.deps.store, model: this.deps.model, tokens: this.deps.tokens, person, keepFromSeq });
    } catch (err) {
      this.deps.logger.warn({ err, personId: person.id }, "rolling summary not updated");
    }
  }
}
