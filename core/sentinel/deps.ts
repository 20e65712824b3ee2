/** What the Sentinel facade (gate.ts) is built from, and the state it keeps per activation. */
import type { Logger } from "../log/index.js";
import type { Store } from "../storage/index.js";
import type { ApprovalRequest } from "../approvals/records.js";
import type { Policy, SeenContent, SentinelClock, SessionTracker, UrlPrecheck } from "../policy/index.js";
import type { SecretVault } from "../secrets/index.js";

/** The store slice Sentinel uses. */
export type SentinelStore = Pick<Store, "grants" | "approvals" | "audit" | "sentinel" | "tasks" | "conversation" | "memory">;

/** What the facade needs. */
export interface SentinelDeps {
  store: SentinelStore;
  /** The egress guard (its URL precheck classifies destinations before anything runs). */
  egress: UrlPrecheck;
  vault?: SecretVault;
  /**
   * The process's boundary scrubber (core/log/redaction.ts `SecretRegistry.scrub`: configured tokens, vault values
   * in every encoding, token shapes), applied to errors and audit rows; the vault's own scrub is
   * applied either way.
   */
  scrub?: (text: string) => string;
  policy?: Policy;
  logger?: Logger;
  /** Called after an approval request is stored: the runtime suspends the task and sends the card. */
  onApprovalRequested?: (request: ApprovalRequest) => void | Promise<void>;
  /** How long an approval request stays answerable, ms (default 24 h). */
  approvalTtlMs?: number;
  /** Wall clock (default the system clock); Sentinel's own time never runs behind what it saw (core/policy/time.ts). */
  now?: () => Date;
  /** Shared session tracker (the approval desk uses the same one); created when absent. */
  sessions?: SessionTracker;
  /** Shared Sentinel clock; created when absent. */
  clock?: SentinelClock;
}

/** Per-activation settings of {@link Sentinel.wrap}. */
export interface ActivationOptions {
  /** The activation starts tainted (e.g. it resumes a task whose context holds untrusted content). */
  tainted?: boolean;
  /** Where the starting taint came from (a tainted wake-up, goal, memory item, webhook body). */
  taintSource?: string;
  /** Job-chain depth of the activation (0: the person's own messages started it). */
  chainDepth?: number;
  /** Ignored: sessions are tracked by Sentinel itself (kept so callers need not change). */
  sessionId?: string;
  /** Denials before this instant do not count towards the breaker: the task was paused and resumed since (core/approvals/denials.ts). */
  denialsFrom?: Date | null;
  /** The task is recurring work: its own denials cover its places for 24 h, not for ever (core/approvals/denials.ts). */
  recurring?: boolean;
}

/** What one activation's wrapper remembers between its calls (see `Sentinel.wrap`). */
export interface ActivationState {
  denialsFrom: Date | null;
  recurring: boolean;
  tainted: boolean;
  seen: SeenContent[];
  seenChars: number;
}
