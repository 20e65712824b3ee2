/**
 * Sentinel's vocabulary: what a tool declares about itself (`ToolPolicy`), what `decide` looks at
 * (`DecisionInput`, built around the call's action descriptor — descriptor.ts) and what Sentinel
 * decides (`Decision`).
 *
 * Design notes — what we took from two pieces of prior work:
 *
 * - Simon Willison, "The lethal trifecta for AI agents" (2025): an agent that (1) can read private
 *   data, (2) is exposed to untrusted content and (3) can communicate externally can be made to leak
 *   that data by whoever writes the untrusted content, because the model cannot tell the person's
 *   instructions from instructions embedded in a page. Filtering prompts does not fix it; breaking a
 *   leg does. Familiar must read private data (memory) and must read the web, so Sentinel breaks the
 *   third leg at the moment it matters: once untrusted content entered an activation (`tainted`),
 *   every action that can carry data to a destination the person has not already granted asks the
 *   person, whatever the model says. Hence tools declare `destinationArgs` and `exfiltrationArgs`.
 *
 * - Google DeepMind, CaMeL ("Defeating Prompt Injections by Design", 2025): security comes from a
 *   deterministic layer outside the model that attaches capabilities and provenance to data and
 *   checks explicit policies before every tool call, so an injection cannot change what is allowed.
 *   We take the *policy outside the model* and *capabilities per tool* parts: each tool carries a
 *   capability and read/write access, policies are a data table checked by plain code, and
 *   provenance is tracked at activation granularity (taint) rather than per value — coarser than
 *   CaMeL's interpreter (we do not rewrite the model's plan into a program), but it needs no second
 *   model and fails closed: a tainted activation asks more, never less.
 */
import type { ActionDescriptor, ActionTarget } from "./descriptor.js";
import type { ActiveGrant } from "./grants.js";

/** Everything `decide` looks at. */
export interface DecisionInput {
  /** The tool's capability; for internal tools (no policy) the tool's own `capability`. */
  capability: string;
  /** `internal` for tools without a Sentinel policy. */
  access: "read" | "write" | "internal";
  hardToUndo: boolean;
  /** What the call does (null for internal tools). */
  action: ActionDescriptor | null;
  /** The action's targets (empty for internal tools). */
  destinations: ActionTarget[];
  /** True when the call has an argument that can carry data out, or a destination at all. */
  carriesData: boolean;
  /** The person's grants usable now (scope checked: task alive, session live, not expired). */
  grants: readonly ActiveGrant[];
  taskId: string | null;
  /** Untrusted content entered this activation's context before this call. */
  tainted: boolean;
  /** The call's effect outlives the activation (an internal tool with a `persists` declaration). Absent: false. */
  persists?: boolean;
  /** The call makes a job (a wake-up, a recurring check-in) that starts activations of its own. Absent: false. */
  createsJob?: boolean;
  /** Job-chain depth of the activation making the call (0: started by the person's messages). Absent: 0. */
  chainDepth?: number;
  /** Only a grant bound to this very action (an "Approve once") covers the call, whatever else exists (purchases). */
  exactOnly?: boolean;
  /** Sentinel's time (never earlier than any time it saw before: see `SentinelClock`). */
  now: Date;
}

/** Sentinel's answer for one call. */
export type Effect = "allow" | "deny" | "ask";

/** The result of `decide`: the effect, the rule that produced it, and the grant that covered the call. */
export interface Decision {
  effect: Effect;
  ruleId: string;
  reason: string;
  /** The covering grant (when the call is covered and allowed because of it). */
  grant?: ActiveGrant;
}
