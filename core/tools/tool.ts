import type { z } from "zod";
import type { PersonId, TaskId } from "../ids.js";
import type { ActionDescription } from "./action.js";
import type { Json } from "../json.js";
import type { ToolErrorCode } from "./error-codes.js";

/**
 * A tool the model can call. Arguments are validated with `parameters` (zod) before `execute` runs;
 * invalid arguments never reach `execute`.
 */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Name the model sees, `snake_case`, at most 64 characters (OpenAI function name rule). */
  name: string;
  description: string;
  parameters: S;
  /** True when the call changes something outside the conversation (journaled with an idempotency key). */
  sideEffect: boolean;
  /**
   * The tool's effects are writes to Familiar's own store only (goals, memory, wake-ups): the journal
   * runs the call and records its outcome in one store transaction, so a crash leaves either both or
   * neither — and a call cut short is simply run again instead of reported as "outcome unknown".
   */
  transactional?: boolean;
  /** Sentinel capability, e.g. `web.fetch`, `goals.write`. */
  capability: string;
  /**
   * What Sentinel needs to judge a call: access, destination and data-carrying arguments. Absent
   * for internal tools (goals, memory, wake-ups), which Sentinel allows and audits.
   */
  policy?: ToolPolicy;
  /**
   * For internal tools whose effect outlives the activation (memory items, goals, wake-ups,
   * webhooks): Sentinel asks the person before such a call runs in a tainted activation, and before a
   * job-creating call runs in an activation a job started (issue 11; see `PersistencePolicy`).
   */
  persists?: PersistencePolicy;
  /**
   * Whether the tool is offered to the model for this person right now (default: always). For tool
   * groups that only make sense in a state — the browser's page tools while the person's browser is
   * open — so every plain turn does not pay their schemas' tokens. Synchronous and cheap (in-memory);
   * asked before every model request. A call to a registered tool that is not offered still runs.
   */
  offered?: (personId: PersonId) => boolean;
  /**
   * Offered only to background activations (wake-ups, check-ins, events), never to a turn answering
   * the person, whose text is the answer: the notification tools (`propose_message`,
   * `report_monitor_state`). Saves their schemas' tokens on every conversation turn.
   */
  backgroundOnly?: boolean;
  execute(args: z.infer<S>, context: ToolContext): Promise<ToolResult>;
}

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
   * The action's verb: a fixed one (`{ fixed: "WRITE" }`, `{ fixed: "SUBMIT" }`) or the argument
   * holding it (`{ arg: "method" }` for an HTTP method). Default: `READ` for reads, `WRITE` for writes.
   */
  method?: { fixed: string } | { arg: string; default?: string };
  /** Argument paths holding workspace file paths (each becomes a `file` target of the action). */
  fileArgs?: string[];
  /** Argument paths holding header maps (names shown on cards; `{{secret:NAME}}` values as "🔒 NAME"). */
  headerArgs?: string[];
  /** Argument paths holding a payload shown decoded on cards (JSON pretty, form fields, base64/hex text). */
  bodyArgs?: string[];
  /**
   * For tools whose effect depends on outside state (a web page): describes the exact action the
   * call would perform now (`core/tools/action.ts`). When present, Sentinel derives the action
   * descriptor from the description (method, destinations, its digest) instead of the argument
   * paths above, shows it on the card and binds "Approve once" to its digest; the tool receives it
   * as `context.action` and must refuse to act if its effect no longer has that digest. Throws
   * `ActionUnavailableError` when there is nothing to describe.
   */
  describe?: (args: unknown, context: ToolContext) => Promise<ActionDescription>;
}

/** What an internal tool leaves behind, as Sentinel judges it (see `ToolDefinition.persists`). */
export interface PersistencePolicy {
  /** What outlives the activation: a memory item, a goal, a wake-up (one-off or recurring), a webhook. */
  kind: "memory" | "goal" | "wakeup" | "webhook";
  /** The verb shown on the card, in capitals: `REMEMBER`, `FORGET`, `CREATE GOAL`, `SCHEDULE`, … */
  method: string;
  /**
   * True when this call makes a job: something that starts activations of its own later (a wake-up,
   * a goal's recurring check-in). Such calls from an activation a job started need the person.
   */
  createsJob: (args: unknown) => boolean;
}

/** What a tool may know about the activation that called it. */
export interface ToolContext {
  personId: PersonId;
  /** The task of this activation (null for a plain conversation turn without a task). */
  taskId: TaskId | null;
  /** Conversation message that started the activation, if any (provenance for memory). */
  originMessageId: string | null;
  /** Derived from (task or activation, step); side effects carry it where the target supports it. */
  idempotencyKey: string;
  now: Date;
  signal: AbortSignal;
  /** Untrusted content already entered this activation (Sentinel also tracks it per activation itself). */
  tainted?: boolean;
  /**
   * Where the taint came from (the latest untrusted source: a page URL, `webhook hook_…`, or the
   * tainted wake-up, goal or memory item the activation started from). Set when `tainted` is.
   * Persistence tools store it with what they make.
   */
  taintSource?: string;
  /**
   * How many jobs deep this activation is: 0 for an activation the person's own messages started,
   * n for one a job (wake-up, goal check-in) of depth n started. A job made here gets depth + 1.
   */
  chainDepth?: number;
  /** The chain of activations this call belongs to (informational: Sentinel tracks sessions itself). */
  sessionId?: string;
  /**
   * Set by Sentinel while the tool runs: asks whether a follow-up the tool discovered — a redirect
   * to another origin, a navigation, a form the page submits — may proceed under the person's
   * grants, judged like a new call of this tool. Never asks the person; on `allowed: false` the
   * tool stops and reports the follow-up to the model (whose own call then asks).
   */
  authorizeFollowUp?: (followUp: FollowUp) => Promise<FollowUpVerdict>;
  /** The action Sentinel judged for a describing tool (ToolPolicy.describe); the tool acts only if it still matches. */
  action?: ActionDescription;
}

/** A follow-up action a running tool discovered (see `ToolContext.authorizeFollowUp`). */
export interface FollowUp {
  /** Upper-case verb of the follow-up: `GET` for a redirect followed with GET, `POST`, `SUBMIT`, … */
  method: string;
  /** Absolute URL it goes to. */
  url: string;
  /** Why it happens, for the audit log: "redirect from https://a.example/x". */
  why: string;
}

/** Sentinel's answer to a follow-up. */
export type FollowUpVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * A tool's result. `content` is what the model reads. `untrusted` marks content that came from
 * outside (web page, email, file, webhook body): it is placed in delimited untrusted blocks and
 * taints the activation. A failure may carry `data` for the runtime (Sentinel puts the approval id
 * of an `approval_required` result there).
 */
export type ToolResult =
  | { ok: true; content: string; data?: Json; untrusted?: { source: string } }
  | { ok: false; error: string; code: ToolErrorCode; data?: Json };

/** Helper for defining a tool with argument types inferred from its schema. */
export function defineTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> {
  return tool;
}
