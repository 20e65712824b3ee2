/**
 * What the chat commands (`/grants`, `/revoke`, `/audit`, `/status`) and the HTTP API show about
 * Sentinel: plain data, no formatting for a particular messenger.
 */
import { systemClock } from "../clock.js";
import type { GrantId, PersonId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { Grant, GrantScope } from "../policy/records.js";
import {
  liveGrants,
  type ActiveGrant,
  describePattern,
  parseGrantPattern,
  SESSION_IDLE_MS,
  SentinelClock,
  SessionTracker,
} from "../policy/index.js";

/** One grant as the person sees it. */
export interface GrantView {
  id: GrantId;
  capability: string;
  /** What it covers, in words: "POST requests to api.example.com/notes (any body or query)". */
  target: string;
  /** "once", "this task (task_…)", "this session (…)", "until 2025-…Z", "always". */
  scope: string;
  grantedAt: string;
  /** Channel it was granted through. */
  grantedVia: string;
}

/** One audit line. */
export interface AuditLine {
  at: string;
  kind: string;
  summary: string;
}

/** What the views read. */
export type ViewStore = Pick<Store, "grants" | "approvals" | "audit" | "tasks" | "sentinel" | "conversation">;

/** Sentinel's views and the one command that changes something (revocation). */
export class SentinelViews {
  private readonly time: { clock: SentinelClock; sessions: SessionTracker };

  constructor(
    private readonly store: ViewStore,
    time?: { clock: SentinelClock; sessions: SessionTracker },
  ) {
    this.time = time ?? { clock: new SentinelClock(store, () => systemClock.now()), sessions: new SessionTracker(store) };
  }

  private async clock(): Promise<Date> {
    return this.time.clock.now();
  }

  /** The person's live grants (ended task grants, expired and other-session grants left out), oldest first. */
  async listGrantsView(personId: PersonId): Promise<GrantView[]> {
    const now = await this.clock();
    const session = await this.time.sessions.refresh(personId, now);
    const grants = await liveGrants(this.store, personId, { taskId: null, sessionId: session?.sessionId ?? null, now });
    return grants.map(grantView);
  }

  /**
   * Revokes one of the person's grants; effective for the very next call (Sentinel lists active
   * grants on every call). Audited. Returns false when it was not theirs or already revoked.
   */
  async revokeGrant(personId: PersonId, grantId: GrantId): Promise<{ revoked: boolean; notice: string }> {
    const now = await this.clock();
    const grant = await this.store.grants.getGrant(grantId);
    const revoked = await this.store.grants.revokeGrant(personId, grantId, now);
    if (!revoked) return { revoked, notice: "No such active grant of yours; nothing changed." };
    const label = grant ? `${grant.capability} → ${targetOf(grant)} (${scopeText(grant.scope)})` : grantId;
    await this.store.audit.appendAudit({ personId, kind: "grant.revoked", summary: `Revoked ${label}`, data: { grantId }, at: now });
    return { revoked, notice: `Revoked: ${label}.` };
  }

  /** A page of the person's audit log, newest first; pass `next` back as `after` for the next page. */
  async listAuditView(personId: PersonId, page: { after?: string; limit?: number } = {}): Promise<{ items: AuditLine[]; next?: string }> {
    const result = await this.store.audit.listAudit(personId, { limit: page.limit ?? 20, ...(page.after ? { after: page.after } : {}) });
    return {
      items: result.items.map((e) => ({ at: e.at.toISOString(), kind: e.kind, summary: e.summary })),
      ...(result.next ? { next: result.next } : {}),
    };
  }

  /**
   * One line: what Familiar is doing now. Pending approvals come first (they block work), then a
   * running task, then the latest audited action, else "Idle."
   */
  async currentStatus(personId: PersonId): Promise<string> {
    const now = await this.clock();
    const pending = (await this.store.approvals.listPendingApprovals(personId)).filter((r) => r.expiresAt > now);
    if (pending.length > 0) {
      const more = pending.length > 1 ? ` (and ${pending.length - 1} more)` : "";
      return `Waiting for your approval: ${pending[0]!.summary}${more}.`;
    }
    const running = await this.store.tasks.listTasks({ personId, status: ["running"] }, { limit: 1 });
    const task = running.items[0];
    if (task) return task.kind === "turn" ? "Answering your message." : `Working on “${task.title}”.`;
    const latest = await this.store.audit.listAudit(personId, { limit: 1 });
    const event = latest.items[0];
    if (event) return `Idle. Last: ${event.summary} (${ago(now, event.at)}).`;
    return "Idle.";
  }
}

function grantView({ grant }: ActiveGrant): GrantView {
  return {
    id: grant.id,
    capability: grant.capability,
    target: targetOf(grant),
    scope: scopeText(grant.scope),
    grantedAt: grant.grantedAt.toISOString(),
    grantedVia: grant.grantedBy.channel,
  };
}

function targetOf(grant: Grant): string {
  const pattern = parseGrantPattern(grant.pattern);
  return pattern === null ? "nothing (a grant from an older version)" : describePattern(pattern);
}

function scopeText(scope: GrantScope): string {
  switch (scope.kind) {
    case "once":
      return "once";
    case "task":
      return `this task (${scope.taskId})`;
    case "session":
      return `this session (until you have been away ${SESSION_IDLE_MS / 3_600_000} h)`;
    case "until":
      return `until ${scope.until.toISOString()}`;
    case "always":
      return "always";
  }
}

function ago(now: Date, at: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}
