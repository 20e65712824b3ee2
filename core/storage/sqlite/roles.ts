import { asId, type PersonId } from "../../ids.js";
import type { AccessRepository } from "../index.js";
import type { GroupRef, PersonRole } from "../../persons/records.js";
import { type Row, type SqliteContext, ms } from "./context.js";

/** Roles (admins) and group member lists. */
export class SqliteAccessRepository implements AccessRepository {
  constructor(private readonly ctx: SqliteContext) {}

  setRole(personId: PersonId, role: PersonRole | null, now: Date): Promise<void> {
    return this.ctx.run(
      () => {
        if (role === null) this.ctx.stmt("DELETE FROM person_roles WHERE person_id = ?").run(personId);
        else this.ctx.stmt("INSERT INTO person_roles (person_id, role, created_at) VALUES (?, ?, ?) ON CONFLICT (person_id) DO UPDATE SET role = excluded.role").run(personId, role, ms(now));
      },
      { references: { entity: "person", id: personId } },
    );
  }

  listRoles(): Promise<{ personId: PersonId; role: PersonRole }[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM person_roles ORDER BY created_at, person_id").all() as Row[]).map((r) => ({ personId: asId("person", r.person_id as string), role: r.role as PersonRole })),
    );
  }

  addGroupMember(group: GroupRef, personId: PersonId, now: Date): Promise<boolean> {
    return this.ctx.run(
      () =>
        this.ctx.stmt("INSERT INTO group_members (channel, group_id, person_id, added_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING").run(group.channel, group.groupId, personId, ms(now))
          .changes === 1,
      { references: { entity: "person", id: personId } },
    );
  }

  removeGroupMember(group: GroupRef, personId: PersonId): Promise<boolean> {
    return this.ctx.run(
      () => this.ctx.stmt("DELETE FROM group_members WHERE channel = ? AND group_id = ? AND person_id = ?").run(group.channel, group.groupId, personId).changes === 1,
    );
  }

  listGroupMembers(group: GroupRef): Promise<PersonId[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT person_id FROM group_members WHERE channel = ? AND group_id = ? ORDER BY added_at, person_id").all(group.channel, group.groupId) as Row[]).map((r) =>
        asId("person", r.person_id as string),
      ),
    );
  }
}
