import type { InboundOutcome, InboundPress } from "../channels/port.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { OutboxDelivery } from "../outbox/delivery.js";
import type { Scheduler } from "../scheduling/scheduler.js";
import { ApprovalDesk, isApprovalButtonId, statusOf } from "../sentinel/approvals.js";
import { ApprovalCards } from "../sentinel/card-issuer.js";
import type { SentinelClock, SessionTracker } from "../sentinel/time.js";
import type { Store } from "../storage/ports.js";
import type { ApprovalRequest, Identity, Person } from "../storage/types.js";
import type { TaskRuntime } from "./tasks.js";
import { taskKind } from "./tasks.js";

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
      outbox: OutboxDelivery;
      scheduler: Scheduler;
      tasks: () => TaskRuntime;
      /** Sentinel's own time and session tracker (shared with the Sentinel facade). */
      sentinel: { clock: SentinelClock; sessions: SessionTracker };
    },
  ) {
    this.desk = new ApprovalDesk({ store: deps.store, clock: deps.sentinel.clock, sessions: deps.sentinel.sessions });
    this.cards = new ApprovalCards({ store: deps.store, clock: deps.sentinel.clock });
  }

  /** Sentinel stored a request: send the card and schedule its expiry. */
  requested = async (request: ApprovalRequest): Promise<void> => {
    const { scheduler } = this.deps;
    await this.cards.issue(request);
    await scheduler.schedule({ name: approvalExpiryJobName, key: request.id, data: { approvalId: request.id }, timing: { kind: "at", at: request.expiresAt } });
    this.deliver(request);
  };

  /** Press handler for the inbound flow: null when the button is not an approval button. */
  press = async (press: InboundPress, person: Person | null, _identity: Identity | null): Promise<InboundOutcome | null> => {
    if (!isApprovalButtonId(press.buttonId)) return null;
    const result = await this.desk.decidePress({
      buttonId: press.buttonId,
      presser: { channel: press.channel, accountId: press.accountId, personId: person?.id ?? null, address: press.address, messageRef: press.messageRef, ...(press.groupId !== undefined && { groupId: press.groupId }) },
    });
    const request = result.request;
    if (request && result.status) {
      await this.cards.settle(request, result.status, result.outcome);
      if (result.paused) await this.cards.tellPaused(request);
      this.deliver(request);
    }
    if (request && (result.outcome === "approved" || result.outcome === "denied")) {
      const how = result.outcome === "approved" ? `approved (${result.grant?.scope.kind ?? "once"})` : result.paused ? "denied — and approvals for this task are now paused after repeated denials; do not try again" : "denied";
      void this.resume(request, `the person ${how} the request "${request.summary}"`).catch((err: unknown) => this.deps.logger.error({ err, approvalId: request.id }, "resume after a decision failed"));
    }
    if (request && result.outcome === "expired") {
      void this.resume(request, `the approval request "${request.summary}" expired without an answer`).catch((err: unknown) => this.deps.logger.error({ err, approvalId: request.id }, "resume after expiry failed"));
    }
    return { status: "handled", notice: result.notice };
  };

  /** The expiry job: marks due requests expired (at Sentinel's time), edits their cards and tells their tasks. */
  async expire(): Promise<number> {
    const expired = await this.deps.store.approvals.expireApprovals(await this.deps.sentinel.clock.now());
    for (const request of expired) {
      await this.cards.settle(request, statusOf(request), "expired");
      this.deliver(request);
      await this.resume(request, `the approval request "${request.summary}" expired without an answer`);
    }
    return expired.length;
  }

  private deliver(request: ApprovalRequest): void {
    this.deps.outbox.deliver(request.personId).catch((err: unknown) => this.deps.logger.error({ err, approvalId: request.id }, "card delivery failed"));
  }

  private async resume(request: ApprovalRequest, trigger: string): Promise<void> {
    if (!request.taskId) return;
    const task = await this.deps.store.tasks.getTask(request.taskId);
    if (!task) return;
    const turn = taskKind(task) === "turn";
    await this.deps.tasks().run(task.id, { trigger, from: "waiting", direct: turn, onlyIfWaitingFor: request.id });
  }
}
