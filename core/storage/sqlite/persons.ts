import { DuplicateKeyError, NotFoundError } from "../../errors.js";
import { asId, newId, type PersonId } from "../../ids.js";
import type { PersonRepository } from "../index.js";
import type { ChannelName } from "../../channels/records.js";
import type { Identity, NewPerson, Person, PersonSettingsPatch } from "../../persons/records.js";
import type { Page, PageRequest } from "../index.js";
import { parseReach, reachText } from "../index.js";
import { type Row, type SqliteContext, ms, toDate, toDateOrNull } from "./context.js";
import { keyset, toPage } from "./pagination.js";

function toPerson(row: Row): Person {
  return {
    id: asId("person", row.id as string),
    displayName: row.display_name as string,
    timeZone: row.time_zone as string,
    timeZoneConfirmed: row.time_zone_confirmed === 1,
    timeZoneAsk: row.time_zone_asked_at === null || row.time_zone_asked_at === undefined ? null : { at: toDate(row.time_zone_asked_at), pendingSeq: (row.time_zone_pending_seq as number | null) ?? null },
    locale: row.locale as string,
    proactivity: row.proactivity as Person["proactivity"],
    quietHours: row.quiet_from === null ? null : { from: row.quiet_from as string, to: row.quiet_to as string },
    // The column predates "no digest time" and is NOT NULL: '' stands for null.
    digestTime: typeof row.digest_time === "string" && row.digest_time !== "" ? row.digest_time : null,
    paused: row.paused === 1,
    personaName: (row.persona_name as string | null) ?? null,
    personaStyle: (row.persona_style as string | null) ?? null,
    reach: parseReach(row.reach as string | null | undefined),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

function toIdentity(row: Row): Identity {
  const since = toDateOrNull(row.unreachable_since);
  return {
    personId: asId("person", row.person_id as string),
    channel: row.channel as ChannelName,
    accountId: row.account_id as string,
    address: row.address as string,
    unreachable: since ? { reason: row.unreachable_reason as string, since } : null,
    createdAt: toDate(row.created_at),
  };
}

/** Persons and their channel identities. */
export class SqlitePersonRepository implements PersonRepository {
  constructor(private readonly ctx: SqliteContext) {}

  createPerson(input: NewPerson): Promise<Person> {
    const now = this.ctx.nowMs();
    const id = newId("person");
    return this.ctx.run(
      () =>
        toPerson(
          this.ctx
            .stmt(
              `INSERT INTO persons (id, display_name, time_zone, time_zone_confirmed, locale, proactivity, quiet_from, quiet_to, digest_time, paused, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) RETURNING *`,
            )
            .get(
              id,
              input.displayName,
              input.timeZone ?? "UTC",
              input.timeZone === undefined ? 0 : 1,
              input.locale ?? "en-US",
              input.proactivity ?? "normal",
              input.quietHours?.from ?? null,
              input.quietHours?.to ?? null,
              input.digestTime ?? "",
              now,
              now,
            ) as Row,
        ),
      { duplicate: (cause) => new DuplicateKeyError("person", id, { cause }) },
    );
  }

  getPerson(id: PersonId): Promise<Person | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM persons WHERE id = ?").get(id) as Row | undefined;
      return row ? toPerson(row) : null;
    });
  }

  updatePerson(id: PersonId, patch: PersonSettingsPatch): Promise<Person> {
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => {
      sets.push(`${column} = ?`);
      params.push(value);
    };
    if (patch.displayName !== undefined) set("display_name", patch.displayName);
    if (patch.timeZone !== undefined) {
      set("time_zone", patch.timeZone);
      set("time_zone_confirmed", 1);
    }
    if (patch.timeZoneAsk !== undefined) {
      set("time_zone_asked_at", patch.timeZoneAsk === null ? null : ms(patch.timeZoneAsk.at));
      set("time_zone_pending_seq", patch.timeZoneAsk?.pendingSeq ?? null);
    }
    if (patch.locale !== undefined) set("locale", patch.locale);
    if (patch.proactivity !== undefined) set("proactivity", patch.proactivity);
    if (patch.quietHours !== undefined) {
      set("quiet_from", patch.quietHours?.from ?? null);
      set("quiet_to", patch.quietHours?.to ?? null);
    }
    if (patch.digestTime !== undefined) set("digest_time", patch.digestTime ?? "");
    if (patch.paused !== undefined) set("paused", patch.paused ? 1 : 0);
    if (patch.personaName !== undefined) set("persona_name", patch.personaName);
    if (patch.personaStyle !== undefined) set("persona_style", patch.personaStyle);
    if (patch.reach !== undefined) set("reach", reachText(patch.reach));
    set("updated_at", this.ctx.nowMs());
    return this.ctx.run(() => {
      const row = this.ctx.stmt(`UPDATE persons SET ${sets.join(", ")} WHERE id = ? RETURNING *`).get(...params, id) as Row | undefined;
      if (!row) throw new NotFoundError("person", id);
      return toPerson(row);
    });
  }

  listPersons(page?: PageRequest): Promise<Page<Person>> {
    return this.ctx.run(() => {
      const k = keyset(page, "created_at", "asc");
      const rows = this.ctx
        .stmt(`SELECT * FROM persons ${k.where ? `WHERE ${k.where}` : ""} ${k.orderBy} LIMIT ?`)
        .all(...k.params, k.fetch) as Row[];
      return toPage(rows, k.limit, "created_at", toPerson);
    });
  }

  addIdentity(identity: Omit<Identity, "createdAt" | "unreachable" | "address"> & { address?: string }): Promise<Identity> {
    return this.ctx.run(
      () =>
        toIdentity(
          this.ctx
            .stmt(
              `INSERT INTO identities (channel, account_id, person_id, address, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(identity.channel, identity.accountId, identity.personId, identity.address ?? identity.accountId, this.ctx.nowMs()) as Row,
        ),
      {
        duplicate: (cause) => new DuplicateKeyError("identity", `${identity.channel}:${identity.accountId}`, { cause }),
        references: { entity: "person", id: identity.personId },
      },
    );
  }

  findIdentity(channel: ChannelName, accountId: string): Promise<Identity | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM identities WHERE channel = ? AND account_id = ?").get(channel, accountId) as Row | undefined;
      return row ? toIdentity(row) : null;
    });
  }

  listIdentities(personId: PersonId): Promise<Identity[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM identities WHERE person_id = ? ORDER BY created_at, rowid").all(personId) as Row[]).map(toIdentity),
    );
  }

  /** Does nothing when the identity does not exist. */
  removeIdentity(personId: PersonId, channel: ChannelName, accountId: string): Promise<boolean> {
    return this.ctx.run(() => this.ctx.stmt("DELETE FROM identities WHERE person_id = ? AND channel = ? AND account_id = ?").run(personId, channel, accountId).changes === 1);
  }

  setIdentityUnreachable(channel: ChannelName, accountId: string, reason: string | null, now: Date): Promise<void> {
    return this.ctx.run(() => {
      this.ctx
        .stmt("UPDATE identities SET unreachable_reason = ?, unreachable_since = ? WHERE channel = ? AND account_id = ?")
        .run(reason, reason === null ? null : ms(now), channel, accountId);
    });
  }

  recordIdentitySeen(input: { channel: ChannelName; accountId: string; address: string; now: Date }): Promise<void> {
    return this.ctx.run(() => {
      this.ctx
        .stmt("UPDATE identities SET address = ?, unreachable_reason = NULL, unreachable_since = NULL WHERE channel = ? AND account_id = ?")
        .run(input.address, input.channel, input.accountId);
    });
  }

  moveIdentity(input: { channel: ChannelName; accountId: string; toPersonId: PersonId; address: string }): Promise<Identity> {
    return this.ctx.run(
      () => {
        const row = this.ctx
          .stmt(
            `UPDATE identities SET person_id = ?, address = ?, unreachable_reason = NULL, unreachable_since = NULL
             WHERE channel = ? AND account_id = ? RETURNING *`,
          )
          .get(input.toPersonId, input.address, input.channel, input.accountId) as Row | undefined;
        if (!row) throw new NotFoundError("identity", `${input.channel}:${input.accountId}`);
        return toIdentity(row);
      },
      { references: { entity: "person", id: input.toPersonId } },
    );
  }
}
