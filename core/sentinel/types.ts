/**
 * Sentinel's vocabulary: what a tool declares about itself (`ToolPolicy`), where a call goes
 * (`Destination`), and what Sentinel decides (`Decision`).
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
import type { Grant } from "../storage/types.js";
import type { ToolContext } from "../tools/tool.js";
import type { ActionDescription } from "./action.js";

/** What a tool declares to Sentinel. Tools without one are internal (goals, memory): allowed, still audited. */
export interface ToolPolicy {
  /** Dotted capability, e.g. `web.fetch`, `web.request`, `email.send`. Grants are per capability. */
  capability: string;
  /** `read` gets information; `write` changes something or sends something outside. */
  access: "read" | "write";
  /** Argument paths (dot notation, `[]` for arrays, e.g. `to[]`) holding URLs, recipients or payees. */
  destinationArgs: string[];
  /** Argument paths that can carry data out (a request body, an email text). */
  exfiltrationArgs: string[];
  /** Payments, deletions, messages to other people: always asked unless a grant covers it. */
  hardToUndo?: boolean;
  /**
   * For tools whose effect depends on outside state (a web page): describes the exact action the
   * call would perform now (`core/sentinel/action.ts`). When present, Sentinel judges the
   * description instead of the argument paths above, shows it on the card and binds approvals to
   * its digest; the tool receives it as `context.action` and must refuse to act if its effect no
   * longer has that digest. Throws `ActionUnavailableError` when there is nothing to describe.
   */
  describe?: (args: unknown, context: ToolContext) => Promise<ActionDescription>;
}

/**
 * A normalized destination of a call:
 * - `url`: an http(s) URL, by `origin` (`https://api.example.com:8443`) and `host` (hostname only);
 * - `recipient`: an email address or handle (lower-cased);
 * - `blocked`: a destination the egress guard refuses without looking further (non-http scheme,
 *   private or metadata address literal); `reason` says why;
 * - `other`: any other value, compared as is.
 */
export type Destination =
  | { kind: "url"; origin: string; host: string; url: string }
  | { kind: "recipient"; value: string }
  | { kind: "blocked"; value: string; reason: string; code: string }
  | { kind: "other"; value: string };

/** Everything `decide` looks at. */
export interface DecisionInput {
  /** The tool's capability; for internal tools (no policy) the tool's own `capability`. */
  capability: string;
  /** `internal` for tools without a Sentinel policy. */
  access: "read" | "write" | "internal";
  hardToUndo: boolean;
  destinations: Destination[];
  /** True when the call has an argument that can carry data out, or a destination at all. */
  carriesData: boolean;
  /** The person's active grants (`GrantRepository.listActiveGrants`). */
  grants: readonly Grant[];
  taskId: string | null;
  /** The chain of activations this call belongs to (session grants match it). */
  sessionId: string | null;
  /** Untrusted content entered this activation's context before this call. */
  tainted: boolean;
  now: Date;
  /** Digest of a described action (see ToolPolicy.describe): grants bound to a digest cover only it. */
  actionDigest?: string;
  /** Only a grant bound to `actionDigest` covers the call, whatever other grants exist (purchases). */
  exactOnly?: boolean;
}

/** Sentinel's answer for one call. */
export type Effect = "allow" | "deny" | "ask";

/** The result of `decide`: the effect, the rule that produced it, and the grants that covered the call. */
export interface Decision {
  effect: Effect;
  ruleId: string;
  reason: string;
  /** The first covering grant (when the call is covered). */
  grant?: Grant;
  /** Every grant used to cover the call's destinations (once-grants among them are consumed on use). */
  grants: Grant[];
}
