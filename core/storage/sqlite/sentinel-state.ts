import { DuplicateKeyError } from "../../errors.js";
import { asId, type ApprovalId, type PersonId } from "../../ids.js";
import type { SentinelStateRepository } from "../index.js";
import type { ApprovalChoice, ApprovalChoiceKind } from "../../approvals/records.js";
import type { HostSighting, SentinelSession } from "../../policy/records.js";
import { type Row, type SqliteContext, ms, toDate } from "./context.js";

function toChoice(row: Row): ApprovalChoice {
  return {
    token: row.token as string,
    approvalId: asId("approval", row.approval_id as string),
    choice: row.choice as ApprovalChoiceKind,
    outboxId: row.outbox_id === null ? null : asId("outbox", row.outbox_id as string),
    createdAt: toDate(row.created_at),
  };
}

function toSession(row: Row): SentinelSession {
  return {
    personId: asId("person", row.person_id as string),
    sessionId: row.session_id as string,
    startedAt: toDate(row.started_at),
    lastActivityAt: toDate(row.last_activity_at),
    lastSeq: row.last_seq as number,
  };
}

/** Sentinel's own tables: approval buttons, sessions, the time high-water mark, untrusted host sightings. */
export class SqliteSentinelStateRepository implements SentinelStateRepository {
  constructor(private readonly ctx: SqliteContext) {}

  recordApprovalChoices(choices: Omit<ApprovalChoice, "createdAt">[], now: Date): Promise<void> {
    return this.ctx.atomic(
      () => {
        const insert = this.ctx.stmt("INSERT INTO approval_choices (token, approval_id, choice, outbox_id, created_at) VALUES (?, ?, ?, ?, ?)");
        for (const c of choices) insert.run(c.token, c.approvalId, c.choice, c.outboxId, ms(now));
      },
      {
        duplicate: (cause) => new DuplicateKeyError("approval choice", choices.map((c) => c.token).join(","), { cause }),
        references: { entity: "approval request", id: choices[0]?.approvalId ?? "?" },
      },
    );
  }

  getApprovalChoice(token: string): Promise<ApprovalChoice | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM approval_choices WHERE token = ?").get(token) as Row | undefined;
      return row ? toChoice(row) : null;
    });
  }

  listApprovalChoices(approvalId: ApprovalId): Promise<ApprovalChoice[]> {
    return this.ctx.run(() => (this.ctx.stmt("SELECT * FROM approval_choices WHERE approval_id = ? ORDER BY rowid").all(approvalId) as Row[]).map(toChoice));
  }

  getSession(personId: PersonId): Promise<SentinelSession | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM sentinel_sessions WHERE person_id = ?").get(personId) as Row | undefined;
      return row ? toSession(row) : null;
    });
  }

  saveSession(session: SentinelSession): Promise<void> {
    return this.ctx.run(
      () => {
        this.ctx
          .stmt(
            `INSERT INTO sentinel_sessions (person_id, session_id, started_at, last_activity_at, last_seq) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (person_id) DO UPDATE SET session_id = excluded.session_id, started_at = excluded.started_at,
               last_activity_at = excluded.last_activity_at, last_seq = excluded.last_seq`,
          )
          .run(session.personId, session.sessionId, ms(session.startedAt), ms(session.lastActivityAt), session.lastSeq);
      },
      { references: { entity: "person", id: session.personId } },
    );
  }

  advanceClock(now: Date): Promise<Date> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `INSERT INTO sentinel_clock (id, high_water) VALUES (1, ?)
           ON CONFLICT (id) DO UPDATE SET high_water = max(high_water, excluded.high_water) RETURNING high_water`,
        )
        .get(ms(now)) as Row;
      return toDate(row.high_water);
    });
  }

  noteUntrustedHosts(personId: PersonId, hosts: string[], source: string, at: Date): Promise<void> {
    if (hosts.length === 0) return Promise.resolve();
    return this.ctx.atomic(
      () => {
        const insert = this.ctx.stmt("INSERT INTO untrusted_hosts (person_id, host, first_seen_at, source) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING");
        for (const host of hosts) insert.run(personId, host, ms(at), source);
      },
      { references: { entity: "person", id: personId } },
    );
  }

  firstUntrustedSightings(personId: PersonId, hosts: string[]): Promise<HostSighting[]> {
    if (hosts.length === 0) return Promise.resolve([]);
    return this.ctx.run(() => {
      const select = this.ctx.stmt("SELECT * FROM untrusted_hosts WHERE person_id = ? AND host = ?");
      const out: HostSighting[] = [];
      for (const host of new Set(hosts)) {
        const row = select.get(personId, host) as Row | undefined;
        if (row) out.push({ personId, host, firstSeenAt: toDate(row.first_seen_at), source: row.source as string });
      }
      return out;
    });
  }
}
