/**
 * MongoDB implementation of `ApprovalRepository` (`approval_requests`). The first decision wins
 * because the decision is a `findOneAndUpdate` that matches only a pending, unexpired request.
 */
import type { Clock } from "../../clock.js";
import { newId, type ApprovalId, type PersonId, type TaskId } from "../../ids.js";
import type { ApprovalRepository } from "../index.js";
import type { Actor } from "../../persons/records.js";
import type { ApprovalDecision, ApprovalRequest, DecideResult, NewApprovalRequest } from "../../approvals/records.js";
import type { ApprovalDoc } from "./documents.js";
import { encodeJson, toApproval } from "./codec.js";
import type { DbLike } from "./driver.js";
import {
  approvalDecisionUpdate,
  decidableApprovalFilter,
  deniedSinceFilter,
  expiredApprovalFilter,
  expireApprovalUpdate,
} from "./filters.js";
import { openColl } from "./session.js";

/** Approval requests; first decision wins, overdue requests expire (`approval_requests`). */
export class MongoApprovalRepository implements ApprovalRepository {
  private readonly approvals;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.approvals = openColl<ApprovalDoc>(db, "approvals", "approval request");
  }

  async createApprovalRequest(input: NewApprovalRequest): Promise<ApprovalRequest> {
    const doc: ApprovalDoc = {
      _id: newId("approval"),
      personId: input.personId,
      taskId: input.taskId,
      capability: input.capability,
      summary: input.summary,
      details: encodeJson(input.details),
      status: "pending",
      decision: null,
      decidedBy: null,
      decidedAt: null,
      createdAt: this.clock.now(),
      expiresAt: input.expiresAt,
    };
    await this.approvals.insertOne(doc);
    return toApproval(doc);
  }

  async getApprovalRequest(id: ApprovalId): Promise<ApprovalRequest | null> {
    const doc = await this.approvals.findOne({ _id: id });
    return doc === null ? null : toApproval(doc);
  }

  async decideApproval(input: { id: ApprovalId; decision: ApprovalDecision; by: Actor; now: Date }): Promise<DecideResult> {
    const by = { channel: input.by.channel, accountId: input.by.accountId };
    const decided = await this.approvals.findOneAndUpdate(
      decidableApprovalFilter(input.id, input.now),
      approvalDecisionUpdate(input.decision, by, input.now),
    );
    if (decided !== null) return { outcome: "decided", request: toApproval(decided) };
    const expired = await this.approvals.findOneAndUpdate(expiredApprovalFilter(input.now, input.id), expireApprovalUpdate);
    if (expired !== null) return { outcome: "expired", request: toApproval(expired) };
    const current = await this.approvals.findOne({ _id: input.id });
    if (current === null) return { outcome: "not_found" };
    if (current.status === "expired") return { outcome: "expired", request: toApproval(current) };
    return { outcome: "already_decided", request: toApproval(current) };
  }

  async listPendingApprovals(personId: PersonId): Promise<ApprovalRequest[]> {
    const docs = await this.approvals.find({ personId, status: "pending" }, { sort: { _id: 1 } });
    return docs.map(toApproval);
  }

  async listTaskApprovals(taskId: TaskId): Promise<ApprovalRequest[]> {
    const docs = await this.approvals.find({ taskId }, { sort: { _id: 1 } });
    return docs.map(toApproval);
  }

  async listDeniedApprovals(personId: PersonId, since: Date): Promise<ApprovalRequest[]> {
    const docs = await this.approvals.find(deniedSinceFilter(personId, since), { sort: { decidedAt: 1, _id: 1 } });
    return docs.map(toApproval);
  }

  async expireApprovals(now: Date): Promise<ApprovalRequest[]> {
    const candidates = await this.approvals.find(expiredApprovalFilter(now), { sort: { _id: 1 }, projection: { _id: 1 } });
    const expired: ApprovalRequest[] = [];
    for (const { _id } of candidates) {
      // Per request, so a decision racing with the sweep keeps its outcome.
      const doc = await this.approvals.findOneAndUpdate(expiredApprovalFilter(now, _id), expireApprovalUpdate);
      if (doc !== null) expired.push(toApproval(doc));
    }
    return expired;
  }
}
