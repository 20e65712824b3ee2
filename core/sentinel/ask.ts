/**
 * Sentinel's `ask` effect: the fatigue rules (core/approvals/asking.ts) answer some asks at once;
 * otherwise an approval request is stored with the descriptor, a readable summary and the choices
 * risk allows, audited, handed to `onApprovalRequested` (the runtime suspends the task and sends the
 * card), and the model is told the call waits for the person.
 */
import type { ApprovalRequest } from "../approvals/records.js";
import { gateAsk, requestDetails, summariseAction, summariseDescribed } from "../approvals/index.js";
import type { Logger } from "../log/index.js";
import { persistenceNotes, persistencePolicy, type Decision, type DecisionInput } from "../policy/index.js";
import type { ActionDescription, ToolContext, ToolDefinition, ToolResult } from "../tools/index.js";
import type { ActivationState, SentinelStore } from "./deps.js";

/** What asking needs from the facade. */
export interface AskContext {
  store: SentinelStore;
  /** How long the request stays answerable, ms. */
  ttlMs: number;
  /** Scrubs known secret values out of text shown on the card. */
  scrub: (text: string) => string;
  logger?: Logger;
  onApprovalRequested?: (request: ApprovalRequest) => void | Promise<void>;
}

/** Asks the person about a call `decision` says to ask about; the returned result tells the model it did not run. */
export async function askApproval(ctx: AskContext, tool: ToolDefinition, args: unknown, context: ToolContext, input: DecisionInput, decision: Decision, state: ActivationState, described: ActionDescription | null = null): Promise<ToolResult> {
  const { store } = ctx;
  const action = input.action;
  const policy = tool.policy ?? (tool.persists ? persistencePolicy(tool, tool.persists) : undefined);
  if (action === null || policy === undefined) return { ok: false, code: "denied", error: `${tool.name} cannot be approved (it has no Sentinel policy).` };
  const gate = await gateAsk(store, { personId: context.personId, taskId: context.taskId, action, tool: tool.name, now: input.now, tainted: input.tainted, denialsFrom: state.denialsFrom, recurring: state.recurring });
  if (gate.kind === "answer") {
    await store.audit.appendAudit({ personId: context.personId, kind: gate.audit.kind, summary: gate.audit.summary, data: gate.audit.data, at: input.now });
    return gate.result;
  }
  const scrub = ctx.scrub;
  const summary = described ? summariseDescribed(described, action, scrub) : summariseAction(policy, args, action, scrub);
  if (input.persists === true) summary.other.unshift(...persistenceNotes(tool, input, context));
  const details = await requestDetails(store, {
    personId: context.personId,
    taskId: context.taskId,
    action,
    summary,
    onceOnly: described?.onceOnly === true || (input.persists === true && !input.tainted),
    ruleId: decision.ruleId,
    reason: decision.reason,
    tainted: input.tainted,
    seen: state.seen,
    now: input.now,
  });
  const request = await store.approvals.createApprovalRequest({
    personId: context.personId,
    taskId: context.taskId,
    capability: input.capability,
    summary: `${summary.method} ${summary.where} (${tool.name})`,
    details,
    expiresAt: new Date(input.now.getTime() + ctx.ttlMs),
  });
  await store.audit.appendAudit({
    personId: context.personId,
    kind: "approval.requested",
    summary: `Asked to approve ${request.summary}`,
    data: { approvalId: request.id, ruleId: decision.ruleId, expiresAt: request.expiresAt.toISOString(), offered: details.offered, provenance: details.provenance.kind, idempotencyKey: context.idempotencyKey },
    at: input.now,
  });
  try {
    await ctx.onApprovalRequested?.(request);
  } catch (error) {
    ctx.logger?.error({ err: error, approvalId: request.id }, "onApprovalRequested failed");
  }
  return {
    ok: false,
    code: "approval_required",
    error: `${tool.name} needs the person's approval (${decision.reason}). It did not run; the request ${request.id} waits for their answer.`,
    data: { approvalId: request.id },
  };
}
