/**
 * Which of a person's grants can be used right now, and for what.
 *
 * A stored grant is usable when it is not revoked or consumed, its pattern parses (legacy grants
 * without one cover nothing), and its scope holds at Sentinel's time:
 * - `once` and `always`: always (a once-grant is consumed atomically on use);
 * - `until`: Sentinel's time is before `until` (Sentinel's time never runs backwards, see time.ts);
 * - `task`: the task has not ended (done, failed or cancelled) — a grant for a task ends with it,
 *   and is then marked ended in the store so it no longer shows as active;
 * - `session`: the person's session (time.ts) is still the one the grant was given in.
 * For one call, a task grant also needs the call to belong to that task.
 */
import type { PersonId, TaskId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { Grant } from "./records.js";
import { parseGrantPattern, patternCovers, type GrantPattern } from "./patterns.js";
import type { ActionDescriptor } from "./descriptor.js";

/** A stored grant with its parsed pattern. */
export interface ActiveGrant {
  grant: Grant;
  pattern: GrantPattern;
}

/** Where and when grants are being used: the call's task, the person's live session, Sentinel's time. */
export interface GrantContext {
  taskId: string | null;
  /** The person's live session id (null: away for 2 hours or more). */
  sessionId: string | null;
  now: Date;
}

const ENDED: ReadonlySet<string> = new Set(["done", "failed", "cancelled"]);

/**
 * The person's grants that are alive at `context.now` (scope checked as described in the module
 * doc; task grants of tasks that ended are ended in the store and audited). Oldest first.
 */
export async function liveGrants(store: Pick<Store, "grants" | "tasks" | "audit">, personId: PersonId, context: GrantContext): Promise<ActiveGrant[]> {
  const stored = await store.grants.listActiveGrants(personId, context.now);
  const out: ActiveGrant[] = [];
  for (const grant of stored) {
    const pattern = parseGrantPattern(grant.pattern);
    if (pattern === null) continue;
    if (grant.grantedAt.getTime() > context.now.getTime()) continue; // issued "in the future": the clock went back
    const scope = grant.scope;
    if (scope.kind === "until" && scope.until.getTime() <= context.now.getTime()) continue;
    if (scope.kind === "session" && scope.sessionId !== context.sessionId) continue;
    if (scope.kind === "task" && !(await taskAlive(store, grant, scope.taskId, context.now))) continue;
    out.push({ grant, pattern });
  }
  return out;
}

async function taskAlive(store: Pick<Store, "grants" | "tasks" | "audit">, grant: Grant, taskId: TaskId, now: Date): Promise<boolean> {
  const task = await store.tasks.getTask(taskId);
  if (task !== null && !ENDED.has(task.state.status)) return true;
  if (await store.grants.revokeGrant(grant.personId, grant.id, now)) {
    await store.audit.appendAudit({
      personId: grant.personId,
      kind: "grant.ended",
      summary: `A grant for task ${taskId} ended with its task`,
      data: { grantId: grant.id, taskId, ended: task === null ? "task gone" : `task ${task.state.status}` },
      at: now,
    });
  }
  return false;
}

/**
 * The live grant that covers `action` in `context`, or null. Longer-lived grants are preferred, so
 * a once-grant is only spent when nothing else covers the call. A task grant covers only calls of
 * its own task; with `exactOnly` (a purchase) only a grant bound to this very action does.
 */
export function coveringGrant(grants: readonly ActiveGrant[], action: ActionDescriptor, context: Pick<GrantContext, "taskId"> & { exactOnly?: boolean }): ActiveGrant | null {
  const usable = grants.filter(
    (g) =>
      (g.grant.scope.kind !== "task" || g.grant.scope.taskId === context.taskId) &&
      (context.exactOnly !== true || g.pattern.digest !== null) &&
      patternCovers(g.pattern, action),
  );
  return usable.find((g) => g.grant.scope.kind !== "once") ?? usable[0] ?? null;
}
