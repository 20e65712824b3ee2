/**
 * Button presses on approval cards. A card's buttons carry only an opaque id, `ap:<token>`, where
 * the token (16 random bytes, base64url: 25 ASCII characters in all, so it fits every messenger —
 * Telegram callback_data is 1–64 bytes) maps to exactly one stored (request, choice) pair. Scope and
 * request are never taken from the client: an edited client can neither point a button at another
 * request nor turn "once" into "always".
 *
 * A press counts only when, in order: the token is ours → the request exists → the presser is the
 * request's owner (field case A1: anyone else is told "This request isn't yours", the request stays
 * pending, the attempt is audited) → it comes from the chat and the message the card was delivered
 * to → the choice was offered → `decideApproval` atomically accepts only a pending, unexpired request
 * and the first answer (A2: an expired request says so and nothing runs). Time is Sentinel's own
 * (core/policy/time.ts), so a clock moved backwards cannot reopen an expired request. On approval the grant —
 * bound to the request's action pattern (core/policy/patterns.ts) — is recorded in the same store transaction,
 * so "approved" is reported only when the grant exists. Every refused press is audited.
 */
import { channelInWords, chatLogId, type CardView } from "../channels/index.js";
import { randomBytes } from "node:crypto";
import type { OutboxId, PersonId, TaskId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { ApprovalChoiceKind, ApprovalRequest } from "./records.js";
import type { ChannelName } from "../channels/records.js";
import type { Grant, GrantScope } from "../policy/records.js";
import { denialsSince, lastPersonMessageAt, laterOf } from "./asking.js";
import { BREAKER_WINDOW_MS, MAX_DENIALS_PER_PERSON, MAX_DENIALS_PER_TASK } from "./denials.js";
import {
  describePattern,
  patternFor,
  SESSION_IDLE_MS,
  type SentinelClock,
  type SessionTracker,
} from "../policy/index.js";
import { parseApprovalDetails } from "./request.js";

/** How long the "For 24 h" scope lasts, ms. */
export const DAY_GRANT_MS = 24 * 60 * 60 * 1000;

const BUTTON = /^ap:([A-Za-z0-9_-]{22})$/;

/** A new random button token. */
export function newButtonToken(): string {
  return randomBytes(16).toString("base64url");
}

/** The button id of a token: `ap:<token>` (25 ASCII characters). */
export function approvalButtonId(token: string): string {
  return `ap:${token}`;
}

/** True when `buttonId` has the shape of an approval button (it may still be unknown). */
export function isApprovalButtonId(buttonId: string): boolean {
  return buttonId.startsWith("ap:");
}

const SCOPE_TEXT: Record<Exclude<ApprovalChoiceKind, "deny">, string> = {
  once: "once",
  task: "for this task",
  session: `for this session (until you have been away for ${SESSION_IDLE_MS / 3_600_000} hours)`,
  until: "for 24 hours",
  always: "always",
};

/** Who pressed, and where: the messenger account, its person (null: unknown), the chat and the message. */
export interface Presser {
  channel: ChannelName;
  accountId: string;
  personId: PersonId | null;
  /** The chat the press came from (platform address). */
  address: string;
  /** The message the pressed button was on (platform id), if the platform says. */
  messageRef: string | null;
  /** Set when the press came from a group chat (cards are only ever sent to the person's own chat). */
  groupId?: string;
}

/** What a press did. `status` (when set) is the card's new outcome line (its buttons are gone). */
export interface PressResult {
  outcome: "approved" | "denied" | "not_owner" | "wrong_place" | "expired" | "already_decided" | "not_found" | "invalid";
  /** A short answer for the presser (callback answer / ephemeral reply). */
  notice: string;
  status: NonNullable<CardView["status"]> | null;
  grant?: Grant;
  request?: ApprovalRequest;
  /** This denial tripped the breaker (denials.ts): its task is paused — by its own count or by the person's. Tell the person once. */
  paused?: "task" | "person";
}

/** What the desk needs. */
export interface ApprovalDeskDeps {
  store: Pick<Store, "approvals" | "grants" | "audit" | "transaction" | "sentinel" | "outbox" | "conversation">;
  clock: SentinelClock;
  sessions: SessionTracker;
  /** When a task's denials start counting for the breaker (it was paused and resumed since); absent: all count. */
  denialsFrom?: (taskId: TaskId) => Promise<Date | null>;
}

/** Turns button presses into recorded decisions and grants. */
export class ApprovalDesk {
  constructor(private readonly deps: ApprovalDeskDeps) {}

  /** Handles one press; never throws for a stale, foreign, forged or unknown press (store failures do throw). */
  async decidePress(input: { buttonId: string; presser: Presser }): Promise<PressResult> {
    const { store } = this.deps;
    const { presser } = input;
    const by = { channel: presser.channel, accountId: presser.accountId };
    const m = BUTTON.exec(input.buttonId);
    const choice = m ? await store.sentinel.getApprovalChoice(m[1]!) : null;
    if (choice === null) {
      await this.refused(presser.personId, "unknown_button", "A press on a button Familiar does not know (forged or from an old card)", presser, null);
      return { outcome: "not_found", notice: "This button is not recognized; nothing was done.", status: null };
    }
    const request = await store.approvals.getApprovalRequest(choice.approvalId);
    if (request === null) {
      await this.refused(presser.personId, "request_gone", "A press on a card whose request no longer exists", presser, null);
      return { outcome: "not_found", notice: "This request no longer exists; nothing was done.", status: { outcome: "gone", text: "This request no longer exists; nothing was done." } };
    }
    if (presser.personId !== request.personId) {
      await this.refused(request.personId, "not_owner", `Someone else pressed a button on your request: ${request.summary}`, presser, request);
      return { outcome: "not_owner", notice: "This request isn't yours.", status: null, request };
    }
    if (!(await this.fromTheCard(choice.outboxId, presser))) {
      await this.refused(request.personId, "wrong_place", `A press not on the card it belongs to: ${request.summary}`, presser, request);
      return { outcome: "wrong_place", notice: "That button does not belong to this message; nothing was done.", status: null, request };
    }
    const details = parseApprovalDetails(request);
    if (details === null || !details.offered.includes(choice.choice)) {
      await this.refused(request.personId, "not_offered", `A choice the card did not offer: ${request.summary}`, presser, request);
      return { outcome: "invalid", notice: "That choice is not available for this request; nothing was done.", status: null, request };
    }
    const now = await this.deps.clock.now();
    const scope = choice.choice === "deny" ? null : await this.scopeFor(choice.choice, request, now);
    const pattern = choice.choice === "deny" ? null : patternFor(details.action, choice.choice === "once" ? "exact" : "payload");
    if (choice.choice !== "deny" && (scope === null || pattern === null)) {
      await this.refused(request.personId, "not_applicable", `A scope that does not apply: ${request.summary}`, presser, request);
      return { outcome: "invalid", notice: "That scope does not apply to this request; nothing was done.", status: null, request };
    }

    const { decided, grant } = await store.transaction(async () => {
      const decided = await store.approvals.decideApproval({
        id: request.id,
        decision: scope === null ? { kind: "deny" } : { kind: "approve", scope: scope.kind },
        by,
        now,
      });
      if (decided.outcome !== "decided" || scope === null || pattern === null) return { decided, grant: null };
      const grant = await store.grants.recordGrant({ personId: request.personId, capability: request.capability, constraints: {}, pattern, scope, grantedBy: by, grantedAt: now });
      return { decided, grant };
    });

    if (decided.outcome === "not_found") {
      return { outcome: "not_found", notice: "This request no longer exists; nothing was done.", status: { outcome: "gone", text: "This request no longer exists; nothing was done." } };
    }
    const stored = decided.request;
    if (decided.outcome === "expired") {
      await this.refused(request.personId, "expired", `Pressed after expiry: ${stored.summary}`, presser, stored, "approval.expired_press");
      return { outcome: "expired", notice: "This request expired; nothing was done.", status: { outcome: "expired", text: "⌛ Expired — nothing was done." }, request: stored };
    }
    if (decided.outcome === "already_decided") {
      await this.refused(request.personId, "already_decided", `Pressed again after the decision: ${stored.summary}`, presser, stored);
      return { outcome: "already_decided", notice: `This request was already ${stored.status}.`, status: statusOf(stored), request: stored };
    }
    const words = pattern !== null && choice.choice !== "once" ? ` — covers ${describePattern(pattern)}` : "";
    const text = scope === null ? `Denied: ${stored.summary}` : `Approved ${SCOPE_TEXT[scope.kind]}: ${stored.summary}${words}`;
    await store.audit.appendAudit({
      personId: request.personId,
      kind: "approval.decided",
      summary: text,
      data: { approvalId: request.id, status: stored.status, choice: choice.choice, channel: by.channel, accountId: by.accountId, grantId: grant?.id ?? null },
      at: now,
    });
    const paused = scope === null && stored.taskId !== null ? await this.trips(stored.personId, stored.taskId, now) : null;
    return {
      outcome: scope === null ? "denied" : "approved",
      notice: scope === null ? "Denied. Nothing was done." : `Approved ${SCOPE_TEXT[scope.kind].replace(/ \(.*\)$/, "")}.`,
      status: statusOf(stored),
      request: stored,
      ...(grant ? { grant } : {}),
      ...(paused ? { paused } : {}),
    };
  }

  /** The press came from the chat and the message the card was delivered to. */
  private async fromTheCard(outboxId: OutboxId | null, presser: Presser): Promise<boolean> {
    if (outboxId === null || presser.messageRef === null || presser.groupId !== undefined) return false;
    const card = await this.deps.store.outbox.getOutbound(outboxId);
    const delivered = card?.delivered;
    if (!delivered) return false;
    // A card sent to a user id (Slack and Telegram open the person's own DM by it) is pressed in that DM.
    const sameChat = delivered.address === presser.address || delivered.address === presser.accountId;
    if (delivered.channel === presser.channel && sameChat && delivered.platformIds.includes(presser.messageRef)) return true;
    // The web app shows the person's own chat log, where each delivered card has a copy named by
    // (channel, platform id): a press there, signed in as the request's owner, is a press on the card.
    return presser.channel === "local" && delivered.platformIds.some((id) => chatLogId("out", delivered.channel, id) === presser.messageRef);
  }

  /** The grant scope of a choice at `now`; null when it does not apply (no task). The press is activity. */
  private async scopeFor(choice: Exclude<ApprovalChoiceKind, "deny">, request: ApprovalRequest, now: Date): Promise<GrantScope | null> {
    switch (choice) {
      case "once":
        return { kind: "once" };
      case "task":
        return request.taskId === null ? null : { kind: "task", taskId: request.taskId };
      case "session": {
        const session = await this.deps.sessions.refresh(request.personId, now, now);
        return session === null ? null : { kind: "session", sessionId: session.sessionId };
      }
      case "until":
        return { kind: "until", until: new Date(now.getTime() + DAY_GRANT_MS) };
      case "always":
        return { kind: "always" };
    }
  }

  /**
   * Whether the denial just recorded trips the breaker (denials.ts): the one that reached the task's
   * count (since the person last wrote and since the task was last resumed from a pause), or the
   * person's count within the window. Null when it trips nothing.
   */
  private async trips(personId: PersonId, taskId: TaskId, now: Date): Promise<"task" | "person" | null> {
    const { store } = this.deps;
    const from = (await this.deps.denialsFrom?.(taskId)) ?? null;
    const requests = await store.approvals.listTaskApprovals(taskId);
    const since = laterOf(await lastPersonMessageAt(store, personId), from);
    if (denialsSince(requests, since).length === MAX_DENIALS_PER_TASK) return "task";
    const windowStart = laterOf(new Date(now.getTime() - BREAKER_WINDOW_MS), from)!;
    const recent = await store.approvals.listDeniedApprovals(personId, windowStart);
    return recent.length === MAX_DENIALS_PER_PERSON ? "person" : null;
  }

  private async refused(personId: PersonId | null, reason: string, summary: string, presser: Presser, request: ApprovalRequest | null, kind = "approval.press_rejected"): Promise<void> {
    await this.deps.store.audit.appendAudit({
      personId,
      kind,
      summary,
      at: await this.deps.clock.now(),
      data: {
        refusal: reason,
        approvalId: request?.id ?? null,
        channel: presser.channel,
        accountId: presser.accountId,
        presserPersonId: presser.personId,
        address: presser.address,
        messageRef: presser.messageRef,
      },
    });
  }
}

/** The card's outcome line for a decided request. */
export function statusOf(request: ApprovalRequest): NonNullable<CardView["status"]> {
  const via = request.decidedBy ? ` via ${channelInWords(request.decidedBy.channel)}` : "";
  switch (request.status) {
    case "approved":
      return { outcome: "approved", text: `✅ Approved ${request.decision?.kind === "approve" ? SCOPE_TEXT[request.decision.scope] : ""}${via}.` };
    case "denied":
      return { outcome: "denied", text: `❌ Denied${via}. Nothing was done.` };
    case "expired":
      return { outcome: "expired", text: "⌛ Expired — nothing was done." };
    default:
      return { outcome: "gone", text: "Pending." };
  }
}
