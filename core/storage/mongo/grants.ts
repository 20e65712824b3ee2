/** MongoDB implementation of `GrantRepository` (`grants`). Consumption and revocation are conditional updates. */
import type { Clock } from "../../clock.js";
import { newId, type GrantId, type PersonId } from "../../ids.js";
import type { GrantRepository } from "../index.js";
import type { Grant, GrantConstraints, NewGrant } from "../../policy/records.js";
import type { GrantDoc } from "./documents.js";
import { encodeJson, toGrant } from "./codec.js";
import type { DbLike } from "./driver.js";
import { activeGrantsFilter, consumableGrantFilter, revocableGrantFilter } from "./filters.js";
import { openColl } from "./session.js";

/** Constraints without undefined keys (the driver would store them as null). */
function definedConstraints(c: GrantConstraints): GrantConstraints {
  const out: GrantConstraints = {};
  if (c.destination !== undefined) out.destination = c.destination;
  if (c.recipient !== undefined) out.recipient = c.recipient;
  if (c.maxAmount !== undefined) out.maxAmount = c.maxAmount;
  if (c.action !== undefined) out.action = c.action;
  return out;
}

/** Grants; once-grants are consumed by a conditional update (`grants`). */
export class MongoGrantRepository implements GrantRepository {
  private readonly grants;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.grants = openColl<GrantDoc>(db, "grants", "grant");
  }

  async recordGrant(input: NewGrant): Promise<Grant> {
    const doc: GrantDoc = {
      _id: newId("grant"),
      personId: input.personId,
      capability: input.capability,
      constraints: definedConstraints(input.constraints),
      pattern: input.pattern === undefined || input.pattern === null ? null : encodeJson(input.pattern),
      scope: { ...input.scope },
      grantedBy: { channel: input.grantedBy.channel, accountId: input.grantedBy.accountId },
      grantedAt: input.grantedAt ?? this.clock.now(),
      consumedAt: null,
      revokedAt: null,
    };
    await this.grants.insertOne(doc);
    return toGrant(doc);
  }

  async getGrant(id: GrantId): Promise<Grant | null> {
    const doc = await this.grants.findOne({ _id: id });
    return doc === null ? null : toGrant(doc);
  }

  async listActiveGrants(personId: PersonId, now: Date): Promise<Grant[]> {
    const docs = await this.grants.find(activeGrantsFilter(personId, now), { sort: { grantedAt: 1, _id: 1 } });
    return docs.map(toGrant);
  }

  async consumeGrant(id: GrantId, now: Date): Promise<boolean> {
    const result = await this.grants.updateOne(consumableGrantFilter(id), { $set: { consumedAt: now } });
    return result.matchedCount === 1;
  }

  async revokeGrant(personId: PersonId, id: GrantId, now: Date): Promise<boolean> {
    const result = await this.grants.updateOne(revocableGrantFilter(personId, id), { $set: { revokedAt: now } });
    return result.matchedCount === 1;
  }
}
