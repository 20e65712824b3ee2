/** Sentinel's audit of each decision: the log line (no arguments) and the person's audit row (a scrubbed preview of them). */
import type { Json } from "../json.js";
import type { Logger } from "../log/index.js";
import { describeTarget, type Decision, type DecisionInput } from "../policy/index.js";
import type { ToolContext, ToolDefinition } from "../tools/index.js";
import type { SentinelStore } from "./deps.js";

/** What the audit needs from the facade. */
export interface AuditContext {
  store: SentinelStore;
  logger?: Logger;
  /** Scrubs known secret values out of the arguments' preview. */
  scrub: (text: string) => string;
}

/** Logs and audits one decision on a call. */
export async function auditDecision(ctx: AuditContext, tool: ToolDefinition, args: unknown, context: ToolContext, input: DecisionInput, decision: Decision): Promise<void> {
  const data = {
    tool: tool.name,
    capability: input.capability,
    access: input.access,
    method: input.action?.method ?? null,
    destinations: input.destinations.map(describeTarget),
    digest: input.action?.digest ?? null,
    effect: decision.effect,
    ruleId: decision.ruleId,
    reason: decision.reason,
    tainted: input.tainted,
    taskId: input.taskId,
    grantId: decision.grant?.grant.id ?? null,
    idempotencyKey: context.idempotencyKey,
  };
  // Arguments stay out of logs (they may hold personal data); the person's audit log keeps a preview.
  ctx.logger?.info({ sentinel: data }, `sentinel ${decision.effect} ${tool.name} (${decision.ruleId})`);
  const what = input.action ? `${input.action.method} ${input.destinations.map(describeTarget).join(", ") || tool.name}` : tool.name;
  await ctx.store.audit.appendAudit({
    personId: context.personId,
    kind: "sentinel.decision",
    summary: `${decision.effect} ${what} (${tool.name}) — ${decision.ruleId}`,
    data: { ...data, args: previewArgs(args, ctx.scrub) },
    at: input.now,
  });
}

/** Arguments for the audit log: references kept, any known secret value scrubbed, long strings cut. */
export function previewArgs(args: unknown, scrub: (text: string) => string): Json {
  const cut = (v: unknown, depth: number): Json => {
    if (typeof v === "string") {
      const s = scrub(v);
      return s.length > 300 ? `${s.slice(0, 300)}… (${s.length} characters)` : s;
    }
    if (typeof v === "number" || typeof v === "boolean" || v === null) return v;
    if (depth > 4 || typeof v !== "object") return null;
    if (Array.isArray(v)) return v.slice(0, 20).map((x) => cut(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cut(x, depth + 1)]));
  };
  return cut(args, 0);
}
