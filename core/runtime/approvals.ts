import type { InboundOutcome, InboundPress } from "../channels/port.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { Scheduler } from "../scheduling/scheduler.js";
import { ApprovalDesk, approvalCard, parseApprovalButtonId } from "../sentinel/approvals.js";
import type { Store } from "../storage/ports.js";
import type { ApprovalRequest, Identity, Person } from "../storage/types.js";
import type { ApprovalId } from "../ids.js";
import type { Trigger } from "./checkpoint.js";

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
    private readonly deps: {
      store: Store;
      clock: Clock;
      logger: Logger;
      /** Wakes the outbox's delivery loop (a card or its update was queued). */
      outbox: { poke(): void };
      scheduler: Scheduler;
      /** Wakes the task loop (a waiting task became due). */
      tasks: { poke(): void };
    },
  ) {
    this.desk = new ApprovalDesk(deps.store);
  }

  /** Sentinel stored a request: send the card and schedule its expiry. */
  requested = async (request: ApprovalRequest): Promise<void> => {
    const { store, clock, scheduler } = this.deps;
    const card = approvalCard(request);
    await store.outbox.enqueueOutbound({ personId: request.personId, deliveryKey: cardKey(request), text: card.text, buttons: card.buttons }, clock.now());
    await scheduler.schedule({ name: approvalExpiryJobName, key: request.id, data: { approvalId: request.id }, timing: { kind: "at", at: request.expiresAt } });
    this.deps.outbox.poke();
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
    if (request && (result.outcome === "approved" || result.outcome === "denied" || result.outcome === "expired")) {
      await this.resume(request);
    }
    return { status: "handled", notice: result.notice };
  };

  /** The expiry job: marks due requests expired, edits their cards and tells their tasks. */
  async expire(): Promise<number> {
    const expired = await this.deps.store.approvals.expireApprovals(this.deps.clock.now());
    for (const request of expired) {
      await this.editCard(request, `⌛ Expired — not approved: ${request.summary}`, "expired");
      await this.resume(request);
    }
    return expired.length;
  }

  private async editCard(request: ApprovalRequest, text: string, outcome: string): Promise<void> {
    const { store, clock } = this.deps;
    // Enqueueing the card's key again returns the card row itself (idempotent by delivery key).
    const card = await store.outbox.enqueueOutbound({ personId: request.personId, deliveryKey: cardKey(request), text, buttons: [] }, clock.now());
    await store.outbox.enqueueOutbound({ personId: request.personId, deliveryKey: `${cardKey(request)}:${outcome}`, text, buttons: [], editOf: card.id }, clock.now());
    this.deps.outbox.poke();
  }

  /** The waiting task is due again, with the decision as its input (first resume wins). */
  private async resume(request: ApprovalRequest): Promise<void> {
    if (await resumeDecidedApproval(this.deps, request.id)) this.deps.tasks.poke();
  }
}

/**
 * Resumes the task of a decided (or expired) approval request: it becomes due again with the decision
 * as its input. Called on the press, on expiry, and by the runtime right after an activation released
 * its task to wait — the person may have answered while the activation was still running. A request
 * still pending, or a task no longer waiting for it, changes nothing (first resume wins).
 */
export async function resumeDecidedApproval(deps: { store: Pick<Store, "approvals" | "tasks">; clock: Clock }, approvalId: ApprovalId): Promise<boolean> {
  const request = await deps.store.approvals.getApprovalRequest(approvalId);
  if (!request?.taskId || request.status === "pending") return false;
  const outcome = request.status === "approved" ? "approved" : request.status === "denied" ? "denied" : "expired";
  const scope = request.decision?.kind === "approve" ? request.decision.scope : null;
  const input: Trigger = { kind: "approval", approvalId: request.id, outcome, summary: request.summary, scope };
  const resumed = await deps.store.tasks.resumeWaitingTask({ taskId: request.taskId, wait: { kind: "approval", approvalId: request.id }, input, now: deps.clock.now() });
  return resumed !== null;
}

function cardKey(request: ApprovalRequest): string {
  return `approval:${request.id}`;
}
