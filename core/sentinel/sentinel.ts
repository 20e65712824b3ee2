/**
 * The Sentinel facade: the one path from a model's tool call to a side effect or to the network.
 *
 * For every call it reads the tool's {@link ToolPolicy}, extracts destinations, checks secret
 * references against their bound destinations, lists the person's active grants, asks `decide`,
 * writes an audit event (rule and reason, never a secret value) and then:
 * - `allow` → consumes once-grants atomically, substitutes secrets, runs the tool, scrubs secret
 *   values out of the result, and marks the activation tainted when the result is untrusted;
 * - `deny` → `{ ok: false, code: "denied" }`;
 * - `ask` → persists an approval request (default expiry 24 h), calls `onApprovalRequested`, and
 *   returns `{ ok: false, code: "approval_required", data: { approvalId } }`.
 *
 * @example
 * const sentinel = new Sentinel({ store, egress, vault, logger, onApprovalRequested });
 * // one wrapper per activation: it remembers the activation's taint
 * await runToolLoop({ …, executeTool: sentinel.wrap(undefined, { sessionId }) });
 */
import type { Logger } from "../log.js";
import type { ExecuteTool } from "../harness/types.js";
import type { Store } from "../storage/ports.js";
import type { ApprovalRequest, Grant, Json } from "../storage/types.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../tools/tool.js";
import { ActionUnavailableError, type ActionDescription } from "./action.js";
import { carriesData, classifyDestination, describeDestination, extractDestinations, type UrlPrecheck } from "./destinations.js";
import { EgressDeniedError, EgressFailedError, SecretError } from "./errors.js";
import { decide, defaultPolicy, type Policy } from "./policy.js";
import type { Decision, DecisionInput, Destination } from "./types.js";
import type { SecretVault } from "./vault.js";

/** What the facade needs. */
export interface SentinelDeps {
  store: Pick<Store, "grants" | "approvals" | "audit">;
  /** The egress guard (its URL precheck classifies destinations before anything runs). */
  egress: UrlPrecheck;
  vault?: SecretVault;
  policy?: Policy;
  logger?: Logger;
  /** Called after an approval request is stored: the runtime suspends the task and sends the card. */
  onApprovalRequested?: (request: ApprovalRequest) => void | Promise<void>;
  /** How long an approval request stays answerable, ms (default 24 h). */
  approvalTtlMs?: number;
  /** Wall clock for grant expiry and consumption (default `new Date()`). */
  now?: () => Date;
}

/** Per-activation settings of {@link Sentinel.wrap}. */
export interface ActivationOptions {
  /** The activation starts tainted (e.g. it resumes a task whose context holds untrusted content). */
  tainted?: boolean;
  /** The chain of activations (session grants match it); `context.sessionId` wins when set. */
  sessionId?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const TAINT_MEMORY = 1000;

/** Default executor: the tool itself. */
const runTool: ExecuteTool = (tool, args, context) => tool.execute(args, context);

/** Sentinel: policy, grants, approvals, secrets and audit around every tool call. */
export class Sentinel {
  private readonly policy: Policy;
  private readonly ttlMs: number;
  private readonly clock: () => Date;

  constructor(private readonly deps: SentinelDeps) {
    this.policy = deps.policy ?? defaultPolicy;
    this.ttlMs = deps.approvalTtlMs ?? DAY_MS;
    this.clock = deps.now ?? (() => new Date());
  }

  /**
   * Returns an {@link ExecuteTool} for `runToolLoop`. Create one per activation: it remembers that
   * the activation became tainted (a tool returned `untrusted` content) and keeps later calls
   * tainted whatever the caller passes. Activations are told apart by the idempotency key's prefix,
   * so a shared wrapper never un-taints anything either.
   */
  wrap(inner: ExecuteTool = runTool, options: ActivationOptions = {}): ExecuteTool {
    const tainted = new Set<string>();
    return async (tool, args, context) => {
      const key = activationKeyOf(context.idempotencyKey);
      const isTainted = options.tainted === true || context.tainted === true || tainted.has(key);
      const sessionId = context.sessionId ?? options.sessionId ?? null;
      const result = await this.execute(inner, tool, args, { ...context, tainted: isTainted, ...(sessionId ? { sessionId } : {}) });
      if (result.ok && result.untrusted !== undefined) {
        tainted.add(key);
        if (tainted.size > TAINT_MEMORY) tainted.delete(tainted.values().next().value!);
      }
      return result;
    };
  }

  /**
   * Judges a call without running it (what `wrap` does first). For a describing tool the action it
   * would perform is returned too. @throws ActionUnavailableError when a describing tool has nothing to act on
   */
  async check(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<{ decision: Decision; input: DecisionInput; action: ActionDescription | null }> {
    const { input, action } = await this.decisionInput(tool, args, context);
    return { decision: decide(input, this.policy), input, action };
  }

  private async execute(inner: ExecuteTool, tool: ToolDefinition, args: unknown, context: ToolContext): Promise<ToolResult> {
    let checked: Awaited<ReturnType<Sentinel["check"]>>;
    try {
      checked = await this.check(tool, args, context);
    } catch (error) {
      if (error instanceof ActionUnavailableError) return { ok: false, code: error.code, error: this.deps.vault ? this.deps.vault.scrub(error.message) : error.message };
      throw error;
    }
    const { decision, input, action } = checked;
    let final = decision;
    let runArgs = args;
    if (final.effect !== "deny") {
      const substituted = this.substitute(args, input.destinations);
      if (substituted.ok) runArgs = substituted.value;
      else final = { effect: "deny", ruleId: "secret-binding", reason: substituted.reason, grants: [] };
    }
    if (final.effect === "allow") final = await this.consumeOnceGrants(final, input);
    await this.audit(tool, args, context, input, final);

    if (final.effect === "deny") {
      return { ok: false, code: "denied", error: `Sentinel denied ${tool.name}: ${final.reason} (rule ${final.ruleId}). It did not run; do not retry it.` };
    }
    if (final.effect === "ask") return this.ask(tool, args, context, input, final, action);

    let result: ToolResult;
    try {
      result = await inner(tool, runArgs, action ? { ...context, action } : context);
    } catch (error) {
      result = errorResult(tool, error);
    }
    const clean = this.scrubResult(result);
    await this.deps.store.audit.appendAudit({
      personId: context.personId,
      kind: "tool.result",
      summary: `${tool.name} ${clean.ok ? "succeeded" : `failed (${clean.code})`}`,
      data: { tool: tool.name, ok: clean.ok, code: clean.ok ? null : clean.code, untrusted: clean.ok && clean.untrusted !== undefined, idempotencyKey: context.idempotencyKey },
    });
    return clean;
  }

  private async decisionInput(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<{ input: DecisionInput; action: ActionDescription | null }> {
    const policy = tool.policy;
    const now = this.clock();
    const base = {
      grants: policy ? await this.deps.store.grants.listActiveGrants(context.personId, now) : [],
      taskId: context.taskId,
      sessionId: context.sessionId ?? null,
      tainted: context.tainted === true,
      now,
    };
    if (policy?.describe) {
      // The tool describes what the call would do now (a page's link, form or checkout).
      const action = await policy.describe(args, context);
      const destinations = dedupe(action.destinations.map((d) => classifyDestination(d, this.deps.egress)));
      const input: DecisionInput = {
        ...base,
        capability: action.capability,
        access: action.access,
        hardToUndo: action.hardToUndo,
        destinations,
        carriesData: action.carriesData || destinations.length > 0,
        actionDigest: action.digest,
        exactOnly: action.onceOnly,
      };
      return { input, action };
    }
    const destinations = policy ? extractDestinations(policy, args, this.deps.egress) : [];
    const input: DecisionInput = {
      ...base,
      capability: policy?.capability ?? tool.capability,
      access: policy?.access ?? "internal",
      hardToUndo: policy?.hardToUndo === true,
      destinations,
      carriesData: policy ? carriesData(policy, args, destinations) : false,
    };
    return { input, action: null };
  }

  /** Secret references go only to destinations they are bound to (every URL destination of the call). */
  private substitute(args: unknown, destinations: Destination[]): { ok: true; value: unknown } | { ok: false; reason: string } {
    const vault = this.deps.vault;
    const names = vault?.references(args) ?? referencesWithoutVault(args);
    if (names.length === 0) return { ok: true, value: args };
    if (vault === undefined) return { ok: false, reason: `secret references (${names.join(", ")}) but no vault is configured` };
    const urls = destinations.filter((d) => d.kind === "url");
    if (urls.length === 0 || urls.length !== destinations.length) {
      return { ok: false, reason: `secrets (${names.join(", ")}) may only be sent to a bound http(s) destination` };
    }
    try {
      let value = args;
      for (const d of urls) value = vault.substituteSecrets(args, d.origin);
      return { ok: true, value };
    } catch (error) {
      if (error instanceof SecretError) return { ok: false, reason: error.message };
      throw error;
    }
  }

  /** Spends the once-grants an allow relies on; a lost race (already used) re-decides without it. */
  private async consumeOnceGrants(decision: Decision, input: DecisionInput): Promise<Decision> {
    let current = decision;
    let grants = input.grants;
    for (let attempt = 0; attempt < 8 && current.effect === "allow"; attempt++) {
      const once = current.grants.filter((g) => g.scope.kind === "once");
      const lost: Grant[] = [];
      for (const g of once) if (!(await this.deps.store.grants.consumeGrant(g.id, input.now))) lost.push(g);
      if (lost.length === 0) return current;
      grants = grants.filter((g) => !lost.includes(g));
      current = decide({ ...input, grants }, this.policy);
    }
    return current.effect === "allow" ? { effect: "ask", ruleId: "default", reason: "Grants kept being used concurrently; asking.", grants: [] } : current;
  }

  private async ask(tool: ToolDefinition, args: unknown, context: ToolContext, input: DecisionInput, decision: Decision, action: ActionDescription | null): Promise<ToolResult> {
    const created = this.clock();
    const request = await this.deps.store.approvals.createApprovalRequest({
      personId: context.personId,
      taskId: context.taskId,
      capability: input.capability,
      summary: action ? this.scrub(action.summary) : summaryOf(tool, input),
      details: {
        tool: tool.name,
        access: input.access,
        destinations: input.destinations as unknown as Json,
        sessionId: input.sessionId,
        ruleId: decision.ruleId,
        reason: decision.reason,
        tainted: input.tainted,
        args: this.preview(args),
        ...(action ? { action: this.preview(action) } : {}),
      },
      expiresAt: new Date(created.getTime() + this.ttlMs),
    });
    await this.deps.store.audit.appendAudit({
      personId: context.personId,
      kind: "approval.requested",
      summary: `Asked to approve ${request.summary}`,
      data: { approvalId: request.id, ruleId: decision.ruleId, expiresAt: request.expiresAt.toISOString() },
    });
    try {
      await this.deps.onApprovalRequested?.(request);
    } catch (error) {
      this.deps.logger?.error({ err: error, approvalId: request.id }, "onApprovalRequested failed");
    }
    return {
      ok: false,
      code: "approval_required",
      error: `${tool.name} needs the person's approval (${decision.reason}). It did not run; the request ${request.id} waits for their answer.`,
      data: { approvalId: request.id },
    };
  }

  private async audit(tool: ToolDefinition, args: unknown, context: ToolContext, input: DecisionInput, decision: Decision): Promise<void> {
    const data = {
      tool: tool.name,
      capability: input.capability,
      access: input.access,
      destinations: input.destinations.map(describeDestination),
      effect: decision.effect,
      ruleId: decision.ruleId,
      reason: decision.reason,
      tainted: input.tainted,
      taskId: input.taskId,
      sessionId: input.sessionId,
      grantIds: decision.grants.map((g) => g.id),
      idempotencyKey: context.idempotencyKey,
      args: this.preview(args),
    };
    // Arguments stay out of logs (they may hold personal data); the person's audit log keeps a preview.
    const { args: _args, ...logged } = data;
    this.deps.logger?.info({ sentinel: logged }, `sentinel ${decision.effect} ${tool.name} (${decision.ruleId})`);
    await this.deps.store.audit.appendAudit({
      personId: context.personId,
      kind: "sentinel.decision",
      summary: `${decision.effect} ${summaryOf(tool, input)} — ${decision.ruleId}`,
      data,
    });
  }

  /** Arguments for audit and cards: references kept, any known secret value scrubbed, long strings cut. */
  private preview(args: unknown): Json {
    const cut = (v: unknown, depth: number): Json => {
      if (typeof v === "string") {
        const s = this.deps.vault ? this.deps.vault.scrub(v) : v;
        return s.length > 300 ? `${s.slice(0, 300)}… (${s.length} characters)` : s;
      }
      if (typeof v === "number" || typeof v === "boolean" || v === null) return v;
      if (depth > 4 || typeof v !== "object") return null;
      if (Array.isArray(v)) return v.slice(0, 20).map((x) => cut(x, depth + 1));
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cut(x, depth + 1)]));
    };
    return cut(args, 0);
  }

  private scrub(text: string): string {
    return this.deps.vault ? this.deps.vault.scrub(text) : text;
  }

  private scrubResult(result: ToolResult): ToolResult {
    const vault = this.deps.vault;
    if (vault === undefined) return result;
    return result.ok ? { ...result, content: vault.scrub(result.content) } : { ...result, error: vault.scrub(result.error) };
  }
}

function dedupe(destinations: Destination[]): Destination[] {
  const seen = new Set<string>();
  return destinations.filter((d) => {
    const key = JSON.stringify(d);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `${activationKey}:${step}:${callIndex}` → `activationKey`. */
function activationKeyOf(idempotencyKey: string): string {
  return idempotencyKey.replace(/:\d+:\d+$/, "");
}

function referencesWithoutVault(args: unknown): string[] {
  return /\{\{secret:[A-Za-z0-9_.-]{1,64}\}\}/.test(JSON.stringify(args) ?? "") ? ["(unknown)"] : [];
}

function summaryOf(tool: ToolDefinition, input: DecisionInput): string {
  const where = input.destinations.map(describeDestination).join(", ");
  return `${tool.name} (${input.capability}, ${input.access})${where ? ` → ${where}` : ""}`;
}

function errorResult(tool: ToolDefinition, error: unknown): ToolResult {
  if (error instanceof EgressDeniedError) {
    return { ok: false, code: "egress_denied", error: error.message, data: { reason: error.code, url: error.url, address: error.address } };
  }
  if (error instanceof EgressFailedError) return { ok: false, code: error.code, error: error.message };
  return { ok: false, code: "TOOL_THREW", error: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}` };
}
