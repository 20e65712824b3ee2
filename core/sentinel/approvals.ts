/**
 * Approval cards and button presses. A card shows what Familiar wants to do and offers the scopes
 * of ARCHITECTURE.md ("Approval"): once / this task / this session / for 24 h / always, and deny.
 * Button ids are opaque, at most 32 ASCII characters (`ap:<approval id, base64url>:<scope letter>`),
 * so they fit every messenger (Telegram callback_data is 1–64 bytes) and carry no request content;
 * the stored request decides every press, so cards survive restarts.
 *
 * Press checks, in order: the button is ours → the request exists → the presser is its owner
 * (field bug A1: anyone else is told "This request isn't yours", the request stays pending, the
 * attempt is audited) → `decideApproval` atomically accepts only a pending, unexpired request and
 * the first answer (A2: an expired request says so, its card is edited, nothing runs). On approval
 * the grant is recorded in the same store transaction, so "approved" is reported only when the
 * grant exists.
 */
import { asId, type ApprovalId, type PersonId } from "../ids.js";
import type { Store } from "../storage/ports.js";
import type { ApprovalRequest, Button, ChannelName, Grant, GrantConstraints, GrantScope, NewGrant } from "../storage/types.js";
import { actionCardLines, actionDescriptionSchema, type ActionDescription } from "./action.js";
import type { Destination } from "./types.js";

/** Scope choices and their button letters. */
export const SCOPE_LETTERS = { once: "o", task: "t", session: "s", until: "h", always: "a", deny: "d" } as const;
export type Choice = keyof typeof SCOPE_LETTERS;

/** How long the "For 24 h" scope lasts, ms. */
export const DAY_GRANT_MS = 24 * 60 * 60 * 1000;

const LABELS: Record<Choice, string> = {
  once: "Approve once",
  task: "This task",
  session: "This session",
  until: "For 24 h",
  always: "Always",
  deny: "Deny",
};

const SCOPE_TEXT: Record<Exclude<Choice, "deny">, string> = {
  once: "once",
  task: "for this task",
  session: "for this session",
  until: "for 24 hours",
  always: "always",
};

/** The button id of one choice: `ap:<id>:<letter>`, ≤ 32 ASCII characters. @throws Error for an id too long to encode. */
export function approvalButtonId(id: ApprovalId, choice: Choice): string {
  const m = /^apr_([0-9a-f]{28})$/.exec(id);
  const key = m ? `~${Buffer.from(m[1]!, "hex").toString("base64url")}` : id;
  const out = `ap:${key}:${SCOPE_LETTERS[choice]}`;
  if (out.length > 32 || !/^[\x21-\x7e]+$/.test(out)) throw new Error(`approval id ${id} cannot be put in a button id`);
  return out;
}

/** Reads a button id back; null when it is not one of ours. */
export function parseApprovalButtonId(buttonId: string): { approvalId: ApprovalId; choice: Choice } | null {
  const m = /^ap:(.+):([otshad])$/.exec(buttonId);
  if (!m) return null;
  const choice = (Object.keys(SCOPE_LETTERS) as Choice[]).find((c) => SCOPE_LETTERS[c] === m[2])!;
  const key = m[1]!;
  if (key.startsWith("~")) {
    const hex = Buffer.from(key.slice(1), "base64url").toString("hex");
    if (!/^[0-9a-f]{28}$/.test(hex)) return null;
    return { approvalId: asId("approval", `apr_${hex}`), choice };
  }
  return { approvalId: asId("approval", key), choice };
}

function destinationsOf(request: ApprovalRequest): Destination[] {
  const details = request.details as { destinations?: Destination[] } | null;
  return Array.isArray(details?.destinations) ? details.destinations : [];
}

function sessionOf(request: ApprovalRequest): string | null {
  const details = request.details as { sessionId?: unknown } | null;
  return typeof details?.sessionId === "string" ? details.sessionId : null;
}

/**
 * `text` as a fenced code block, which every messenger renderer shows verbatim. The fence is longer
 * than any run of backticks inside (CommonMark: a code fence closes only on a fence at least as long).
 */
function verbatim(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}\n${text}\n${fence}`;
}

/** The described action of a request (browser actions), parsed; null for other requests. */
function actionOf(request: ApprovalRequest): ActionDescription | null {
  const details = request.details as { action?: unknown } | null;
  const parsed = actionDescriptionSchema.safeParse(details?.action);
  return parsed.success ? parsed.data : null;
}

function cardBody(request: ApprovalRequest): string {
  const details = (request.details ?? {}) as { reason?: string; args?: unknown };
  const action = actionOf(request);
  if (action) {
    // A described action (a page's form, link or checkout): what will happen, where, with which fields.
    const lines = ["Familiar asks to:", verbatim(actionCardLines(action).join("\n"))];
    if (details.reason) lines.push(`Why I ask: ${details.reason}`);
    if (action.onceOnly) lines.push("This can only be approved once, for exactly this.");
    lines.push(`Expires: ${request.expiresAt.toISOString()}`);
    return lines.join("\n");
  }
  const lines = [`Familiar asks to run: ${request.summary}`];
  if (details.reason) lines.push(`Why I ask: ${details.reason}`);
  // The arguments are the model's words: shown as code, so markdown in them cannot hide what runs
  // (a `[harmless text](https://elsewhere)` link, asterisks that vanish as emphasis).
  if (details.args !== undefined) lines.push("With:", verbatim(JSON.stringify(details.args).slice(0, 400)));
  lines.push(`Expires: ${request.expiresAt.toISOString()}`);
  return lines.join("\n");
}

/** The card for a pending request: text plus buttons (task/session scopes only when they apply). */
export function approvalCard(request: ApprovalRequest): { text: string; buttons: Button[] } {
  if (actionOf(request)?.onceOnly) {
    return { text: cardBody(request), buttons: (["once", "deny"] as const).map((c) => ({ id: approvalButtonId(request.id, c), label: LABELS[c] })) };
  }
  const choices: Choice[] = ["once"];
  if (request.taskId !== null) choices.push("task");
  if (sessionOf(request) !== null) choices.push("session");
  choices.push("until", "always", "deny");
  return { text: cardBody(request), buttons: choices.map((c) => ({ id: approvalButtonId(request.id, c), label: LABELS[c] })) };
}

/** Who pressed: the messenger account and the person it is linked to (null: unknown account). */
export interface Presser {
  channel: ChannelName;
  accountId: string;
  personId: PersonId | null;
}

/** What a press did. `cardUpdate` (when set) replaces the card; buttons are gone after a decision. */
export interface PressResult {
  outcome: "approved" | "denied" | "not_owner" | "expired" | "already_decided" | "not_found" | "invalid";
  /** A short answer for the presser (callback answer / ephemeral reply). */
  notice: string;
  cardUpdate: { text: string; buttons: [] } | null;
  /** The first grant recorded (approvals only); `grants` has all (one per destination). */
  grant?: Grant;
  grants?: Grant[];
  request?: ApprovalRequest;
}

/** What the desk needs: the store (its transaction makes decision + grant atomic). */
export type ApprovalStore = Pick<Store, "approvals" | "grants" | "audit" | "transaction">;

/** Turns button presses into recorded decisions and grants. */
export class ApprovalDesk {
  constructor(private readonly store: ApprovalStore) {}

  /** Handles one press; never throws for a stale, foreign or unknown press (store failures do throw). */
  async decidePress(input: { buttonId: string; presser: Presser; now: Date }): Promise<PressResult> {
    const parsed = parseApprovalButtonId(input.buttonId);
    if (parsed === null) return { outcome: "invalid", notice: "This button is not recognized.", cardUpdate: null };
    const request = await this.store.approvals.getApprovalRequest(parsed.approvalId);
    if (request === null) {
      return { outcome: "not_found", notice: "This request no longer exists; nothing was done.", cardUpdate: { text: "This request no longer exists; nothing was done.", buttons: [] } };
    }
    const by = { channel: input.presser.channel, accountId: input.presser.accountId };
    if (input.presser.personId !== request.personId) {
      await this.store.audit.appendAudit({
        personId: request.personId,
        kind: "approval.press_rejected",
        summary: `Someone else pressed a button on your request: ${request.summary}`,
        data: { approvalId: request.id, channel: by.channel, accountId: by.accountId, presserPersonId: input.presser.personId },
      });
      return { outcome: "not_owner", notice: "This request isn't yours.", cardUpdate: null, request };
    }
    const scope = parsed.choice === "deny" ? null : this.scopeFor(parsed.choice, request, input.now);
    if (scope === undefined) return { outcome: "invalid", notice: "That scope does not apply to this request.", cardUpdate: null, request };

    const outcome = await this.store.transaction(async () => {
      const decided = await this.store.approvals.decideApproval({
        id: request.id,
        decision: scope === null ? { kind: "deny" } : { kind: "approve", scope: scope.kind },
        by,
        now: input.now,
      });
      if (decided.outcome !== "decided" || scope === null) return { decided, grants: [] as Grant[] };
      const grants: Grant[] = [];
      for (const constraints of constraintsOf(request, scope)) {
        const grant: NewGrant = { personId: request.personId, capability: request.capability, constraints, scope, grantedBy: by, grantedAt: input.now };
        grants.push(await this.store.grants.recordGrant(grant));
      }
      return { decided, grants };
    });

    const { decided, grants } = outcome;
    if (decided.outcome === "not_found") {
      return { outcome: "not_found", notice: "This request no longer exists; nothing was done.", cardUpdate: { text: "This request no longer exists; nothing was done.", buttons: [] } };
    }
    const stored = decided.request;
    if (decided.outcome === "expired") {
      await this.auditDecision(stored, "approval.expired_press", `Pressed after expiry: ${stored.summary}`, by);
      return { outcome: "expired", notice: "This request expired; nothing was done.", cardUpdate: { text: `${cardBody(stored)}\n\n⌛ Expired — nothing was done.`, buttons: [] }, request: stored };
    }
    if (decided.outcome === "already_decided") {
      return { outcome: "already_decided", notice: `This request was already ${stored.status}.`, cardUpdate: { text: `${cardBody(stored)}\n\n${statusLine(stored)}`, buttons: [] }, request: stored };
    }
    await this.auditDecision(stored, "approval.decided", `${scope === null ? "Denied" : `Approved ${SCOPE_TEXT[parsed.choice as Exclude<Choice, "deny">]}`}: ${stored.summary}`, by, grants);
    const notice = scope === null ? "Denied. Nothing was done." : `Approved ${SCOPE_TEXT[parsed.choice as Exclude<Choice, "deny">]}.`;
    return {
      outcome: scope === null ? "denied" : "approved",
      notice,
      cardUpdate: { text: `${cardBody(stored)}\n\n${statusLine(stored)}`, buttons: [] },
      request: stored,
      ...(grants[0] ? { grant: grants[0], grants } : {}),
    };
  }

  /** The grant scope of a choice; undefined when it does not apply (no task / no session). */
  private scopeFor(choice: Exclude<Choice, "deny">, request: ApprovalRequest, now: Date): GrantScope | undefined {
    if (choice !== "once" && actionOf(request)?.onceOnly) return undefined;
    switch (choice) {
      case "once":
        return { kind: "once" };
      case "task":
        return request.taskId === null ? undefined : { kind: "task", taskId: request.taskId };
      case "session": {
        const sessionId = sessionOf(request);
        return sessionId === null ? undefined : { kind: "session", sessionId };
      }
      case "until":
        return { kind: "until", until: new Date(now.getTime() + DAY_GRANT_MS) };
      case "always":
        return { kind: "always" };
    }
  }

  private async auditDecision(request: ApprovalRequest, kind: string, summary: string, by: { channel: ChannelName; accountId: string }, grants: Grant[] = []): Promise<void> {
    await this.store.audit.appendAudit({
      personId: request.personId,
      kind,
      summary,
      data: { approvalId: request.id, status: request.status, channel: by.channel, accountId: by.accountId, grantIds: grants.map((g) => g.id) },
    });
  }
}

/**
 * One grant per destination of the request (a call without destinations: one unconstrained grant).
 * "Approve once" of a described action is bound to that action's digest: it covers exactly it.
 */
function constraintsOf(request: ApprovalRequest, scope: GrantScope): GrantConstraints[] {
  const action = actionOf(request);
  const bound = action && (scope.kind === "once" || action.onceOnly) ? { action: action.digest } : {};
  const destinations = destinationsOf(request);
  if (destinations.length === 0) return [bound];
  return destinations.map((d): GrantConstraints => ({ ...bound, ...constraintOf(d) }));
}

function constraintOf(d: Destination): GrantConstraints {
  switch (d.kind) {
    case "url":
      return { destination: d.origin };
    case "recipient":
      return { recipient: d.value };
    default:
      return { destination: d.value };
  }
}

function statusLine(request: ApprovalRequest): string {
  const who = request.decidedBy ? ` via ${request.decidedBy.channel}` : "";
  const when = request.decidedAt ? ` at ${request.decidedAt.toISOString()}` : "";
  switch (request.status) {
    case "approved":
      return `✅ Approved ${request.decision?.kind === "approve" ? SCOPE_TEXT[request.decision.scope] : ""}${who}${when}.`;
    case "denied":
      return `❌ Denied${who}${when}. Nothing was done.`;
    case "expired":
      return "⌛ Expired — nothing was done.";
    default:
      return "Pending.";
  }
}
