import type { InboundOutcome, InboundPress } from "../channels/port.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { OutboxDelivery } from "../outbox/delivery.js";
import type { Scheduler } from "../scheduling/scheduler.js";
import { ApprovalDesk, approvalCard, parseApprovalButtonId } from "../sentinel/approvals.js";
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

  constructor(
    private readonly deps: { store: Store; clock: Clock; logger: Logger; outbox: OutboxDelivery; scheduler: Scheduler; tasks: () => TaskRuntime },
  ) {
    this.desk = new ApprovalDesk(deps.store);
  }

  /** Sentinel stored a request: send the card and schedule its expiry. */
  requested = async (request: ApprovalRequest): Promise<void> => {
    const { store, clock, scheduler } = this.deps;
    const card = approvalCard(request);
    await store.outbox.enqueueOutbound({ personId: request.personId, deliveryKey: cardKey(request), text: card.text, buttons: card.buttons }, clock.now());
    await scheduler.schedule({ name: approvalExpiryJobName, key: request.id, data: { approvalId: request.id }, timing: { kind: "at", at: request.expiresAt } });
    void this.deps.outbox.deliver(request.personId);
  };

  /** Press handler for the inbound flow: null when the button is not an approval button. */
  press = async (press: InboundPress, person: Person | null, _identity: Identity | null): Promise<InboundOutcome | null> => {
    if (!parseApprovalButtonId(press.buttonId)) return null;
    const result = await this.desk.decidePress({
      buttonId: press.buttonId,
      presser: { channel: press.channel, accountId: press.accountId, personId: person?.id ?? null },
      now: this.deps.clock.now(),
    });
    const request = result.request;
    if (request && result.cardUpdate) await this.editCard(request, result.cardUpdate.text, `${result.outcome}`);
    if (request && (result.outcome === "approved" || result.outcome === "denied")) {
      const how = result.outcome === "approved" ? `approved (${result.grant?.scope.kind ?? "once"})` : "denied";
      void this.resume(request, `the person ${how} the request "${request.summary}"`);
    }
    if (request && result.outcome === "expired") void this.resume(request, `the approval request "${request.summary}" expired without an answer`);
    return { status: "handled", notice: result.notice };
  };

  /** The expiry job: marks due requests expired, edits their cards and tells their tasks. */
  async expire(): Promise<number> {
    const expired = await this.deps.store.approvals.expireApprovals(this.deps.clock.now());
    for (const request of expired) {
      await this.editCard(request, `⌛ Expired — not approved: ${request.summary}`, "expired");
      await this.resume(request, `the approval request "${request.summary}" expired without an answer`);
    }
    return expired.length;
  }

  private async editCard(request: ApprovalRequest, text: string, outcome: string): Promise<void> {
    const { store, clock } = this.deps;
    // Enqueueing the card's key again returns the card row itself (idempotent by delivery key).
    const card = await store.outbox.enqueueOutbound({ personId: request.personId, deliveryKey: cardKey(request), text, buttons: [] }, clock.now());
    await store.outbox.enqueueOutbound({ personId: request.personId, deliveryKey: `${cardKey(request)}:${outcome}`, text, buttons: [], editOf: card.id }, clock.now());
    void this.deps.outbox.deliver(request.personId);
  }

  private async resume(request: ApprovalRequest, trigger: string): Promise<void> {
    if (!request.taskId) return;
    const task = await this.deps.store.tasks.getTask(request.taskId);
    if (!task) return;
    const turn = taskKind(task) === "turn";
    await this.deps.tasks().run(task.id, { trigger, from: "waiting", direct: turn, onlyIfWaitingFor: request.id });
  }
}

function cardKey(request: ApprovalRequest): string {
  return `approval:${request.id}`;
}
