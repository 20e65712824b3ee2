/**
 * Sentinel's `ask` path: whether to show the person a card at all, and what the card may offer.
 *
 * No approval fatigue:
 * - at most one pending card per task: a further ask while one waits returns `approval_required`
 *   for the card already waiting (the task keeps waiting for it; nothing new is shown);
 * - a request identical to one the person denied in the same task is denied without a card;
 * - after {@link MAX_DENIALS_PER_TASK} denials in one task since the person last wrote, the task's
 *   approvals are paused: further asks are denied without a card until the person writes again
 *   (the person is told once, when the pause begins — see `ApprovalDesk`);
 * - at most {@link MAX_PENDING_PER_PERSON} pending cards per person: beyond that the model is told
 *   that the person has enough to answer, and nothing is shown.
 *
 * Risk decides the scopes: when the activation is tainted, or a destination came from untrusted
 * content, only *Approve once* and *Deny* are offered (so never *Always* for a destination first
 * seen in untrusted content); when the request does not fit on a card, only *Deny*.
 */
import type { PersonId, TaskId } from "../ids.js";
import type { Store, ApprovalChoiceKind, ApprovalRequest, Json } from "../storage/index.js";
import type { ToolResult } from "../tools/index.js";
import { cardFits } from "./card.js";
import {
  descriptorKey,
  type ActionDescriptor,
  provenanceOf,
  type SeenContent,
  type Provenance,
} from "../policy/index.js";
import { parseApprovalDetails, type ApprovalDetails } from "./request.js";
import type { ActionSummary } from "./summary.js";

/** Pending (unexpired) cards one person may have at once. */
export const MAX_PENDING_PER_PERSON = 3;
/** Denials in one task (since the person last wrote) after which the task's approvals pause. */
export const MAX_DENIALS_PER_TASK = 3;

/** What the ask path needs from the store. */
export type AskStore = Pick<Store, "approvals" | "audit" | "conversation" | "memory" | "sentinel" | "tasks">;

/** The verdict before any card is made: ask (make a card), or answer the model without one. */
export type Gate = { kind: "ask" } | { kind: "answer"; result: ToolResult; audit: { kind: string; summary: string; data: Json } };

/** When the person last wrote (null: never, as far as the recent conversation shows). */
export async function lastPersonMessageAt(store: Pick<Store, "conversation">, personId: PersonId): Promise<Date | null> {
  const recent = await store.conversation.listRecentMessages(personId, 20);
  return [...recent].reverse().find((m) => m.role === "user")?.at ?? null;
}

/** Denials of a task's requests since `since` (null: all of them). */
export function denialsSince(requests: readonly ApprovalRequest[], since: Date | null): ApprovalRequest[] {
  return requests.filter((r) => r.status === "denied" && (since === null || (r.decidedAt ?? r.createdAt).getTime() > since.getTime()));
}

/** Applies the fatigue rules (module doc) before a card is made. */
export async function gateAsk(store: AskStore, input: { personId: PersonId; taskId: TaskId | null; action: ActionDescriptor; tool: string; now: Date }): Promise<Gate> {
  const { personId, taskId, action, now } = input;
  const key = descriptorKey(action);
  if (taskId !== null) {
    const requests = await store.approvals.listTaskApprovals(taskId);
    const waiting = requests.find((r) => r.status === "pending" && r.expiresAt.getTime() > now.getTime());
    if (waiting !== undefined) {
      const same = parseApprovalDetails(waiting)?.actionKey === key;
      return {
        kind: "answer",
        result: {
          ok: false,
          code: "approval_required",
          error: same
            ? `${input.tool} is waiting for the person's answer on the card already shown (request ${waiting.id}). It did not run.`
            : `Another request of this task is waiting for the person's answer (${waiting.summary}). This call did not run and was not shown to them; wait for their answer before asking again.`,
          data: { approvalId: waiting.id, waiting: true },
        },
        audit: { kind: "approval.held", summary: `Not asked again while a card waits: ${input.tool}`, data: { waitingFor: waiting.id, taskId } },
      };
    }
    if (requests.some((r) => r.status === "denied" && parseApprovalDetails(r)?.actionKey === key)) {
      return {
        kind: "answer",
        result: { ok: false, code: "denied", error: `The person already denied exactly this ${input.tool} request in this task. It did not run; do not ask for it again.` },
        audit: { kind: "approval.denied_again", summary: `Denied without a card (denied before): ${input.tool}`, data: { taskId, actionKey: key } },
      };
    }
    const since = await lastPersonMessageAt(store, personId);
    if (denialsSince(requests, since).length >= MAX_DENIALS_PER_TASK) {
      return {
        kind: "answer",
        result: {
          ok: false,
          code: "approvals_paused",
          error: `The person denied ${MAX_DENIALS_PER_TASK} requests in this task, so approvals for it are paused until they write again. ${input.tool} did not run. Do not try other actions that need approval; tell them briefly what you could not do.`,
        },
        audit: { kind: "approval.paused", summary: `Denied without a card (task paused after ${MAX_DENIALS_PER_TASK} denials): ${input.tool}`, data: { taskId } },
      };
    }
  }
  const pending = (await store.approvals.listPendingApprovals(personId)).filter((r) => r.expiresAt.getTime() > now.getTime());
  if (pending.length >= MAX_PENDING_PER_PERSON) {
    return {
      kind: "answer",
      result: {
        ok: false,
        code: "approval_deferred",
        error: `${pending.length} requests already wait for the person's answer, so this ${input.tool} call was not shown to them and did not run. Tell them what you need; do not retry now.`,
      },
      audit: { kind: "approval.deferred", summary: `Not shown (${pending.length} cards already wait): ${input.tool}`, data: { taskId, pending: pending.map((r) => r.id) } },
    };
  }
  return { kind: "ask" };
}

/** The choices a card offers, and why wider scopes are withheld (null: they are not). */
export function offeredChoices(input: { taskId: TaskId | null; tainted: boolean; provenance: Provenance; summary: ActionSummary; seen: readonly SeenContent[]; onceOnly?: boolean }): {
  offered: ApprovalChoiceKind[];
  restriction: string | null;
} {
  if (!cardFits(input.summary)) return { offered: ["deny"], restriction: null };
  if (input.onceOnly === true) return { offered: ["once", "deny"], restriction: "This can only be approved once, for exactly this." };
  if (input.tainted) {
    const from = input.seen.at(-1)?.source;
    return { offered: ["once", "deny"], restriction: `Only “Approve once” is offered: Familiar read outside content${from ? ` (${from})` : ""} before it prepared this request.` };
  }
  if (input.provenance.firstSeenUntrusted || input.provenance.kind === "untrusted") {
    return { offered: ["once", "deny"], restriction: "Only “Approve once” is offered: this address first appeared in outside content, not from you." };
  }
  const offered: ApprovalChoiceKind[] = ["once"];
  if (input.taskId !== null) offered.push("task");
  offered.push("session", "until", "always", "deny");
  return { offered, restriction: null };
}

/** Builds the stored details of a request (see request.ts). */
export async function requestDetails(
  store: AskStore,
  input: {
    personId: PersonId;
    taskId: TaskId | null;
    action: ActionDescriptor;
    summary: ActionSummary;
    /** A described action that may only ever be approved once, exactly (a purchase). */
    onceOnly?: boolean;
    ruleId: string;
    reason: string;
    tainted: boolean;
    seen: readonly SeenContent[];
    now: Date;
  },
): Promise<ApprovalDetails> {
  const provenance = await provenanceOf(store, input.personId, input.action.targets, input.seen, input.now);
  const { offered, restriction } = offeredChoices({ ...input, provenance });
  return {
    v: 2,
    action: input.action,
    actionKey: descriptorKey(input.action),
    summary: input.summary,
    access: input.action.access,
    ruleId: input.ruleId,
    reason: input.reason,
    tainted: input.tainted,
    provenance,
    offered,
    restriction,
  };
}
