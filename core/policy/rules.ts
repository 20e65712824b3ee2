/**
 * Sentinel's policy as data: a zod-validated table of rules, and `decide`, the pure function that
 * applies it. Every matching rule is collected; **deny beats ask beats allow**; when nothing matches,
 * the answer is `ask` (fail closed). "Granted" means a live grant's pattern covers the call's action
 * descriptor (see patterns.ts); the caller passes only grants whose scope holds now.
 */
import { z } from "zod";
import { coveringGrant } from "./grants.js";
import type { Decision, DecisionInput, Effect } from "./decision.js";

const kinds = ["url", "file", "recipient", "blocked", "other", "none"] as const;

/**
 * Job-chain depth from which making a further job asks: jobs the person's own activations make have
 * depth 1; an activation such a job starts (depth 1) cannot make another one (depth 2) without the
 * person, and so on for every deeper link.
 */
export const MAX_UNASKED_JOB_DEPTH = 1;

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
        /** A live grant's pattern covers the call's action (method, targets, payload). */
        granted: z.boolean().optional(),
        hardToUndo: z.boolean().optional(),
        carriesData: z.boolean().optional(),
        /** Some destination is of one of these kinds (`none`: the call has no destination). */
        destination: z.array(z.enum(kinds)).min(1).optional(),
        /** The call's effect outlives the activation (memory, goals, wake-ups, webhooks). */
        persists: z.boolean().optional(),
        /** The call makes a job (a wake-up, a recurring check-in). */
        createsJob: z.boolean().optional(),
        /** The activation making the call is at least this many jobs deep (0: the person's own). */
        chainDepthAtLeast: z.number().int().min(0).optional(),
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
    id: "ask-tainted-persistence",
    description:
      "Untrusted content is in this activation: anything that outlives it (a memory item, a goal, a wake-up, a webhook) asks the person, and carries the taint if approved.",
    effect: "ask",
    match: { persists: true, tainted: true, granted: false },
  },
  {
    id: "ask-job-chain",
    description: `A job started this activation: a further job (a wake-up, a recurring check-in) needs the person (job chains deeper than ${MAX_UNASKED_JOB_DEPTH} ask).`,
    effect: "ask",
    match: { createsJob: true, chainDepthAtLeast: MAX_UNASKED_JOB_DEPTH, granted: false },
  },
  {
    id: "allow-granted-persistence",
    description: "A write that outlives the activation, approved by the person for exactly this call.",
    effect: "allow",
    match: { persists: true, granted: true },
  },
  {
    id: "allow-internal",
    description: "Internal tools (goals, memory, wake-ups) act inside Familiar only; outside the cases above they run and are audited.",
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

function ruleMatches(rule: PolicyRule, input: DecisionInput, granted: boolean): boolean {
  const m = rule.match;
  if (!capabilityMatches(m.capability, input.capability)) return false;
  if (m.access !== undefined && !m.access.includes(input.access)) return false;
  if (m.tainted !== undefined && m.tainted !== input.tainted) return false;
  if (m.granted !== undefined && m.granted !== granted) return false;
  if (m.hardToUndo !== undefined && m.hardToUndo !== input.hardToUndo) return false;
  if (m.carriesData !== undefined && m.carriesData !== input.carriesData) return false;
  if (m.persists !== undefined && m.persists !== (input.persists === true)) return false;
  if (m.createsJob !== undefined && m.createsJob !== (input.createsJob === true)) return false;
  if (m.chainDepthAtLeast !== undefined && (input.chainDepth ?? 0) < m.chainDepthAtLeast) return false;
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
 * grant is returned (the caller consumes a once-grant atomically before executing).
 */
export function decide(input: DecisionInput, policy: Policy = defaultPolicy): Decision {
  const grant = input.action === null ? null : coveringGrant(input.grants, input.action, { taskId: input.taskId, ...(input.exactOnly !== undefined && { exactOnly: input.exactOnly }) });
  const granted = grant !== null;
  const matching = policy.filter((rule) => ruleMatches(rule, input, granted));
  for (const effect of precedence) {
    const rule = matching.find((r) => r.effect === effect);
    if (rule === undefined) continue;
    const used = effect === "allow" && grant !== null && rule.match.granted === true ? grant : null;
    return { effect, ruleId: rule.id, reason: rule.description, ...(used ? { grant: used } : {}) };
  }
  return { effect: "ask", ruleId: "default", reason: "No rule matched this call; asking (fail closed)." };
}
