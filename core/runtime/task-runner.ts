/**
 * Runs claimed tasks: the due loop's source for tasks. Every kind of work — a turn answering the
 * person's messages, a wake-up, a check-in, a task resumed by an approval, a webhook or a reply, an
 * activation interrupted by a crash — is a task that became due in the store; this module claims it,
 * starts or resumes its activation with the inputs stored in its checkpoint, and moves it on.
 */
import type { Clock } from "../clock.js";
import type { Logger } from "../log/index.js";
import type { ModelClient } from "../model/index.js";
import { asId, type HookId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { ClaimedTask, Task, TaskState } from "../tasks/records.js";
import type { ConversationMessage } from "../conversation/records.js";
import type { Person } from "../persons/records.js";
import type { ToolDefinition } from "../tools/index.js";
import { failureText, nextChangeWait, nextOccurrence, nextState, pausedState } from "./after-activation.js";
import { newSessionId, runActivation, type ActivationDeps, type ActivationOutcome } from "./activation.js";
import {
  inheritedOf,
  parseCheckpoint,
  runtimeOf,
  toStored,
  type RuntimeState,
  type TaskCheckpoint,
  type Trigger,
} from "../tasks/index.js";
import type { Outbound } from "../outbox/index.js";
import type { DueSource } from "../scheduling/index.js";
import { withoutSilenceTokens } from "../notify/index.js";
import { resumeDecidedApproval } from "./approval-resume.js";
import type { ModelBudget } from "./model-budget.js";
import { highestActivation, settleRuntime, unpark } from "./parking.js";
import type { ProactiveFlow } from "./proactive.js";
import { answeredMessage, answerRange, handOverToWaitingTask, unansweredFrom } from "./turn.js";
import { initialTrigger, triggerText, type WakeupFlow } from "./wakeup.js";

export interface TaskRunnerDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** This process's lease owner id (renewed by the heartbeat). */
  owner: string;
  leaseMs: number;
  /** The configured model, read per activation (it can be set up while Familiar runs). */
  model: () => ModelClient | null;
  activation: Omit<ActivationDeps, "model" | "tools" | "store" | "clock">;
  tools: () => readonly ToolDefinition[];
  wakeups: WakeupFlow;
  proactive: ProactiveFlow;
  /** Where replies are queued (the one outbound door). */
  outbound: Pick<Outbound, "queue" | "wake">;
  /** Wakes the task loop (a task became due). */
  poke: () => void;
  /** Shows typing on the channel the person wrote from while a turn runs; returns the stop function. */
  typing?: (person: Person, channel: ConversationMessage["channel"]) => () => void;
  /** Where the setup page is (told when no model is configured). */
  setupUrl?: () => string;
  /**
   * Rewrites what a tainted activation says before it is queued, so links and images to hosts
   * neither granted nor the person's own are inert text (issue 11; core/sentinel/inert-links.ts).
   */
  inertLinks?: (person: Person, text: string) => Promise<string>;
  /** After a turn: fold older messages into the rolling summary (best effort). */
  summarize?: (person: Person, keepFromSeq: number) => Promise<void>;
  /** A watch re-armed (waits for the next connection change): changes that came meanwhile are dispatched. */
  watchArmed?: (personId: Person["id"]) => void;
  /** The task now waits for a webhook: an event that came before it waited (kept by `WebhookEvents`) resumes it. */
  keptEvents?: (hookId: HookId) => Promise<number>;
  /** The per-person daily model budget: counts every call; once used up, activations wait for the person's next midnight. */
  budget?: Pick<ModelBudget, "meter" | "exhaustedUntil" | "tell">;
}

/** Messages between the summary and the verbatim window before a summary update is worth a call (context/summary.ts folds at this size). */
const SUMMARY_BATCH = 12;

/** The DueSource of the task loop. */
export class TaskRunner implements DueSource<ClaimedTask> {
  constructor(private readonly deps: TaskRunnerDeps) {}

  nextDueAt(busy: ReadonlySet<string>): Promise<Date | null> {
    return this.deps.store.tasks.nextDueAt({ excludePersons: [...busy].map((id) => asId("person", id)) });
  }

  claim(busy: ReadonlySet<string>): Promise<ClaimedTask | null> {
    const { store, clock, owner, leaseMs } = this.deps;
    return store.tasks.claimDueTask({ owner, now: clock.now(), leaseMs, excludePersons: [...busy].map((id) => asId("person", id)) });
  }

  keyOf(claimed: ClaimedTask): string {
    return claimed.task.personId;
  }

  describe(claimed: ClaimedTask): Record<string, unknown> {
    return { taskId: claimed.task.id, kind: claimed.task.kind, personId: claimed.task.personId };
  }

  /** Runs a claimed task; a failure fails the task (with its reason) instead of leaving it claimed. */
  async run(claimed: ClaimedTask): Promise<void> {
    try {
      await this.runClaimed(claimed);
    } catch (err) {
      this.deps.logger.error({ err, taskId: claimed.task.id }, "activation failed");
      await this.release(claimed.task, { status: "failed", error: String((err as Error)?.message ?? err).slice(0, 500) }).catch((releaseErr: unknown) =>
        this.deps.logger.warn({ err: releaseErr, taskId: claimed.task.id }, "could not mark the task failed (its lease will expire)"),
      );
    }
  }

  private async runClaimed({ task, dueAt }: ClaimedTask): Promise<void> {
    const { store } = this.deps;
    const checkpoint = parseCheckpoint(task);
    const person = await store.persons.getPerson(task.personId);
    if (!person) return this.release(task, { status: "cancelled", reason: "person no longer exists" });
    // A decided card of recurring work resumes the activation parked with it (core/runtime/parking.ts).
    const previous = unpark(runtimeOf(checkpoint), checkpoint.input);

    // A new activation starts from the stored input (what resumed the task) or from what the task is.
    let trigger: Trigger;
    if (previous.open) {
      trigger = checkpoint.input ?? previous.trigger ?? { kind: "recovery" };
    } else {
      trigger = checkpoint.input ?? initialTrigger(task, dueAt);
      if (trigger.kind === "turn" && checkpoint.kind === "turn" && (await handOverToWaitingTask(this.deps, task, checkpoint))) return;
      if ((trigger.kind === "wakeup" || trigger.kind === "checkin") && (await this.deps.wakeups.gate(task, checkpoint, person, new Date(trigger.dueAt))).action !== "run") return;
      // A change a watch waited for is held while the person or its goal is paused (never skipped as late).
      if (trigger.kind === "change" && (await this.deps.wakeups.gate(task, checkpoint, person, this.deps.clock.now())).action !== "run") return;
    }
    // The denial that resumed it tripped the breaker: the task pauses without another model call.
    if (trigger.kind === "approval" && trigger.paused !== undefined) return this.pause(task, checkpoint, previous, trigger.paused);
    const model = this.deps.model();
    if (!model) return this.withoutModel(task, checkpoint, previous, trigger, person);
    await this.activate(task, checkpoint, previous, trigger, person, model);
  }

  private async activate(task: Task, checkpoint: TaskCheckpoint, previous: RuntimeState, trigger: Trigger, person: Person, model: ModelClient): Promise<void> {
    const { store, clock, owner, leaseMs } = this.deps;
    const resumedByInput = previous.open && checkpoint.input != null;
    const { budgetWait, ...resumed } = previous;
    const runtime: RuntimeState & { sessionId: string } = previous.open
      ? // Every resumption gets fresh idempotency keys (r<resumes>); a decided approval also starts a new round of output.
        { ...resumed, trigger, resumes: previous.resumes + 1, sessionId: previous.sessionId ?? newSessionId(), ...(resumedByInput && { round: previous.round + 1, approvalId: null }) }
      : {
          activation: highestActivation(previous) + 1,
          resumes: 0,
          open: true,
          round: 0,
          origin: trigger,
          trigger,
          horizonSeq: await store.conversation.lastSeq(person.id),
          hideUserFrom: answerRange(checkpoint, trigger) ? null : await unansweredFrom(store, person),
          sessionId: newSessionId(),
          ...(previous.pausedAt !== undefined && { pausedAt: previous.pausedAt }),
          ...(previous.parked !== undefined && { parked: previous.parked }),
        };
    // The person's model budget is used up today: the activation waits, open, for their next midnight.
    const budgetUntil = await this.deps.budget?.exhaustedUntil(person);
    if (budgetUntil) return this.waitForBudget(task, checkpoint, runtime, budgetUntil, person);
    const saved = await store.tasks.saveCheckpoint({ taskId: task.id, owner, cursor: task.cursor, checkpoint: toStored(checkpoint, { runtime, input: null }), now: clock.now(), leaseMs });
    const origin = runtime.origin ?? trigger;
    const answer = answerRange(checkpoint, origin);
    const answered = answer ? await answeredMessage(store, person, answer) : null;
    const goal = task.goalId ? await store.goals.getGoal(task.goalId) : null;
    // A crash resume tells background work what it was doing and that it was interrupted.
    const crashResume = previous.open && !resumedByInput && budgetWait === undefined;
    const told = triggerText(trigger, task, checkpoint, person);
    const note = crashResume ? " — resumed after a restart interrupted it" : budgetWait !== undefined ? " — it waited for today's model budget to reset" : "";
    const observations = [origin, trigger].flatMap((t) => (t.kind === "event" || t.kind === "change" ? t.observations : []));
    const stopTyping = answered ? this.deps.typing?.(person, answered.channel) : undefined;
    let outcome: ActivationOutcome;
    try {
      outcome = await runActivation(
        { ...this.deps.activation, store, clock, model: this.deps.budget ? this.deps.budget.meter(person, model) : model, tools: this.deps.tools() },
        {
          task: saved,
          person,
          goal,
          runtime,
          trigger,
          triggerText: told && `${told}${note}`,
          observations,
          view: { horizonSeq: runtime.horizonSeq ?? Number.MAX_SAFE_INTEGER, answer, hideUserFrom: runtime.hideUserFrom ?? null },
          originMessageId: answered?.id ?? null,
          inherited: inheritedOf(checkpoint, goal),
          // Work that lives on (a cron job, a check-in, a watch that is not once): its own denials carry 24 h.
          recurring: isRecurring(checkpoint, clock.now()),
        },
      );
    } finally {
      stopTyping?.();
    }
    // Shutting down: the lease ends with the process and the activation resumes from its journal.
    if (outcome.result.kind === "aborted") return;
    // The budget ran out between two of its model calls: it goes on from its journal after midnight.
    if (stoppedByBudget(outcome)) {
      const until = (await this.deps.budget?.exhaustedUntil(person)) ?? new Date(clock.now().getTime() + 60_000);
      return this.waitForBudget(task, checkpoint, runtime, until, person);
    }
    await this.finish(task, checkpoint, runtime, outcome, person, answered);
    // Fold older turns into the rolling summary once enough of them fell out of the verbatim window.
    const { firstVerbatimSeq, summaryUpToSeq } = outcome.context;
    if (answer && firstVerbatimSeq - 1 - summaryUpToSeq >= SUMMARY_BATCH) await this.deps.summarize?.(person, firstVerbatimSeq);
  }

  /**
   * Delivers what the activation said and moves the task on. A direct answer (a turn, or a task the
   * person's reply resumed) is queued, recorded in the conversation and the task released in one
   * transaction, so it is said once even if the process dies right after; anything else is a
   * proactive candidate for the notification filter (idempotent by its delivery key).
   */
  private async finish(task: Task, checkpoint: TaskCheckpoint, runtime: RuntimeState, outcome: ActivationOutcome, person: Person, answered: ConversationMessage | null): Promise<void> {
    const { store, clock, owner, leaseMs } = this.deps;
    const { result, requests } = outcome;
    const origin = runtime.origin ?? { kind: "recovery" };
    const key = `${task.id}:a${runtime.activation}${runtime.round ? `p${runtime.round}` : ""}`;
    // Waiting for an approval keeps the activation open: once decided it resumes with its history.
    // Recurring work parks it instead and keeps its schedule (core/runtime/parking.ts).
    const { after, waitFor, watch } = settleRuntime(runtime, requests, isRecurring(checkpoint, clock.now()), clock.now());
    const waitsForApproval = requests.approvalId !== null;
    if (requests.pause !== null && requests.approvalId === null) await this.auditPause(task, requests.pause);
    const next = nextState(checkpoint, { ...outcome, requests: { ...requests, approvalId: waitFor } }, clock.now(), origin, runtime.changeSeq);
    const text = result.kind === "reply" ? result.text : null;
    // The person is told plainly; the operator needs the why (the model endpoint failed).
    if (result.kind === "error") {
      this.deps.logger.warn({ taskId: task.id, reason: result.error.reason, status: result.error.status, requestId: result.error.requestId, err: result.error }, "the model could not be reached; the person was told");
    }

    if (answerRange(checkpoint, origin)) {
      const said = text ?? failureText(result.kind);
      const reply = result.tainted && this.deps.inertLinks ? await this.deps.inertLinks(person, said) : said;
      await store.transaction(async () => {
        await this.say(person, reply, `reply:${key}`, answered?.channel ?? null, task.kind === "turn" ? null : task);
        await store.tasks.saveCheckpoint({ taskId: task.id, owner, cursor: task.cursor, checkpoint: toStored(checkpoint, { runtime: after, input: null }), now: clock.now(), leaseMs });
        await store.tasks.transitionTask({ taskId: task.id, owner, to: next, now: clock.now() });
      });
      this.deps.outbound.wake();
      await this.afterRelease(watch, next, person);
      return;
    }
    const goal = task.goalId ? await store.goals.getGoal(task.goalId) : null;
    await this.deps.proactive.propose({
      task,
      checkpoint,
      origin,
      person,
      activation: runtime.activation,
      // The answer to the person's own press is a reply, not a proactive message: said directly.
      text: await this.answerPress(person, task, runtime.trigger, text, result.tainted, `reply:${key}`),
      key,
      waitsFor: { approval: waitsForApproval, reply: requests.waitForReply },
      tainted: result.tainted,
      mayHaveProposals: result.toolCalls.length > 0 || runtime.resumes > 0 || runtime.round > 0,
      goal: goal?.title ?? null,
    });
    await store.transaction(async () => {
      await store.tasks.saveCheckpoint({ taskId: task.id, owner, cursor: task.cursor, checkpoint: toStored(checkpoint, { runtime: after, input: null }), now: clock.now(), leaseMs });
      await store.tasks.transitionTask({ taskId: task.id, owner, to: next, now: clock.now() });
    });
    await this.afterRelease(watch, next, person);
  }

  /**
   * When the activation was resumed by the person's own press on its card (approved or denied, not
   * expired), what the model said answers that press: it is queued as a reply — to the chat they
   * pressed in — and recorded in the conversation, never second-guessed by the notification filter
   * (which judges what Familiar says first). Returns the text left for the filter: `text`, or null
   * once it was said (a silence token says nothing).
   */
  private async answerPress(person: Person, task: Task, trigger: Trigger | undefined, text: string | null, tainted: boolean, deliveryKey: string): Promise<string | null> {
    if (text === null || trigger?.kind !== "approval" || trigger.outcome === "expired") return text;
    const spoken = withoutSilenceTokens(text).trim();
    if (spoken === "") return null;
    const request = await this.deps.store.approvals.getApprovalRequest(asId("approval", trigger.approvalId));
    const reply = tainted && this.deps.inertLinks ? await this.deps.inertLinks(person, spoken) : spoken;
    await this.deps.store.transaction(() => this.say(person, reply, deliveryKey, request?.decidedBy?.channel ?? null, task));
    this.deps.outbound.wake();
    return null;
  }

  /**
   * Pauses a task the denial breaker stopped (core/approvals/denials.ts): its activation ends as it
   * is, it remembers when (so denials before count no more once resumed), and it is held until the
   * person resumes it — or, a turn, ends. The person was told when the breaker tripped.
   */
  private async pause(task: Task, checkpoint: TaskCheckpoint, previous: RuntimeState, why: "task" | "person"): Promise<void> {
    const { store, clock, owner, leaseMs } = this.deps;
    const now = clock.now();
    const runtime: RuntimeState = { ...previous, open: false, approvalId: null, resumes: 0, pausedAt: now.toISOString() };
    await store.transaction(async () => {
      await store.tasks.saveCheckpoint({ taskId: task.id, owner, cursor: task.cursor, checkpoint: toStored(checkpoint, { runtime, input: null }), now, leaseMs });
      await store.tasks.transitionTask({ taskId: task.id, owner, to: pausedState(checkpoint, now), now });
    });
    await this.auditPause(task, why);
  }

  /**
   * The person's model budget is used up today: the activation is kept open (its journal holds what
   * it did) and the task waits until `until`, their next midnight, when it goes on where it stopped
   * — a wake-up is not skipped as late then. The person is told once that day.
   */
  private async waitForBudget(task: Task, checkpoint: TaskCheckpoint, runtime: RuntimeState, until: Date, person: Person): Promise<void> {
    const { store, clock, owner, leaseMs } = this.deps;
    const waiting: RuntimeState = { ...runtime, open: true, budgetWait: until.toISOString() };
    await store.transaction(async () => {
      await store.tasks.saveCheckpoint({ taskId: task.id, owner, cursor: task.cursor, checkpoint: toStored(checkpoint, { runtime: waiting, input: null }), now: clock.now(), leaseMs });
      await store.tasks.transitionTask({ taskId: task.id, owner, to: { status: "waiting", wait: { kind: "time", until } }, now: clock.now() });
    });
    this.deps.logger.info({ taskId: task.id, personId: person.id, until: until.toISOString() }, "daily model budget used up: the task waits for its reset");
    await this.deps.budget?.tell(person);
  }

  private async auditPause(task: Task, why: "task" | "person"): Promise<void> {
    await this.deps.store.audit.appendAudit({
      personId: task.personId,
      kind: "task.paused",
      summary: `Paused “${task.title}”: ${why === "task" ? "you denied several of its requests" : "you denied several requests within an hour"}${task.kind === "turn" ? "" : " (/resume lets it run again)"}`,
      data: { taskId: task.id, breaker: why },
      at: this.deps.clock.now(),
    });
  }

  /**
   * What may have come while the activation still ran: the person's answer to its card (resumed at
   * once), changes for a re-armed watch (dispatched), an event for the hook it now waits for (kept
   * by the webhook flow, handed over now).
   */
  private async afterRelease(approvalId: string | null, next: TaskState, person: Person): Promise<void> {
    if (next.status === "waiting" && next.wait.kind === "change") this.deps.watchArmed?.(person.id);
    if (next.status === "waiting" && next.wait.kind === "event") await this.deps.keptEvents?.(next.wait.hookId);
    if (approvalId && (await resumeDecidedApproval(this.deps, asId("approval", approvalId)))) this.deps.poke();
  }

  /** Queues `text` for the person once per key and records it in the conversation. */
  private async say(person: Person, text: string, deliveryKey: string, channel: ConversationMessage["channel"] | null, task: Task | null): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const row = await this.deps.outbound.queue({ personId: person.id, deliveryKey, text, ...(channel && { channel }) }, { wake: false, now });
    if (row.createdAt.getTime() === now.getTime() && row.text === text) {
      await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: channel ?? "local", text, taskId: task?.id ?? null });
    }
  }

  /** Without a model: turns get an honest line; asked-for reminders still arrive with their own note. */
  private async withoutModel(task: Task, checkpoint: TaskCheckpoint, previous: RuntimeState, trigger: Trigger, person: Person): Promise<void> {
    const { store, clock } = this.deps;
    const origin = previous.origin ?? trigger;
    const key = `${task.id}:a${previous.activation + 1}:nomodel`;
    const answer = answerRange(checkpoint, origin);
    if (answer) {
      const answered = await answeredMessage(store, person, answer);
      await store.transaction(async () => {
        await this.say(person, failureText("no_model", this.deps.setupUrl?.()), `reply:${key}`, answered?.channel ?? null, null);
        await store.tasks.transitionTask({ taskId: task.id, owner: this.deps.owner, to: { status: "done", result: null }, now: clock.now() });
      });
      this.deps.outbound.wake();
      return;
    }
    await this.deps.proactive.remindWithoutModel({ task, checkpoint, origin, key, person });
    const next = nextOccurrence(checkpoint, clock.now());
    const watching = next ? null : nextChangeWait(checkpoint, origin);
    await this.release(task, next ? { status: "waiting", wait: { kind: "time", until: next } } : (watching ?? { status: "done", result: null }));
    if (watching) this.deps.watchArmed?.(person.id);
  }

  private async release(task: Task, to: TaskState): Promise<void> {
    await this.deps.store.tasks.transitionTask({ taskId: task.id, owner: this.deps.owner, to, now: this.deps.clock.now() });
  }
}

/** The activation stopped because the person's model budget ran out between two calls (and it asked for no card). */
function stoppedByBudget(outcome: ActivationOutcome): boolean {
  const { result, requests } = outcome;
  return result.kind === "error" && result.error.reason === "budget" && requests.approvalId === null;
}

/** Work that lives on after an activation — a cron wake-up, a check-in, a watch that is not once: its card parks the asking call (core/runtime/parking.ts). */
function isRecurring(checkpoint: TaskCheckpoint, now: Date): boolean {
  return nextOccurrence(checkpoint, now) !== null || nextChangeWait(checkpoint, undefined) !== null;
}
