/** MongoDB implementation of `PersonRepository` (persons and their channel identities). */
import type { Clock } from "../../clock.js";
import { NotFoundError } from "../../errors.js";
import { newId, type PersonId } from "../../ids.js";
import type { PersonRepository } from "../index.js";
import type { ChannelName } from "../../channels/records.js";
import type { Identity, NewPerson, Person, PersonSettingsPatch } from "../../persons/records.js";
import type { Page, PageRequest } from "../index.js";
import { creationKey } from "./collections.js";
import type { IdentityDoc, PersonDoc } from "./documents.js";
import { toIdentity, toPerson } from "./codec.js";
import type { DbLike } from "./driver.js";
import { setPatch } from "./filters.js";
import { reachText } from "../index.js";
import { idAfter, pageLimit, toPage } from "./paging.js";
import { openColl } from "./session.js";

/** Persons (`persons`) and identities (`identities`, unique on (channel, accountId)). */
export class MongoPersonRepository implements PersonRepository {
  private readonly persons;
  private readonly identities;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.persons = openColl<PersonDoc>(db, "persons", "person");
    this.identities = openColl<IdentityDoc>(db, "identities", "identity");
  }

  async createPerson(input: NewPerson): Promise<Person> {
    const now = this.clock.now();
    const doc: PersonDoc = {
      _id: newId("person"),
      displayName: input.displayName,
      timeZone: input.timeZone ?? "UTC",
      timeZoneConfirmed: input.timeZone !== undefined,
      timeZoneAsk: null,
      locale: input.locale ?? "en-US",
      proactivity: input.proactivity ?? "normal",
      quietHours: input.quietHours ?? null,
      digestTime: input.digestTime ?? null,
      paused: false,
      personaName: null,
      personaStyle: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.persons.insertOne(doc);
    return toPerson(doc);
  }

  async getPerson(id: PersonId): Promise<Person | null> {
    const doc = await this.persons.findOne({ _id: id });
    return doc === null ? null : toPerson(doc);
  }

  async updatePerson(id: PersonId, patch: PersonSettingsPatch): Promise<Person> {
    const doc = await this.persons.findOneAndUpdate(
      { _id: id },
      setPatch({ ...patch, ...(patch.reach && { reach: reachText(patch.reach) }), ...(patch.timeZone !== undefined && { timeZoneConfirmed: true }) }, this.clock.now()),
    );
    if (doc === null) throw new NotFoundError("person", id);
    return toPerson(doc);
  }

  async listPersons(page?: PageRequest): Promise<Page<Person>> {
    const limit = pageLimit(page);
    const docs = await this.persons.find(idAfter(page?.after, 1), { sort: { _id: 1 }, limit: limit + 1 });
    return toPage(docs, limit, toPerson);
  }

  async addIdentity(identity: Omit<Identity, "createdAt" | "unreachable" | "address"> & { address?: string }): Promise<Identity> {
    const doc: IdentityDoc = {
      _id: creationKey("idn"),
      personId: identity.personId,
      channel: identity.channel,
      accountId: identity.accountId,
      address: identity.address ?? identity.accountId,
      unreachable: null,
      createdAt: this.clock.now(),
    };
    await this.identities.insertOne(doc);
    return toIdentity(doc);
  }

  async findIdentity(channel: ChannelName, accountId: string): Promise<Identity | null> {
    const doc = await this.identities.findOne({ channel, accountId });
    return doc === null ? null : toIdentity(doc);
  }

  async listIdentities(personId: PersonId): Promise<Identity[]> {
    const docs = await this.identities.find({ personId }, { sort: { _id: 1 } });
    return docs.map(toIdentity);
  }

  async removeIdentity(personId: PersonId, channel: ChannelName, accountId: string): Promise<boolean> {
    return (await this.identities.deleteOne({ personId, channel, accountId })) === 1;
  }

  async setIdentityUnreachable(channel: ChannelName, accountId: string, reason: string | null, now: Date): Promise<void> {
    const unreachable = reason === null ? null : { reason, since: now };
    // An unknown identity is a no-op (as in the SQLite adapter): there is nothing to skip.
    await this.identities.updateOne({ channel, accountId }, { $set: { unreachable } });
  }

  async recordIdentitySeen(input: { channel: ChannelName; accountId: string; address: string; now: Date }): Promise<void> {
    await this.identities.updateOne({ channel: input.channel, accountId: input.accountId }, { $set: { address: input.address, unreachable: null } });
  }

  async moveIdentity(input: { channel: ChannelName; accountId: string; toPersonId: PersonId; address: string }): Promise<Identity> {
    if ((await this.persons.findOne({ _id: input.toPersonId })) === null) throw new NotFoundError("person", input.toPersonId);
    const doc = await this.identities.findOneAndUpdate(
      { channel: input.channel, accountId: input.accountId },
      { $set: { personId: input.toPersonId, address: input.address, unreachable: null } },
    );
    if (doc === null) throw new NotFoundError("identity", `${input.channel}:${input.accountId}`);
    return toIdentity(doc);
  }
}
