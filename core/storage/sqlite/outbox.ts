import { ConflictError, NotFoundError } from "../../errors.js";
import { asId, newId, type OutboxId, type PersonId } from "../../ids.js";
import { type OutboxRepository } from "../index.js";
import { emptyProgress, type DeliveryProgress, type NewOutboxMessage, type OutboxMessage, type OutboxStatus } from "../../outbox/records.js";
import { type Button, type ChannelName } from "../../channels/records.js";
import { type Json } from "../../json.js";
import { type Page, type PageRequest } from "../index.js";
import { type Row, type SqliteContext, inJson, jsonText, ms, parseJson, toDate, toDateOrNull } from "./context.js";
import { keyset, toPage } from "./pagination.js";

function toMessage(row: Row): OutboxMessage {
  const leaseUntil = toDateOrNull(row.lease_until);
  const delivered = row.delivered === null ? null : parseJson<{ channel: ChannelName; address: string; platformIds: string[] }>(row.delivered);
  return {
    id: asId("outbox", row.id as string),
    personId: asId("person", row.person_id as string),
    deliveryKey: row.delivery_key as string,
    channel: row.channel as ChannelName | null,
    lane: (row.lane as ChannelName | null | undefined) ?? null,
    text: row.text as string,
    buttons: parseJson<Button[]>(row.buttons),
    editOf: row.edit_of === null ? null : asId("outbox", row.edit_of as string),
    card: row.card === null || row.card === undefined ? null : parseJson<Json>(row.card),
    attachments: parseJson<string[]>(row.attachments ?? "[]").map((id) => asId("artifact", id)),
    status: row.status as OutboxStatus,
    attempts: row.attempts as number,
    nextAttemptAt: toDate(row.next_attempt_at),
    lease: leaseUntil && row.lease_owner !== null ? { owner: row.lease_owner as string, until: leaseUntil } : null,
    lastError: row.last_error as string | null,
    delivered: delivered ? { ...delivered, at: toDate(row.delivered_at) } : null,
    progress: { ...emptyProgress(), ...parseJson<Partial<DeliveryProgress>>(row.progress) },
    createdAt: toDate(row.created_at),
  };
}

/**
 * The durable outbox. A message is claimable when it is due, queued (or sending under an expired
 * lease), and the oldest undelivered message of its person on its lane — so each person's messages
 * go out in order per channel, one at a time, while other channels and persons proceed in parallel
 * (a message stuck on Telegram never holds up the web chat). `attempts` counts claims.
 */
export class SqliteOutboxRepository implements OutboxRepository {
  constructor(private readonly ctx: SqliteContext) {}

  enqueueOutbound(input: NewOutboxMessage, now: Date): Promise<OutboxMessage> {
    const at = ms(now);
    return this.ctx.run(
      () => {
        const inserted = this.ctx
          .stmt(
            `INSERT INTO outbox (id, person_id, delivery_key, channel, lane, text, buttons, edit_of, card, attachments, status, attempts, next_attempt_at, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?) ON CONFLICT (delivery_key) DO NOTHING RETURNING *`,
          )
          .get(newId("outbox"), input.personId, input.deliveryKey, input.channel ?? null, input.channel ?? null, input.text, jsonText(input.buttons ?? []), input.editOf ?? null, input.card === undefined || input.card === null ? null : jsonText(input.card), jsonText(input.attachments ?? []), at, at) as
          | Row
          | undefined;
        return toMessage(inserted ?? (this.ctx.stmt("SELECT * FROM outbox WHERE delivery_key = ?").get(input.deliveryKey) as Row));
      },
      { references: { entity: "person", id: input.personId } },
    );
  }

  getOutbound(id: OutboxId): Promise<OutboxMessage | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM outbox WHERE id = ?").get(id) as Row | undefined;
      return row ? toMessage(row) : null;
    });
  }

  claimNextOutbound(input: { owner: string; now: Date; leaseMs: number; personId?: PersonId }): Promise<OutboxMessage | null> {
    const now = ms(input.now);
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE outbox SET status = 'sending', lease_owner = @owner, lease_until = @until, attempts = attempts + 1
           WHERE id = (
             SELECT o.id FROM outbox o
             WHERE o.status IN ('queued', 'sending') AND o.next_attempt_at <= @now
               AND (o.status = 'queued' OR o.lease_until <= @now)
               AND (@person IS NULL OR o.person_id = @person)
               AND NOT EXISTS (
                 SELECT 1 FROM outbox p
                 WHERE p.person_id = o.person_id AND p.lane IS o.lane AND p.status IN ('queued', 'sending')
                   AND (p.created_at < o.created_at OR (p.created_at = o.created_at AND p.id < o.id)))
             ORDER BY o.next_attempt_at, o.created_at, o.id LIMIT 1)
           RETURNING *`,
        )
        .get({ owner: input.owner, until: now + input.leaseMs, now, person: input.personId ?? null }) as Row | undefined;
      return row ? toMessage(row) : null;
    });
  }

  saveProgress(input: { id: OutboxId; owner: string; progress: DeliveryProgress; now: Date; leaseMs: number }): Promise<OutboxMessage> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(`UPDATE outbox SET progress = ?, lease_until = ? WHERE id = ? AND status = 'sending' AND lease_owner = ? RETURNING *`)
        .get(jsonText(input.progress), ms(input.now) + input.leaseMs, input.id, input.owner) as Row | undefined;
      if (row) return toMessage(row);
      throw this.lostLease(input.id, input.owner);
    });
  }

  renewLeases(input: { owner: string; now: Date; leaseMs: number }): Promise<number> {
    return this.ctx.run(
      () => this.ctx.stmt("UPDATE outbox SET lease_until = ? WHERE status = 'sending' AND lease_owner = ?").run(ms(input.now) + input.leaseMs, input.owner).changes,
    );
  }

  expireForeignLeases(input: { owner: string; now: Date }): Promise<number> {
    return this.ctx.run(
      () =>
        this.ctx
          .stmt("UPDATE outbox SET lease_until = min(lease_until, ?) WHERE status = 'sending' AND lease_owner IS NOT ?")
          .run(ms(input.now), input.owner).changes,
    );
  }

  nextDueAt(): Promise<Date | null> {
    return this.ctx.run(() => {
      const at = this.ctx
        .stmt(
          `SELECT min(CASE WHEN status = 'sending' THEN max(next_attempt_at, coalesce(lease_until, 0)) ELSE next_attempt_at END)
           FROM outbox WHERE status IN ('queued', 'sending')`,
        )
        .pluck()
        .get() as number | null;
      return at === null ? null : toDate(at);
    });
  }

  markDelivered(input: { id: OutboxId; owner: string; channel: ChannelName; address: string; platformIds: string[]; now: Date }): Promise<OutboxMessage> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE outbox SET status = 'delivered', delivered = ?, delivered_at = ?, lease_owner = NULL, lease_until = NULL
           WHERE id = ? AND status = 'sending' AND lease_owner = ? RETURNING *`,
        )
        .get(jsonText({ channel: input.channel, address: input.address, platformIds: input.platformIds }), ms(input.now), input.id, input.owner) as Row | undefined;
      if (row) return toMessage(row);
      throw this.lostLease(input.id, input.owner);
    });
  }

  markDeliveryFailed(input: { id: OutboxId; owner: string; error: string; retryAt: Date | null; now: Date }): Promise<OutboxMessage> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE outbox SET status = CASE WHEN @retryAt IS NULL THEN 'failed' ELSE 'queued' END,
             next_attempt_at = coalesce(@retryAt, next_attempt_at), last_error = @error, lease_owner = NULL, lease_until = NULL
           WHERE id = @id AND status = 'sending' AND lease_owner = @owner RETURNING *`,
        )
        .get({ retryAt: input.retryAt ? ms(input.retryAt) : null, error: input.error, id: input.id, owner: input.owner }) as Row | undefined;
      if (row) return toMessage(row);
      throw this.lostLease(input.id, input.owner);
    });
  }

  listUnroutedOutbound(limit: number): Promise<OutboxMessage[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM outbox WHERE status = 'queued' AND lane IS NULL ORDER BY created_at, id LIMIT ?").all(limit) as Row[]).map(toMessage),
    );
  }

  routeOutbound(input: { id: OutboxId; lane: ChannelName | null; error?: string; now: Date }): Promise<boolean> {
    return this.ctx.run(() => {
      const sql =
        input.lane === null
          ? "UPDATE outbox SET status = 'failed', last_error = ? WHERE id = ? AND status = 'queued' AND lane IS NULL"
          : "UPDATE outbox SET lane = ? WHERE id = ? AND status = 'queued' AND lane IS NULL";
      return this.ctx.stmt(sql).run(input.lane ?? input.error ?? "nowhere to reach the person", input.id).changes === 1;
    });
  }

  rerouteOutbound(input: { id: OutboxId; owner: string; progress: DeliveryProgress; error: string; now: Date }): Promise<OutboxMessage> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE outbox SET status = 'queued', lane = NULL, channel = NULL, progress = ?, last_error = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL
           WHERE id = ? AND status = 'sending' AND lease_owner = ? RETURNING *`,
        )
        .get(jsonText(input.progress), input.error, ms(input.now), input.id, input.owner) as Row | undefined;
      if (row) return toMessage(row);
      throw this.lostLease(input.id, input.owner);
    });
  }

  wakeLane(input: { personId: PersonId; lane: ChannelName; now: Date }): Promise<number> {
    return this.ctx.run(
      () =>
        this.ctx.stmt("UPDATE outbox SET next_attempt_at = min(next_attempt_at, ?) WHERE person_id = ? AND lane = ? AND status = 'queued'").run(ms(input.now), input.personId, input.lane)
          .changes,
    );
  }

  listOutbound(personId: PersonId, page?: PageRequest & { status?: OutboxMessage["status"][] }): Promise<Page<OutboxMessage>> {
    return this.ctx.run(() => {
      const k = keyset(page, "created_at", "asc");
      const where = ["person_id = ?"];
      const params: unknown[] = [personId];
      if (page?.status) {
        where.push(`status IN ${inJson}`);
        params.push(JSON.stringify(page.status));
      }
      if (k.where) where.push(k.where);
      const rows = this.ctx.stmt(`SELECT * FROM outbox WHERE ${where.join(" AND ")} ${k.orderBy} LIMIT ?`).all(...params, ...k.params, k.fetch) as Row[];
      return toPage(rows, k.limit, "created_at", toMessage);
    });
  }

  private lostLease(id: OutboxId, owner: string): Error {
    const row = this.ctx.stmt("SELECT status, lease_owner FROM outbox WHERE id = ?").get(id) as Row | undefined;
    if (!row) return new NotFoundError("outbound message", id);
    return new ConflictError(`outbound message ${id} is ${String(row.status)} (lease owner ${String(row.lease_owner)}): ${owner} does not hold its lease`);
  }
}
