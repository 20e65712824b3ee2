/**
 * Filter and update documents of the smaller repositories (persons, conversation, journal, memory,
 * grants, approvals, notifications, local mailbox), as pure functions so they can be evaluated
 * offline with mingo. Task and outbox documents are in task-filters.ts and outbox-filters.ts.
 */
import type { Document } from "mongodb";
import type { Actor } from "../../persons/records.js";
import type { ApprovalDecision } from "../../approvals/records.js";

/** `$set` of the defined entries of `patch` plus `updatedAt` (undefined entries are left alone). */
export function setPatch(patch: Record<string, unknown>, now: Date): Document {
  const set: Document = {};
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) set[key] = value;
  set.updatedAt = now;
  return { $set: set };
}

/** Atomic counter step: upserts `{ _id: name, value: 0 }` and adds one; read it with returnDocument after. */
export function counterIncrement(name: string): { filter: Document; update: Document } {
  return { filter: { _id: name }, update: { $inc: { value: 1 } } };
}

/** Counter name of a person's conversation `seq`. */
export function conversationCounter(personId: string): string {
  return `conversation:${personId}`;
}

/** Counter name of the local mailbox `seq`. */
export const localMailboxCounter = "local_mailbox";

/** Compare-and-set of the rolling summary: matches only while it still covers `expectedUpToSeq`. */
export function summaryCasFilter(personId: string, expectedUpToSeq: number): Document {
  return { _id: personId, upToSeq: expectedUpToSeq };
}

/** Filter of a journal entry still without an outcome. */
export function openJournalEntryFilter(idempotencyKey: string): Document {
  return { idempotencyKey, outcome: null };
}

/** Memory items not expired at `now` (no expiry, or expiry after `now`). */
export function notExpiredFilter(now: Date): Document {
  return { $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] };
}

/**
 * Words of a free-text query, for `$text.$search`. MongoDB's search string has its own syntax
 * (`"phrase"`, `-negation`); keeping letters and digits only makes every word a plain OR term.
 */
export function searchTerms(query: string): string[] {
  return query.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Filter of `searchMemory`: the person's unexpired items matching any term (text index). */
export function memorySearchFilter(personId: string, terms: string[], now: Date): Document {
  return { personId, $text: { $search: terms.join(" ") }, ...notExpiredFilter(now) };
}

/** Projection and sort by text relevance. */
export const textScoreProjection = { score: { $meta: "textScore" } } as const;
export const textScoreSort = { score: { $meta: "textScore" }, _id: -1 } as const;

/** Grants usable at `now`: not revoked, not consumed, and (for `until` scopes) not expired. */
export function activeGrantsFilter(personId: string, now: Date): Document {
  return {
    personId,
    revokedAt: null,
    consumedAt: null,
    $or: [{ "scope.kind": { $ne: "until" } }, { "scope.until": { $gt: now } }],
  };
}

/** A once-grant that is still unused and not revoked. */
export function consumableGrantFilter(id: string): Document {
  return { _id: id, "scope.kind": "once", consumedAt: null, revokedAt: null };
}

/** A grant of the person not yet revoked. */
export function revocableGrantFilter(personId: string, id: string): Document {
  return { _id: id, personId, revokedAt: null };
}

/** A pending approval request still open at `now` (expires strictly after it). */
export function decidableApprovalFilter(id: string, now: Date): Document {
  return { _id: id, status: "pending", expiresAt: { $gt: now } };
}

/** Update recording the first decision. */
export function approvalDecisionUpdate(decision: ApprovalDecision, by: Actor, now: Date): Document {
  return {
    $set: {
      status: decision.kind === "approve" ? "approved" : "denied",
      decision,
      decidedBy: by,
      decidedAt: now,
    },
  };
}

/** Pending requests that expired at or before `now` (optionally one of them). */
export function expiredApprovalFilter(now: Date, id?: string): Document {
  const filter: Document = { status: "pending", expiresAt: { $lte: now } };
  if (id !== undefined) filter._id = id;
  return filter;
}

export const expireApprovalUpdate: Document = { $set: { status: "expired" } };

/** The person's requests denied at or after `since`. */
export function deniedSinceFilter(personId: string, since: Date): Document {
  return { personId, status: "denied", decidedAt: { $gte: since } };
}

/** Filter of `listAudit`. */
export function auditFilter(personId: string, kinds: string[] | undefined): Document {
  return kinds === undefined ? { personId } : { personId, kind: { $in: kinds } };
}

/** Held notifications not yet sent in a digest. */
export function heldNotificationsFilter(personId: string): Document {
  return { personId, decision: "hold", digestedAt: null };
}

/** Sent or held records of one occurrence (`findOccurrence`). */
export function occurrenceFilter(personId: string, occurrenceKey: string): Document {
  return { personId, occurrenceKey, decision: { $in: ["send", "hold"] } };
}

/** Sent or held records with a monitor state about `subject` (`lastMonitorReport`). */
export function monitorReportFilter(personId: string, subject: string): Document {
  return { personId, "monitor.subject": subject, decision: { $in: ["send", "hold"] } };
}

/** Update of `markDigested`: only records not digested before keep their first digest time. */
export function markDigested(ids: string[], now: Date): { filter: Document; update: Document } {
  return { filter: { _id: { $in: ids }, digestedAt: null }, update: { $set: { digestedAt: now } } };
}
