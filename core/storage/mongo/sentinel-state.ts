/**
 * MongoDB implementation of `SentinelStateRepository`: approval buttons (`approval_choices`, `_id`
 * = token), sessions (`sentinel_sessions`, `_id` = person), the time high-water mark (one
 * `sentinel_clock` document raised with `$max`) and first untrusted host sightings
 * (`untrusted_hosts`, `_id` = person|host, inserted with `$setOnInsert`).
 */
import { asId, type ApprovalId, type PersonId } from "../../ids.js";
import type { SentinelStateRepository } from "../index.js";
import type { ApprovalChoice } from "../../approvals/records.js";
import type { HostSighting, SentinelSession } from "../../policy/records.js";
import type { ApprovalChoiceDoc, SentinelClockDoc, SentinelSessionDoc, UntrustedHostDoc } from "./documents.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

/** Sentinel's own state on MongoDB. */
export class MongoSentinelStateRepository implements SentinelStateRepository {
  private readonly choices;
  private readonly sessions;
  private readonly clock;
  private readonly hosts;

  constructor(db: DbLike) {
    this.choices = openColl<ApprovalChoiceDoc>(db, "approvalChoices", "approval choice");
    this.sessions = openColl<SentinelSessionDoc>(db, "sentinelSessions", "Sentinel session");
    this.clock = openColl<SentinelClockDoc>(db, "sentinelClock", "Sentinel clock");
    this.hosts = openColl<UntrustedHostDoc>(db, "untrustedHosts", "untrusted host");
  }

  async recordApprovalChoices(choices: Omit<ApprovalChoice, "createdAt">[], now: Date): Promise<void> {
    for (const c of choices) {
      await this.choices.insertOne({ _id: c.token, approvalId: c.approvalId, choice: c.choice, outboxId: c.outboxId, createdAt: now });
    }
  }

  async getApprovalChoice(token: string): Promise<ApprovalChoice | null> {
    const d = await this.choices.findOne({ _id: token });
    if (d === null) return null;
    return { token: d._id, approvalId: asId("approval", d.approvalId), choice: d.choice, outboxId: d.outboxId === null ? null : asId("outbox", d.outboxId), createdAt: d.createdAt };
  }

  async listApprovalChoices(approvalId: ApprovalId): Promise<ApprovalChoice[]> {
    const docs = await this.choices.find({ approvalId }, { sort: { createdAt: 1, _id: 1 } });
    return docs.map((d) => ({ token: d._id, approvalId: asId("approval", d.approvalId), choice: d.choice, outboxId: d.outboxId === null ? null : asId("outbox", d.outboxId), createdAt: d.createdAt }));
  }

  async getSession(personId: PersonId): Promise<SentinelSession | null> {
    const d = await this.sessions.findOne({ _id: personId });
    if (d === null) return null;
    return { personId, sessionId: d.sessionId, startedAt: d.startedAt, lastActivityAt: d.lastActivityAt, lastSeq: d.lastSeq };
  }

  async saveSession(session: SentinelSession): Promise<void> {
    await this.sessions.updateOne(
      { _id: session.personId },
      { $set: { sessionId: session.sessionId, startedAt: session.startedAt, lastActivityAt: session.lastActivityAt, lastSeq: session.lastSeq } },
      { upsert: true },
    );
  }

  async advanceClock(now: Date): Promise<Date> {
    const doc = await this.clock.findOneAndUpdate({ _id: "clock" }, { $max: { highWater: now } }, { upsert: true });
    return doc?.highWater ?? now;
  }

  async noteUntrustedHosts(personId: PersonId, hosts: string[], source: string, at: Date): Promise<void> {
    for (const host of new Set(hosts)) {
      await this.hosts.updateOne({ _id: `${personId}|${host}` }, { $setOnInsert: { personId, host, firstSeenAt: at, source } }, { upsert: true });
    }
  }

  async firstUntrustedSightings(personId: PersonId, hosts: string[]): Promise<HostSighting[]> {
    if (hosts.length === 0) return [];
    const docs = await this.hosts.find({ _id: { $in: [...new Set(hosts)].map((h) => `${personId}|${h}`) } });
    return docs.map((d) => ({ personId, host: d.host, firstSeenAt: d.firstSeenAt, source: d.source }));
  }
}
