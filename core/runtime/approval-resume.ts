import type { InboundOutcome, InboundPress } from "../channels/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log/index.js";
import type { Outbound } from "../outbox/index.js";
import type { Scheduler } from "../scheduling/index.js";
import { ApprovalDesk, isApprovalButtonId, statusOf, ApprovalCards, type Presser } from "../approvals/index.js";
import type { SentinelClock, SessionTracker } from "../policy/index.js";
import type { Store } from "../storage/index.js";
import type { ApprovalRequest } from "../approvals/records.js";
import type { ChannelName } from "../channels/records.js";
import type { Identity, Person } from "../persons/records.js";
import type { Task } from "../tasks/records.js";
import type { ApprovalId, TaskId } from "../ids.js";
import { parseCheckpoint, runtimeOf, type Trigger } from "../tasks/index.js";

/** Job that expires an approval request at its deadline and tells the waiting task. */
export const approvalExpiryJobName = "approval.expire";

/**
 * The approval round trip around Sentinel's `ask`: the card goes out through the outbox (each
 * messenger renders its buttons natively), a press is checked by the ApprovalDesk (owner only,
 * pending, unexpired, first answer wins — field cases A1, A2), the card is edited to show the
 * outcome, and the waiting task resumes exactly once (the resume is an atomic claim of the waiting
 * task). On deny or expiry the model is told, so it can say so.
 */
export class ApprovalFlow {
  private readonly desk: ApprovalDesk;
  private readonly cards: ApprovalCards;

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      logger: Logger;
      /** Where cards and their updates are queued (the one outbound door). */
      outbound: Pick<Outbound, "queue" | "wake">;
      scheduler: Scheduler;
      /** Wakes the task loop (a waiting task became due). */
      tasks: { poke(): void };
      /** Sentinel's own time and session tracker (shared with the Sentinel facade). */
      sentinel: { clock: SentinelClock; sessions: SessionTracker };
    },
  ) {
    this.desk = new ApprovalDesk({ store: deps.store, clock: deps.sentinel.clock, sessions: deps.sentinel.sessions, denialsFrom: (taskId) => denialsFromOf(deps.store, taskId) });
    this.cards = new ApprovalCards({ store: deps.store, clock: deps.sentinel.clock, outbound: deps.outbound });
  }

  /** Sentinel stored a request: send the card (its buttons stored with it) and schedule its expiry. */
  requested = async (request: ApprovalRequest): Promise<void> => {
    await this.cards.issue(request);
    await this.deps.scheduler.schedule({ name: approvalExpiryJobName, key: request.id, data: { approvalId: request.id }, timing: { kind: "at", at: request.expiresAt } });
    this.deps.outbound.wake();
  };

  /**
   * Redoes what a crash between storing a request and queueing its card left undone: every pending
   * request of every person gets its card and its expiry job. Both are idempotent — a card already
   * queued under the request's delivery key is kept with the buttons it showed (the new tokens are
   * never recorded), and scheduling an expiry again replaces the job of the same key. Called once at
   * start; returns how many pending requests were checked.
   */
  async recoverCards(): Promise<number> {
    const { store } = this.deps;
    let checked = 0;
    let after: string | undefined;
    do {
      const page = await store.persons.listPersons({ limit: 200, ...(after !== undefined && { after }) });
      for (const person of page.items) {
        for (const request of await store.approvals.listPendingApprovals(person.id)) {
          await this.requested(request);
          checked++;
        }
      }
      after = page.next;
    } while (after !== undefined);
    return checked;
  }

  /** Press handler for the inbound flow: null when the button is not an approval button. */
  press = async (press: InboundPress, person: Person | null, _identity: Identity | null): Promise<InboundOutcome | null> => {
    if (!isApprovalButtonId(press.buttonId)) return null;
    return this.decidePress(press.buttonId, { channel: press.channel, accountId: press.accountId, personId: person?.id ?? null, address: press.address, messageRef: press.messageRef, ...(press.groupId !== undefined && { groupId: press.groupId }) });
  };

  /**
   * A decision made in the web app's list of approvals: `buttonId` is one of the buttons the card
   * showed, `via` the card's copy where the person decided (their chat log). The same checks as a
   * press on the card — the decider is the owner, the request pending and unexpired, first answer
   * wins — and the same outcome; idempotent per `actionId` (a retried request answers "duplicate").
   */
  decide = async (input: { person: Person; buttonId: string; via: { channel: ChannelName; accountId: string; messageRef: string }; actionId: string }): Promise<InboundOutcome> => {
    const { person, buttonId, via } = input;
    if (!(await this.deps.store.inbound.markUpdateProcessed(via.channel, `${via.accountId}:${input.actionId}`, this.deps.clock.now()))) return { status: "duplicate" };
    if (!isApprovalButtonId(buttonId)) return { status: "handled", notice: "That button is no longer active." };
    return this.decidePress(buttonId, { channel: via.channel, accountId: via.accountId, personId: person.id, address: via.accountId, messageRef: via.messageRef });
  };

  private async decidePress(buttonId: string, presser: Presser): Promise<InboundOutcome> {
    const result = await this.desk.decidePress({ buttonId, presser });
    const request = result.request;
    if (request && result.status) {
      await this.cards.settle(request, result.status, result.outcome);
      // A denial that trips the breaker pauses its task (core/approvals/denials.ts); the person is told once.
      if (result.paused) await this.cards.tellPaused(request, result.paused);
      this.deps.outbound.wake();
    }
    if (request && (result.outcome === "approved" || result.outcome === "denied" || result.outcome === "expired")) {
      await this.resume(request, result.paused);
    }
    return { status: "handled", notice: result.notice };
  }

  /** The delivered card of a pending request, for the web app's list of approvals (see `ApprovalCards.delivered`). */
  deliveredCard(request: ApprovalRequest) {
    return this.cards.delivered(request);
  }

  /** The expiry job: marks due requests expired (at Sentinel's time), edits their cards and tells their tasks. */
  async expire(): Promise<number> {
    const expired = await this.deps.store.approvals.expireApprovals(await this.deps.sentinel.clock.now());
    for (const request of expired) {
      await this.cards.settle(request, statusOf(request), "expired");
      await this.resume(request);
    }
    if (expired.length > 0) this.deps.outbound.wake();
    return expired.length;
  }

  /** The waiting task is due again, with the decision as its input (first resume wins); a tripped breaker makes it pause instead. */
  private async resume(request: ApprovalRequest, paused?: "task" | "person"): Promise<void> {
    if (await resumeDecidedApproval(this.deps, request.id, paused)) this.deps.tasks.poke();
  }
}

/** The approval a recurring task's parked call waits for (null: none, or an unreadable checkpoint). */
function parkedApprovalOf(task: Task): string | null {
  try {
    return runtimeOf(parseCheckpoint(task)).parked?.approvalId ?? null;
  } catch {
    return null;
  }
}

/** When a task's denials start counting for the breaker: when it was last paused (its checkpoint's `pausedAt`), else null. */
export async function denialsFromOf(store: Pick<Store, "tasks">, taskId: TaskId): Promise<Date | null> {
  const task = await store.tasks.getTask(taskId);
  if (task === null) return null;
  try {
    const at = runtimeOf(parseCheckpoint(task)).pausedAt;
    return at ? new Date(at) : null;
  } catch {
    return null;
  }
}

/**
 * Resumes the task of a decided (or expired) approval request: it becomes due again with the decision
 * as its input. Called on the press, on expiry, and by the runtime right after an activation released
 * its task to wait — the person may have answered while the activation was still running. A request
 * still pending, or a task no longer waiting for it, changes nothing (first resume wins).
 */
export async function resumeDecidedApproval(deps: { store: Pick<Store, "approvals" | "tasks">; clock: Clock }, approvalId: ApprovalId, paused?: "task" | "person"): Promise<boolean> {
  const request = await deps.store.approvals.getApprovalRequest(approvalId);
  if (!request?.taskId || request.status === "pending") return false;
  const outcome = request.status === "approved" ? "approved" : request.status === "denied" ? "denied" : "expired";
  const scope = request.decision?.kind === "approve" ? request.decision.scope : null;
  const input: Trigger = { kind: "approval", approvalId: request.id, outcome, summary: request.summary, scope, ...(paused !== undefined && outcome === "denied" && { paused }) };
  const resumed = await deps.store.tasks.resumeWaitingTask({ taskId: request.taskId, wait: { kind: "approval", approvalId: request.id }, input, now: deps.clock.now() });
  if (resumed !== null) return true;
  // Recurring work parked the call and waits for its next occurrence, or a watch for its next change (core/runtime/parking.ts): resume it now.
  const task = await deps.store.tasks.getTask(request.taskId);
  if (task?.state.status !== "waiting" || parkedApprovalOf(task) !== request.id) return false;
  const wait = task.state.wait;
  const match = wait.kind === "time" ? { kind: "time" as const } : wait.kind === "change" ? { kind: "change" as const, afterSeq: wait.afterSeq } : null;
  return match !== null && (await deps.store.tasks.resumeWaitingTask({ taskId: request.taskId, wait: match, input, now: deps.clock.now() })) !== null;
}
