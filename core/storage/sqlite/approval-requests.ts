import { asId, newId, type ApprovalId, type PersonId, type TaskId } from "../../ids.js";
import type { ApprovalRepository } from "../index.js";
import type { Actor } from "../../persons/records.js";
import type { ApprovalDecision, ApprovalRequest, ApprovalStatus, DecideResult, NewApprovalRequest } from "../../approvals/records.js";
import type { ChannelName } from "../../channels/records.js";
import type { Json } from "../../json.js";
import { type Row, type SqliteContext, jsonText, ms, parseJson, toDate, toDateOrNull } from "./context.js";

function toRequest(row: Row): ApprovalRequest {
  return {
    id: asId("approval", row.id as string),
    personId: asId("person", row.person_id as string),
    taskId: row.task_id === null ? null : asId("task", row.task_id as string),
    capability: row.capability as string,
    summary: row.summary as string,
    details: parseJson<Json>(row.details),
    status: row.status as ApprovalStatus,
    decision: row.decision === null ? null : parseJson<ApprovalDecision>(row.decision),
    decidedBy: row.decided_channel === null ? null : { channel: row.decided_channel as ChannelName, accountId: row.decided_account as string },
    decidedAt: toDateOrNull(row.decided_at),
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
  };
}

function byCreation(a: ApprovalRequest, b: ApprovalRequest): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Approval requests behind Sentinel's `ask`: first decision wins, expiry is enforced at decision time. */
export class SqliteApprovalRepository implements ApprovalRepository {
  constructor(private readonly ctx: SqliteContext) {}

  createApprovalRequest(input: NewApprovalRequest): Promise<ApprovalRequest> {
    return this.ctx.run(
      () =>
        toRequest(
          this.ctx
            .stmt(
              `INSERT INTO approvals (id, person_id, task_id, capability, summary, details, status, created_at, expires_at)
               VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING *`,
            )
            .get(newId("approval"), input.personId, input.taskId, input.capability, input.summary, jsonText(input.details), this.ctx.nowMs(), ms(input.expiresAt)) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  getApprovalRequest(id: ApprovalId): Promise<ApprovalRequest | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM approvals WHERE id = ?").get(id) as Row | undefined;
      return row ? toRequest(row) : null;
    });
  }

  decideApproval(input: { id: ApprovalId; decision: ApprovalDecision; by: Actor; now: Date }): Promise<DecideResult> {
    const now = ms(input.now);
    const status: ApprovalStatus = input.decision.kind === "approve" ? "approved" : "denied";
    return this.ctx.atomic((): DecideResult => {
      const decided = this.ctx
        .stmt(
          `UPDATE approvals SET status = ?, decision = ?, decided_channel = ?, decided_account = ?, decided_at = ?
           WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING *`,
        )
        .get(status, jsonText(input.decision), input.by.channel, input.by.accountId, now, input.id, now) as Row | undefined;
      if (decided) return { outcome: "decided", request: toRequest(decided) };
      const expired = this.ctx
        .stmt("UPDATE approvals SET status = 'expired' WHERE id = ? AND status = 'pending' AND expires_at <= ? RETURNING *")
        .get(input.id, now) as Row | undefined;
      if (expired) return { outcome: "expired", request: toRequest(expired) };
      const row = this.ctx.stmt("SELECT * FROM approvals WHERE id = ?").get(input.id) as Row | undefined;
      if (!row) return { outcome: "not_found" };
      const request = toRequest(row);
      return request.status === "expired" ? { outcome: "expired", request } : { outcome: "already_decided", request };
    });
  }

  listPendingApprovals(personId: PersonId): Promise<ApprovalRequest[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM approvals WHERE person_id = ? AND status = 'pending' ORDER BY created_at, id").all(personId) as Row[]).map(toRequest),
    );
  }

  listTaskApprovals(taskId: TaskId): Promise<ApprovalRequest[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM approvals WHERE task_id = ? ORDER BY created_at, id").all(taskId) as Row[]).map(toRequest),
    );
  }

  listDeniedApprovals(personId: PersonId, since: Date): Promise<ApprovalRequest[]> {
    return this.ctx.run(() =>
      (
        this.ctx.stmt("SELECT * FROM approvals WHERE person_id = ? AND status = 'denied' AND decided_at >= ? ORDER BY decided_at, id").all(personId, ms(since)) as Row[]
      ).map(toRequest),
    );
  }

  /** The returned requests are oldest first. */
  expireApprovals(now: Date): Promise<ApprovalRequest[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("UPDATE approvals SET status = 'expired' WHERE status = 'pending' AND expires_at <= ? RETURNING *").all(ms(now)) as Row[])
        .map(toRequest)
        .sort(byCreation),
    );
  }
}
