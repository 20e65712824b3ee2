/**
 * Approval requests: a question to the person before something hard to undo, the card's buttons
 * (choices) and the outcome of deciding.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { ApprovalId, OutboxId, PersonId, TaskId } from "../ids.js";
import type { Json } from "../json.js";
import type { Actor } from "../persons/records.js";
import type { GrantScope } from "../policy/records.js";

export type ApprovalDecision =
  | { kind: "approve"; scope: GrantScope["kind"] }
  | { kind: "deny" };

export type ApprovalStatus = "pending" | "approved" | "denied" | "expired";

/**
 * An approval request: Familiar asking the person before an action no grant covers, shown as a card
 * with native buttons ({@link ApprovalChoice}); the first answer decides, an unanswered one expires.
 */
export interface ApprovalRequest {
  id: ApprovalId;
  personId: PersonId;
  taskId: TaskId | null;
  capability: string;
  /** One line shown on the card. */
  summary: string;
  details: Json;
  status: ApprovalStatus;
  decision: ApprovalDecision | null;
  decidedBy: Actor | null;
  decidedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

export type NewApprovalRequest = Pick<
  ApprovalRequest,
  "personId" | "taskId" | "capability" | "summary" | "details" | "expiresAt"
>;

/** Outcome of `decideApproval`: exactly one caller gets `decided`. */
export type DecideResult =
  | { outcome: "decided"; request: ApprovalRequest }
  | { outcome: "already_decided"; request: ApprovalRequest }
  | { outcome: "expired"; request: ApprovalRequest }
  | { outcome: "not_found" };

/** The buttons a card can carry: a grant scope, or deny. */
export type ApprovalChoiceKind = GrantScope["kind"] | "deny";

/**
 * One button of an approval card: an opaque random token that maps to exactly one (request,
 * choice) pair. A press carries only the token; scope and request are never taken from the client.
 */
export interface ApprovalChoice {
  /** Random, URL-safe, unique (the button's id after the `ap:` prefix). */
  token: string;
  approvalId: ApprovalId;
  choice: ApprovalChoiceKind;
  /** The outbox row of the card this button is on (the press must come from where it was delivered). */
  outboxId: OutboxId | null;
  createdAt: Date;
}
