/**
 * Sentinel's records: grants (what the person allowed, for how long), taints (untrusted content an
 * item came from), sessions and first sightings of hosts in untrusted content.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { GrantId, PersonId, TaskId } from "../ids.js";
import type { Json } from "../json.js";
import type { Actor } from "../persons/records.js";

/**
 * Issue 11: an item made in an activation that had read untrusted content (a web page, a fetched
 * result, an email, a file from outside, a webhook payload) carries that taint and its source, so an
 * activation that later runs from it (or shows it to the model) starts tainted.
 */
export interface Taint {
  /** The untrusted source that tainted the activation which made the item, e.g. a page URL or `webhook hook_…`. */
  source: string;
}

export type GrantScope =
  | { kind: "once" }
  | { kind: "task"; taskId: TaskId }
  | { kind: "session"; sessionId: string }
  | { kind: "until"; until: Date }
  | { kind: "always" };

/** Constraints a grant is limited to; absent keys are unconstrained. */
export interface GrantConstraints {
  /** Destination origin or host, e.g. `https://api.example.com` or `example.com`. */
  destination?: string;
  recipient?: string;
  /** Upper bound, in the currency's minor unit. */
  maxAmount?: number;
  /** Digest of one described action (core/tools/action.ts): the grant covers that action only. */
  action?: string;
}

/**
 * A grant: the person's permission for one kind of action (a `capability`, narrowed by `pattern` to
 * the tool, method, targets and payload it covers), for a {@link GrantScope} — once, this task, this
 * session, until a time, or always. Sentinel (core/sentinel, `decide` in core/policy) allows a call a
 * grant covers without asking; a once-grant is consumed by its first use; a revoked one covers nothing.
 */
export interface Grant {
  id: GrantId;
  personId: PersonId;
  capability: string;
  /** Legacy origin-level constraints (grants from before action patterns); not used for matching. */
  constraints: GrantConstraints;
  /** What the grant covers: Sentinel's `GrantPattern` (tool, method, targets, payload digest) as JSON; null for legacy grants (cover nothing). */
  pattern: Json | null;
  scope: GrantScope;
  grantedBy: Actor;
  grantedAt: Date;
  /** Set when a once-grant is used. */
  consumedAt: Date | null;
  revokedAt: Date | null;
}

export type NewGrant = Omit<Grant, "id" | "consumedAt" | "revokedAt" | "grantedAt" | "pattern"> & { grantedAt?: Date; pattern?: Json | null };

/**
 * A person's session as Sentinel tracks it: a run of the person's own activity (messages, presses)
 * without a gap of `idle` (2 hours). Session grants hold while the session does.
 */
export interface SentinelSession {
  personId: PersonId;
  sessionId: string;
  startedAt: Date;
  lastActivityAt: Date;
  /** Highest conversation seq already folded into `lastActivityAt`. */
  lastSeq: number;
}

/** Where a host was first seen in untrusted content (a web page, a file, a webhook body). */
export interface HostSighting {
  personId: PersonId;
  /** ASCII host, lower case (IDN as punycode). */
  host: string;
  firstSeenAt: Date;
  /** The untrusted source, e.g. the URL of the page. */
  source: string;
}
