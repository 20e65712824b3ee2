import type { Clock } from "../clock.js";
import { assembleContext } from "../context/assemble.js";
import { updateRollingSummary } from "../context/summary.js";
import type { TokenCounter } from "../context/tokens.js";
import { runToolLoop } from "../harness/loop.js";
import { toChatTool } from "../harness/tool-dispatch.js";
import type { ExecuteTool, ToolLoopResult } from "../harness/types.js";
import type { PersonId } from "../ids.js";
import type { Logger } from "../log.js";
import type { ModelClient } from "../model/port.js";
import type { OutboxDelivery } from "../outbox/delivery.js";
import type { Store } from "../storage/ports.js";
import type { ConversationMessage, Person } from "../storage/types.js";
import type { ToolDefinition } from "../tools/tool.js";
import type { PersonQueue } from "./person-queue.js";

/** Short, honest texts for turns that produced no answer (field case M1: never a placeholder). */
export const turnFailureText = {
  empty: "Sorry — I couldn't come up with an answer to that just now. Could you try again?",
  stepLimit: "I ran out of steps while working on that. Say “continue” if you want me to keep going.",
  modelError: "I couldn't reach my language model just now, so I can't answer yet. Please try again in a moment.",
  noModel: "No model is configured yet, so I can't answer. Set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server) and restart Familiar.",
} as const;

export interface TurnRuntimeDeps {
  store: Store;
  model: ModelClient | null;
  tokens: TokenCounter;
  clock: Clock;
  logger: Logger;
  queue: PersonQueue;
  outbox: OutboxDelivery;
  tools: () => ToolDefinition[];
  /** Wraps every tool call (journal, Sentinel); default runs the tool. */
  executeTool?: ExecuteTool;
  budget: number;
  maxSteps: number;
  /** Shows typing on the person's channel while a turn runs (renewed by the caller's adapter). */
  typing?: (personId: PersonId) => () => void;
  /** Observes each finished turn (audit, benchmarks). */
  onTurn?: (event: { personId: PersonId; result: ToolLoopResult | null; promptTokens: number; replySeq: number | null }) => void;
}

/**
 * Conversation turns: a person's message requests a turn; turns for one person run one at a time
 * (PersonQueue), and a message that arrives while a turn runs is answered by the next turn, which
 * sees everything up to then. A turn that was interrupted (crash) is re-run on start because the
 * conversation still ends with an unanswered user message.
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

  private async runTurn(personId: PersonId, force: boolean): Promise<void> {
    const { store, clock } = this.deps;
    const person = await store.persons.getPerson(personId);
    if (!person) return;
    const recent = await store.conversation.listRecentMessages(personId, 20);
    const last = force ? [...recent].reverse().find((m) => m.role === "user") : recent.at(-1);
    if (!last || last.role !== "user") return;

    const stopTyping = this.deps.typing?.(personId);
    try {
      if (!this.deps.model) {
        await this.reply(person, last, turnFailureText.noModel);
        this.deps.onTurn?.({ personId, result: null, promptTokens: 0, replySeq: null });
        return;
      }
      const tools = this.deps.tools();
      const context = await assembleContext({
        store,
        tokens: this.deps.tokens,
        person,
        now: clock.now(),
        budget: this.deps.budget,
        tools: tools.map(toChatTool),
      });
      const result = await runToolLoop({
        model: this.deps.model,
        messages: context.messages,
        tools,
        maxSteps: this.deps.maxSteps,
        context: { personId, taskId: null, originMessageId: last.id, now: clock.now(), activationKey: `turn:${last.id}` },
        ...(this.deps.executeTool && { executeTool: this.deps.executeTool }),
      });
      const text = replyText(result);
      if (text === null) return; // aborted (shutting down): the turn re-runs on start
      const replySeq = await this.reply(person, last, text);
      this.deps.onTurn?.({ personId, result, promptTokens: context.tokens, replySeq });
      // Messages that arrived while this turn ran are answered by the next turn, right away.
      const newer = await store.conversation.listMessagesAfter(personId, context.lastSeq, 50);
      if (newer.some((m) => m.role === "user")) void this.requestTurn(personId, true);
      await this.summarize(person, context.firstVerbatimSeq);
    } finally {
      stopTyping?.();
    }
  }

  /** Records the answer in the conversation and the outbox in one transaction, then delivers it. */
  private async reply(person: Person, answering: ConversationMessage, text: string): Promise<number> {
    const { store, clock } = this.deps;
    const seq = await store.transaction(async () => {
      const message = await store.conversation.appendMessage({
        personId: person.id,
        role: "assistant",
        channel: answering.channel,
        text,
        taskId: null,
      });
      await store.outbox.enqueueOutbound(
        { personId: person.id, deliveryKey: `reply:${answering.id}`, text, channel: answering.channel },
        clock.now(),
      );
      return message.seq;
    });
    await this.deps.outbox.deliver(person.id);
    return seq;
  }

  private async summarize(person: Person, keepFromSeq: number): Promise<void> {
    if (!this.deps.model) return;
    try {
      await updateRollingSummary({ store: this.deps.store, model: this.deps.model, tokens: this.deps.tokens, person, keepFromSeq });
    } catch (err) {
      this.deps.logger.warn({ err, personId: person.id }, "rolling summary not updated");
    }
  }
}

/** The text to send for a loop result; null when nothing should be said (aborted). */
function replyText(result: ToolLoopResult): string | null {
  switch (result.kind) {
    case "reply":
      return result.text;
    case "empty":
      return turnFailureText.empty;
    case "step_limit":
      return turnFailureText.stepLimit;
    case "error":
      return turnFailureText.modelError;
    case "aborted":
      return null;
  }
}
