/** MongoDB implementation of `AccessRepository`: admins (`person_roles`) and group member lists (`group_members`). */
import { asId, type PersonId } from "../../ids.js";
import type { AccessRepository } from "../index.js";
import type { GroupRef, PersonRole } from "../../persons/records.js";
import type { GroupMemberDoc, PersonRoleDoc } from "./documents.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

const memberId = (group: GroupRef, personId: PersonId) => `${group.channel}|${group.groupId}|${personId}`;

/** Roles and group members on MongoDB. */
export class MongoAccessRepository implements AccessRepository {
  private readonly roles;
  private readonly members;

  constructor(db: DbLike) {
    this.roles = openColl<PersonRoleDoc>(db, "personRoles", "person role");
    this.members = openColl<GroupMemberDoc>(db, "groupMembers", "group member");
  }

  async setRole(personId: PersonId, role: PersonRole | null, now: Date): Promise<void> {
    if (role === null) await this.roles.deleteOne({ _id: personId });
    else await this.roles.updateOne({ _id: personId }, { $set: { role }, $setOnInsert: { createdAt: now } }, { upsert: true });
  }

  async listRoles(): Promise<{ personId: PersonId; role: PersonRole }[]> {
    const docs = await this.roles.find({}, { sort: { createdAt: 1, _id: 1 } });
    return docs.map((d) => ({ personId: asId("person", d._id), role: d.role }));
  }

  async addGroupMember(group: GroupRef, personId: PersonId, now: Date): Promise<boolean> {
    const result = await this.members.updateOne(
      { _id: memberId(group, personId) },
      { $setOnInsert: { channel: group.channel, groupId: group.groupId, personId, addedAt: now } },
      { upsert: true },
    );
    return result.upsertedCount === 1;
  }

  async removeGroupMember(group: GroupRef, personId: PersonId): Promise<boolean> {
    return (await this.members.deleteOne({ _id: memberId(group, personId) })) === 1;
  }

  async listGroupMembers(group: GroupRef): Promise<PersonId[]> {
    const docs = await this.members.find({ channel: group.channel, groupId: group.groupId }, { sort: { addedAt: 1, _id: 1 } });
    return docs.map((d) => asId("person", d.personId));
  }
}
