/**
 * Sentinel's policy as data: a zod-validated table of rules, and `decide`, the pure function that
 * applies it. Every matching rule is collected; **deny beats ask beats allow**; when nothing matches,
 * the answer is `ask` (fail closed). Grants are checked here too (scope, expiry, revocation,
 * consumption), so `decide` needs nothing but its input.
 */
import { z } from "zod";
import type { Grant } from "../storage/types.js";
import type { Decision, DecisionInput, Destination, Effect } from "./types.js";

const kinds = ["url", "recipient", "blocked", "other", "none"] as const;

/** One rule: when every condition in `match` holds (absent ones are "any"), it proposes `effect`. */
export const policyRuleSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
    description: z.string().min(1),
    effect: z.enum(["allow", "deny", "ask"]),
    match: z
      .object({
        /** Capability glob: `*` matches any run of characters (`web.*`, `*`). */
        capability: z.string().min(1).default("*"),
        access: z.array(z.enum(["read", "write", "internal"])).min(1).optional(),
        tainted: z.boolean().optional(),
        /** An active grant covers the call (every destination). */
        granted: z.boolean().optional(),
        hardToUndo: z.boolean().optional(),
        carriesData: z.boolean().optional(),
        /** Some destination is of one of these kinds (`none`: the call has no destination). */
        destination: z.array(z.enum(kinds)).min(1).optional(),
      })
      .strict(),
  })
  .strict();

/** A rule table; ids are unique. */
export const policySchema = z.array(policyRuleSchema).superRefine((rules, ctx) => {
  const seen = new Set<string>();
  for (const [i, rule] of rules.entries()) {
    if (seen.has(rule.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `duplicate rule id ${rule.id}` });
    seen.add(rule.id);
  }
});

export type PolicyRule = z.infer<typeof policyRuleSchema>;
export type Policy = z.infer<typeof policySchema>;

/** Familiar's default rules (see ARCHITECTURE.md, "Security model (Sentinel)"). */
export const defaultPolicy: Policy = policySchema.parse([
  {
    id: "deny-blocked-destination",
    description: "Non-http(s) schemes and loopback, private, link-local or cloud-metadata addresses are never reachable.",
    effect: "deny",
    match: { destination: ["blocked"] },
  },
  {
    id: "allow-internal",
    description: "Internal tools (goals, memory, wake-ups) act inside Familiar only; they run and are audited.",
    effect: "allow",
    match: { access: ["internal"] },
  },
  {
    id: "ask-tainted-egress",
    description: "Untrusted content is in this activation: anything that can carry data to a destination not already granted asks.",
    effect: "ask",
    match: { tainted: true, carriesData: true, granted: false },
  },
  {
    id: "ask-hard-to-undo",
    description: "Actions that are hard to undo ask unless a grant covers them.",
    effect: "ask",
    match: { hardToUndo: true, granted: false },
  },
  {
    id: "ask-write",
    description: "Writes ask unless a grant covers them.",
    effect: "ask",
    match: { access: ["write"], granted: false },
  },
  {
    id: "ask-read-new-destination",
    description: "Reads from a destination no grant covers ask.",
    effect: "ask",
    match: { access: ["read"], granted: false },
  },
  {
    id: "allow-granted",
    description: "Reads and writes covered by an active grant run without asking.",
    effect: "allow",
    match: { access: ["read", "write"], granted: true },
  },
]);

/** Parses a rule table from configuration. @throws ZodError listing every bad rule. */
export function parsePolicy(value: unknown): Policy {
  return policySchema.parse(value);
}

/** True when `capability` matches the glob (`*` matches any run of characters, dots included). */
export function capabilityMatches(glob: string, capability: string): boolean {
  const pattern = glob.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${pattern}$`).test(capability);
}

/** True when the grant is usable for this call at all: live, same capability, scope valid now. */
export function grantApplies(grant: Grant, input: Pick<DecisionInput, "capability" | "taskId" | "sessionId" | "now">): boolean {
  if (grant.revokedAt !== null || grant.consumedAt !== null) return false;
  if (!capabilityMatches(grant.capability, input.capability)) return false;
  const scope = grant.scope;
  switch (scope.kind) {
    case "once":
    case "always":
      return true;
    case "task":
      return input.taskId !== null && scope.taskId === input.taskId;
    case "session":
      return input.sessionId !== null && scope.sessionId === input.sessionId;
    case "until":
      return scope.until.getTime() > input.now.getTime();
  }
}

/** True when the grant's constraints allow this destination (absent constraints allow any). */
export function grantCoversDestination(grant: Grant, destination: Destination): boolean {
  const { destination: allowed, recipient } = grant.constraints;
  if (allowed === undefined && recipient === undefined) return true;
  switch (destination.kind) {
    case "url":
      return allowed !== undefined && (allowed === destination.origin || allowed.toLowerCase() === destination.host);
    case "recipient":
      return recipient !== undefined && recipient.toLowerCase() === destination.value;
    case "other":
      return allowed !== undefined && allowed === destination.value;
    case "blocked":
      return false;
  }
}

/**
 * The grants that together cover the call, or null when some destination is not covered. A call
 * without destinations needs a grant without destination constraints. Longer-lived grants are
 * preferred, so a once-grant is only spent when nothing else covers the call.
 */
export function coveringGrants(input: DecisionInput): Grant[] | null {
  const usable = input.grants.filter(
    (g) =>
      grantApplies(g, input) &&
      (g.constraints.action === undefined ? input.exactOnly !== true : g.constraints.action === input.actionDigest),
  );
  const ordered = [...usable.filter((g) => g.scope.kind !== "once"), ...usable.filter((g) => g.scope.kind === "once")];
  if (input.destinations.length === 0) {
    const open = ordered.find((g) => g.constraints.destination === undefined && g.constraints.recipient === undefined);
    return open === undefined ? null : [open];
  }
  const used: Grant[] = [];
  for (const destination of input.destinations) {
    const grant = ordered.find((g) => grantCoversDestination(g, destination));
    if (grant === undefined) return null;
    if (!used.includes(grant)) used.push(grant);
  }
  return used;
}

function ruleMatches(rule: PolicyRule, input: DecisionInput, granted: boolean): boolean {
  const m = rule.match;
  if (!capabilityMatches(m.capability, input.capability)) return false;
  if (m.access !== undefined && !m.access.includes(input.access)) return false;
  if (m.tainted !== undefined && m.tainted !== input.tainted) return false;
  if (m.granted !== undefined && m.granted !== granted) return false;
  if (m.hardToUndo !== undefined && m.hardToUndo !== input.hardToUndo) return false;
  if (m.carriesData !== undefined && m.carriesData !== input.carriesData) return false;
  if (m.destination !== undefined) {
    const present = input.destinations.length === 0 ? ["none"] : input.destinations.map((d) => d.kind);
    if (!present.some((k) => m.destination!.includes(k as (typeof kinds)[number]))) return false;
  }
  return true;
}

const precedence: readonly Effect[] = ["deny", "ask", "allow"];

/**
 * Decides one call. Of all matching rules, the first `deny` wins, else the first `ask`, else the
 * first `allow`; no match → `ask` with rule id `default`. On `allow` by a granted rule the covering
 * grants are returned (the caller consumes once-grants atomically before executing).
 */
export function decide(input: DecisionInput, policy: Policy = defaultPolicy): Decision {
  const grants = coveringGrants(input);
  const granted = grants !== null;
  const matching = policy.filter((rule) => ruleMatches(rule, input, granted));
  for (const effect of precedence) {
    const rule = matching.find((r) => r.effect === effect);
    if (rule === undefined) continue;
    const used = effect === "allow" && granted && rule.match.granted === true ? grants : [];
    return { effect, ruleId: rule.id, reason: rule.description, grants: used, ...(used[0] ? { grant: used[0] } : {}) };
  }
  return { effect: "ask", ruleId: "default", reason: "No rule matched this call; asking (fail closed).", grants: [] };
}
