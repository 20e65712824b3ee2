/**
 * The Sentinel facade: the one path from a model's tool call to a side effect or to the network.
 *
 * For every call it derives the call's action descriptor from the validated arguments
 * (core/policy/descriptor.ts), lists the person's live grants (core/policy/grants.ts: scope checked at Sentinel's own
 * monotonic time, the person's session tracked by Sentinel, task grants ending with their task),
 * asks `decide` (core/policy/rules.ts), writes an audit event (rule and reason, never a secret value) and then:
 * - `allow` → consumes a covering once-grant atomically, substitutes secrets, runs the tool (with a
 *   follow-up check for redirects to another origin), scrubs secret values out of the result, and
 *   records the hosts named in untrusted results (core/policy/provenance.ts);
 * - `deny` → `{ ok: false, code: "denied" }`;
 * - `ask` → applies the fatigue rules (core/approvals/asking.ts), stores an approval request with the descriptor,
 *   a readable summary and the choices risk allows, calls `onApprovalRequested`, and returns
 *   `{ ok: false, code: "approval_required", data: { approvalId } }`.
 *
 * @example
 * const sentinel = new Sentinel({ store, egress, vault, logger, onApprovalRequested, now: () => clock.now() });
 * // one wrapper per activation: it remembers the activation's taint and untrusted content
 * await runToolLoop({ …, executeTool: sentinel.wrap(undefined, { tainted }) });
 */
import { systemClock } from "../clock.js";
import type { ExecuteTool } from "../tool-loop/index.js";
import {
  type FollowUp,
  type FollowUpVerdict,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  ActionUnavailableError,
  type ActionDescription,
} from "../tools/index.js";
import {
  carriesData,
  classifyTarget,
  describeAction,
  describedAction,
  describeTarget,
  type ActionDescriptor,
  liveGrants,
  type ActiveGrant,
  decide,
  defaultPolicy,
  MAX_UNASKED_JOB_DEPTH,
  type Policy,
  hostsIn,
  persistencePolicy,
  SentinelClock,
  SessionTracker,
  type Decision,
  type DecisionInput,
} from "../policy/index.js";
import { EgressDeniedError, EgressFailedError } from "../egress/index.js";
import { SecretError } from "../secrets/index.js";
import { askApproval } from "./ask.js";
import { auditDecision } from "./audit.js";
import type { ActivationOptions, ActivationState, SentinelDeps } from "./deps.js";
import { SecretGuard } from "./secret-guard.js";

export type { ActivationOptions, SentinelDeps, SentinelStore } from "./deps.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const TAINT_MEMORY = 1000;
/** Untrusted text kept per activation for provenance, characters. */
const SEEN_CHARS = 256 * 1024;

/** Default executor: the tool itself. */
const runTool: ExecuteTool = (tool, args, context) => tool.execute(args, context);

/** Sentinel: policy, grants, approvals, secrets and audit around every tool call. */
export class Sentinel {
  private readonly policy: Policy;
  private readonly ttlMs: number;
  readonly clock: SentinelClock;
  readonly sessions: SessionTracker;
  private readonly secrets: SecretGuard;

  constructor(private readonly deps: SentinelDeps) {
    this.secrets = new SecretGuard(deps.vault, deps.scrub);
    this.policy = deps.policy ?? defaultPolicy;
    this.ttlMs = deps.approvalTtlMs ?? DAY_MS;
    this.clock = deps.clock ?? new SentinelClock(deps.store, deps.now ?? (() => systemClock.now()));
    this.sessions = deps.sessions ?? new SessionTracker(deps.store);
  }

  /** An activation's gate (the runtime's `ActivationDeps.gate`): `wrap` with the activation's taint and job-chain depth. */
  gate = (inner: ExecuteTool, activation: { tainted: boolean; taintSource: string | null; chainDepth: number; sessionId: string; denialsFrom?: Date | null; recurring?: boolean }): ExecuteTool =>
    this.wrap(inner, {
      tainted: activation.tainted,
      chainDepth: activation.chainDepth,
      sessionId: activation.sessionId,
      denialsFrom: activation.denialsFrom ?? null,
      recurring: activation.recurring === true,
      ...(activation.taintSource !== null && { taintSource: activation.taintSource }),
    });

  /**
   * Returns an {@link ExecuteTool} for `runToolLoop`. Create one per activation: it remembers that
   * the activation became tainted (a tool returned `untrusted` content) and what that content was,
   * and keeps later calls tainted whatever the caller passes. Activations are told apart by the
   * idempotency key's prefix, so a shared wrapper never un-taints anything either.
   */
  wrap(inner: ExecuteTool = runTool, options: ActivationOptions = {}): ExecuteTool {
    const states = new Map<string, ActivationState>();
    return async (tool, args, context) => {
      const key = activationKeyOf(context.idempotencyKey);
      let state = states.get(key);
      if (state === undefined) {
        state = { denialsFrom: options.denialsFrom ?? null, recurring: options.recurring === true, tainted: false, seen: [], seenChars: 0 };
        states.set(key, state);
        if (states.size > TAINT_MEMORY) states.delete(states.keys().next().value!);
      }
      const tainted = options.tainted === true || context.tainted === true || state.tainted;
      const source = state.seen.at(-1)?.source ?? options.taintSource ?? context.taintSource ?? "outside content";
      const chainDepth = Math.max(options.chainDepth ?? 0, context.chainDepth ?? 0);
      const result = await this.execute(inner, tool, args, { ...context, tainted, chainDepth, ...(tainted ? { taintSource: source } : {}) }, state);
      if (result.ok && result.untrusted !== undefined) {
        state.tainted = true;
        if (state.seenChars < SEEN_CHARS) {
          const text = result.content.slice(0, SEEN_CHARS - state.seenChars);
          state.seen.push({ source: result.untrusted.source, text });
          state.seenChars += text.length;
        }
      }
      return result;
    };
  }

  /**
   * Judges a call without running it (what `wrap` does first). For a describing tool the action it
   * would perform is returned too. @throws ActionUnavailableError when a describing tool has nothing to act on
   */
  async check(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<{ decision: Decision; input: DecisionInput; described: ActionDescription | null }> {
    const { input, described } = await this.decisionInput(tool, args, context);
    return { decision: decide(input, this.policy), input, described };
  }

  private async execute(inner: ExecuteTool, tool: ToolDefinition, args: unknown, context: ToolContext, state: ActivationState): Promise<ToolResult> {
    let checked: Awaited<ReturnType<Sentinel["check"]>>;
    try {
      checked = await this.check(tool, args, context);
    } catch (error) {
      // A describing tool with nothing to act on (no page open, an unknown element): told as is.
      if (error instanceof ActionUnavailableError) return { ok: false, code: error.code, error: this.secrets.scrubText(error.message) };
      throw error;
    }
    const { decision, input, described } = checked;
    let final = decision;
    let runArgs = args;
    if (final.effect !== "deny") {
      // A raw vault value (any encoding) on its way to an origin it is not bound to: denied whatever the grants say.
      const leaked = this.secrets.unboundValues(args, input.action);
      if (leaked !== null) final = { effect: "deny", ruleId: "secret_unbound_destination", reason: leaked };
    }
    if (final.effect !== "deny") {
      const substituted = this.secrets.substitute(args, input.action, context.personId, tool.policy?.destinationArgs ?? []);
      if (substituted.ok) runArgs = substituted.value;
      else final = { effect: "deny", ruleId: "secret-binding", reason: substituted.reason };
    }
    if (final.effect === "allow") final = await this.consumeOnce(final, input);
    await auditDecision({ store: this.deps.store, logger: this.deps.logger, scrub: (s) => this.secrets.scrubText(s) }, tool, args, context, input, final);

    if (final.effect === "deny") {
      if (final.ruleId === "secret_unbound_destination") {
        return { ok: false, code: "secret_unbound_destination", error: `Sentinel denied ${tool.name}: ${final.reason}. It did not run; do not retry it.` };
      }
      return { ok: false, code: "denied", error: `Sentinel denied ${tool.name}: ${final.reason} (rule ${final.ruleId}). It did not run; do not retry it.` };
    }
    if (final.effect === "ask") return askApproval({ store: this.deps.store, ttlMs: this.ttlMs, scrub: (s) => this.secrets.scrubText(s), logger: this.deps.logger, onApprovalRequested: this.deps.onApprovalRequested }, tool, args, context, input, final, state, described);

    let result: ToolResult;
    try {
      const run: ToolContext = { ...context, authorizeFollowUp: (followUp) => this.followUp(tool, followUp, context), ...(described ? { action: described } : {}) };
      result = await inner(tool, runArgs, run);
    } catch (error) {
      result = errorResult(tool, error);
    }
    const clean = this.secrets.scrubResult(result);
    if (!clean.ok && clean.code === "secret_unbound_destination") {
      await this.deps.store.audit.appendAudit({
        personId: context.personId,
        kind: "sentinel.secret_unbound_destination",
        summary: `Stopped ${tool.name}: ${clean.error}`,
        data: { tool: tool.name, idempotencyKey: context.idempotencyKey },
        at: await this.clock.now(),
      });
    }
    if (clean.ok && clean.untrusted !== undefined) {
      // Hosts the content names (not the content's own address, which Sentinel already judged).
      const own = new Set(hostsIn(clean.untrusted.source));
      const named = hostsIn(clean.content).filter((h) => !own.has(h));
      await this.deps.store.sentinel.noteUntrustedHosts(context.personId, named, clean.untrusted.source, input.now);
    }
    await this.deps.store.audit.appendAudit({
      personId: context.personId,
      kind: "tool.result",
      summary: `${tool.name} ${clean.ok ? "succeeded" : `failed (${clean.code})`}`,
      data: { tool: tool.name, ok: clean.ok, code: clean.ok ? null : clean.code, untrusted: clean.ok && clean.untrusted !== undefined, idempotencyKey: context.idempotencyKey },
      at: await this.clock.now(),
    });
    return clean;
  }

  private async decisionInput(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<{ input: DecisionInput; described: ActionDescription | null }> {
    const policy = tool.policy;
    const now = await this.clock.now();
    // A describing tool (the browser) says what the call would do now; others are read from their arguments.
    const described = policy?.describe ? await policy.describe(args, context) : null;
    const persistence = policy === undefined && described === null && tool.persists !== undefined ? persistencePolicy(tool, tool.persists) : null;
    const action = described
      ? describedAction(tool, described, this.deps.egress)
      : policy
        ? describeAction(tool, policy, args, this.deps.egress)
        : persistence
          ? describeAction(tool, persistence, args, this.deps.egress)
          : null;
    let grants: ActiveGrant[] = [];
    if (policy) {
      const session = await this.sessions.refresh(context.personId, now);
      grants = await liveGrants(this.deps.store, context.personId, { taskId: context.taskId, sessionId: session?.sessionId ?? null, now });
    } else if (persistence && tool.persists && (context.tainted === true || (tool.persists.createsJob(args) && (context.chainDepth ?? 0) >= MAX_UNASKED_JOB_DEPTH))) {
      // Only an exact once-grant can cover a persistence call, so no session is needed. The session
      // tracker is not asked here: this call runs inside the journal's store transaction, and the
      // tracker serialises per person with callers outside it (a press, an inbound message).
      grants = await liveGrants(this.deps.store, context.personId, { taskId: context.taskId, sessionId: null, now });
    }
    const input: DecisionInput = {
      capability: described?.capability ?? policy?.capability ?? tool.capability,
      access: described?.access ?? policy?.access ?? "internal",
      hardToUndo: described ? described.hardToUndo : policy?.hardToUndo === true,
      action,
      destinations: action?.targets ?? [],
      carriesData: described ? described.carriesData || (action?.targets.length ?? 0) > 0 : policy && action ? carriesData(policy, args, action.targets) : false,
      grants,
      taskId: context.taskId,
      tainted: context.tainted === true,
      ...(persistence && tool.persists
        ? { persists: true, createsJob: tool.persists.createsJob(args), chainDepth: context.chainDepth ?? 0, exactOnly: true }
        : { chainDepth: context.chainDepth ?? 0 }),
      ...(described?.onceOnly ? { exactOnly: true } : {}),
      now,
    };
    return { input, described };
  }

  /**
   * A follow-up the running tool discovered (a redirect to another origin): judged like a new call
   * of the same tool to that URL. Only an `allow` (a live grant covers it) lets it through; nothing
   * is asked mid-call — the tool reports the follow-up to the model, whose own call then asks.
   */
  private async followUp(tool: ToolDefinition, followUp: FollowUp, context: ToolContext): Promise<FollowUpVerdict> {
    const policy = tool.policy;
    if (!policy) return { allowed: false, reason: "the tool has no Sentinel policy" };
    const target = classifyTarget(followUp.url, this.deps.egress);
    const base = describeAction(tool, { ...policy, method: { fixed: followUp.method } }, { url: followUp.url }, this.deps.egress);
    const action: ActionDescriptor = { ...base, targets: [target] };
    const input = await this.decisionInputFor(action, policy.access, policy.hardToUndo === true, context);
    let decision = decide(input, this.policy);
    if (decision.effect === "allow") decision = await this.consumeOnce(decision, input);
    await this.deps.store.audit.appendAudit({
      personId: context.personId,
      kind: "sentinel.follow_up",
      summary: this.secrets.scrubText(`${decision.effect === "allow" ? "Followed" : "Stopped"} ${followUp.method} ${describeTarget(target)} (${followUp.why}) — ${decision.ruleId}`),
      data: { tool: tool.name, url: this.secrets.scrubText(followUp.url), effect: decision.effect, ruleId: decision.ruleId, grantId: decision.grant?.grant.id ?? null, idempotencyKey: context.idempotencyKey },
      at: input.now,
    });
    return decision.effect === "allow" ? { allowed: true } : { allowed: false, reason: decision.reason };
  }

  private async decisionInputFor(action: ActionDescriptor, access: "read" | "write", hardToUndo: boolean, context: ToolContext): Promise<DecisionInput> {
    const now = await this.clock.now();
    const session = await this.sessions.refresh(context.personId, now);
    const grants = await liveGrants(this.deps.store, context.personId, { taskId: context.taskId, sessionId: session?.sessionId ?? null, now });
    return { capability: action.capability, access, hardToUndo, action, destinations: action.targets, carriesData: true, grants, taskId: context.taskId, tainted: context.tainted === true, now };
  }

  /** Spends the once-grant an allow relies on; a lost race (already used) re-decides without it. */
  private async consumeOnce(decision: Decision, input: DecisionInput): Promise<Decision> {
    let current = decision;
    let grants = input.grants;
    for (let attempt = 0; attempt < 8 && current.effect === "allow"; attempt++) {
      const grant = current.grant;
      if (grant === undefined || grant.grant.scope.kind !== "once") return current;
      if (await this.deps.store.grants.consumeGrant(grant.grant.id, input.now)) return current;
      grants = grants.filter((g) => g !== grant);
      current = decide({ ...input, grants }, this.policy);
    }
    return current.effect === "allow" ? { effect: "ask", ruleId: "default", reason: "Grants kept being used concurrently; asking." } : current;
  }

}

/** `${activationKey}:${step}:${callIndex}` → `activationKey`. */
function activationKeyOf(idempotencyKey: string): string {
  return idempotencyKey.replace(/:\d+:\d+$/, "");
}

function errorResult(tool: ToolDefinition, error: unknown): ToolResult {
  if (error instanceof SecretError && error.code === "secret_unbound_destination") return { ok: false, code: error.code, error: error.message };
  if (error instanceof EgressDeniedError) {
    return { ok: false, code: "egress_denied", error: error.message, data: { reason: error.code, url: error.url, address: error.address } };
  }
  if (error instanceof EgressFailedError) return { ok: false, code: error.code, error: error.message };
  return { ok: false, code: "tool_threw", error: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}` };
}
