/**
 * Sentinel's `ask` path: whether to show the person a card at all, and what the card may offer.
 *
 * No approval fatigue:
 * - at most one pending card per task: a further ask while one waits returns `approval_required`
 *   for the card already waiting (the task keeps waiting for it; nothing new is shown);
 * - a denial covers its places and kind of action (core/approvals/denials.ts): a request to a
 *   place the person denied in the same task — or, in an activation that read outside content,
 *   within the last 24 hours — is denied without a card, and the model is told so plainly;
 * - the breaker (denials.ts): after {@link MAX_DENIALS_PER_TASK} denials in one task since the
 *   person last wrote, or {@link MAX_DENIALS_PER_PERSON} of theirs within an hour (for activations
 *   that read outside content), further asks are refused without a card (`approvals_paused`, with
 *   `data.pauseTask`) and the asking task is paused; the person is told once, when the breaker
 *   trips (see `ApprovalDesk`);
 * - at most {@link MAX_PENDING_PER_PERSON} pending cards per person: beyond that the model is told
 *   that the person has enough to answer, and nothing is shown.
 *
 * Risk decides the scopes: when the activation is tainted, or a destination came from untrusted
 * content, only *Approve once* and *Deny* are offered (so never *Always* for a destination first
 * seen in untrusted content); when the request does not fit on a card, only *Deny*.
 */
import type { PersonId, TaskId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { ApprovalChoiceKind, ApprovalRequest } from "./records.js";
import type { Json } from "../json.js";
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
import { BREAKER_WINDOW_MS, classWords, coveredPlace, DENIAL_CARRY_MS, MAX_DENIALS_PER_PERSON, MAX_DENIALS_PER_TASK, methodClass } from "./denials.js";
import type { ActionSummary } from "./summary.js";

/** Pending (unexpired) cards one person may have at once. */
export const MAX_PENDING_PER_PERSON = 3;
export { MAX_DENIALS_PER_TASK } from "./denials.js";

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

/** The later of two optional instants. */
export function laterOf(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() >= b.getTime() ? a : b;
}

/** The input of {@link gateAsk}. */
export interface GateInput {
  personId: PersonId;
  taskId: TaskId | null;
  action: ActionDescriptor;
  tool: string;
  now: Date;
  /** The activation read outside content (denials then reach beyond their task, and the person's count applies). */
  tainted?: boolean;
  /** Denials before this instant do not count towards the breaker (the task was paused and resumed since). */
  denialsFrom?: Date | null;
  /** The task is recurring work (it lives on): its own denials cover for {@link DENIAL_CARRY_MS}, not for ever. */
  recurring?: boolean;
}

/** A denial that covers `action`: the request and the place it covers, or null. */
function coveringDenial(requests: readonly ApprovalRequest[], action: ActionDescriptor): { request: ApprovalRequest; place: string } | null {
  for (const request of requests) {
    if (request.status !== "denied") continue;
    const details = parseApprovalDetails(request);
    const place = details ? coveredPlace(details.action, action) : null;
    if (place !== null) return { request, place };
  }
  return null;
}

function deniedAgain(input: GateInput, covering: { request: ApprovalRequest; place: string }, when: string): Gate {
  const kind = classWords(methodClass(parseApprovalDetails(covering.request)?.action ?? input.action));
  return {
    kind: "answer",
    result: {
      ok: false,
      code: "denied",
      error: `Denied: the person denied ${kind} ${covering.place} ${when} (“${covering.request.summary}”), and that covers this ${input.tool} call to the same place. It did not run and no card was shown. Do not try ${covering.place} again with another path, body or method; tell the person briefly what you could not do.`,
    },
    audit: {
      kind: "approval.denied_again",
      summary: `Denied without a card (${covering.place} was denied ${when}): ${input.tool}`,
      data: { taskId: input.taskId, place: covering.place, deniedRequest: covering.request.id, actionKey: descriptorKey(input.action) },
    },
  };
}

function paused(input: GateInput, why: string, reason: "task" | "person"): Gate {
  return {
    kind: "answer",
    result: {
      ok: false,
      code: "approvals_paused",
      error: `${why}, so this task is paused and nothing more is asked or done for it until they resume it. ${input.tool} did not run. Do not call more tools; tell them in one sentence what you could not do.`,
      data: { pauseTask: reason },
    },
    audit: { kind: "approval.paused", summary: `Denied without a card (${why}): ${input.tool}`, data: { taskId: input.taskId, breaker: reason } },
  };
}

/** Applies the fatigue rules (module doc) before a card is made. */
export async function gateAsk(store: AskStore, input: GateInput): Promise<Gate> {
  const { personId, taskId, action, now } = input;
  const key = descriptorKey(action);
  const tainted = input.tainted === true;
  const from = input.denialsFrom ?? null;
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
    const carryFrom = now.getTime() - DENIAL_CARRY_MS;
    const own = input.recurring === true ? requests.filter((r) => (r.decidedAt ?? r.createdAt).getTime() >= carryFrom) : requests;
    const inTask = coveringDenial(own, action);
    if (inTask !== null) return deniedAgain(input, inTask, "earlier in this task");
    const since = laterOf(await lastPersonMessageAt(store, personId), from);
    if (denialsSince(requests, since).length >= MAX_DENIALS_PER_TASK) {
      return paused(input, `The person denied ${MAX_DENIALS_PER_TASK} requests in this task`, "task");
    }
  }
  if (tainted) {
    const recent = await store.approvals.listDeniedApprovals(personId, new Date(now.getTime() - DENIAL_CARRY_MS));
    const carried = coveringDenial(recent, action);
    if (carried !== null) return deniedAgain(input, carried, "in the last 24 hours");
    const windowStart = laterOf(new Date(now.getTime() - BREAKER_WINDOW_MS), from)!;
    if (recent.filter((r) => (r.decidedAt ?? r.createdAt).getTime() >= windowStart.getTime()).length >= MAX_DENIALS_PER_PERSON) {
      return paused(input, `The person denied ${MAX_DENIALS_PER_PERSON} requests in the last hour`, "person");
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
