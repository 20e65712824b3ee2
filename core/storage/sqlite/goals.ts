import { NotFoundError } from "../../errors.js";
import { asId, newId, type GoalId, type PersonId } from "../../ids.js";
import type { GoalRepository } from "../index.js";
import type { CheckInSchedule, Goal, GoalPatch, GoalStatus, NewGoal } from "../../goals/records.js";
import type { Page, PageRequest } from "../index.js";
import { type Row, type SqliteContext, inJson, jsonText, parseJson, toDate } from "./context.js";
import { keyset, toPage } from "./pagination.js";

function toGoal(row: Row): Goal {
  return {
    id: asId("goal", row.id as string),
    personId: asId("person", row.person_id as string),
    title: row.title as string,
    description: row.description as string,
    status: row.status as GoalStatus,
    originMessageId: row.origin_message_id === null ? null : asId("message", row.origin_message_id as string),
    checkIn: row.check_in === null ? null : parseJson<CheckInSchedule>(row.check_in),
    notes: row.notes as string,
    taint: typeof row.taint_source === "string" ? { source: row.taint_source } : null,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** Long-lived goals. */
export class SqliteGoalRepository implements GoalRepository {
  constructor(private readonly ctx: SqliteContext) {}

  createGoal(input: NewGoal): Promise<Goal> {
    const now = this.ctx.nowMs();
    return this.ctx.run(
      () =>
        toGoal(
          this.ctx
            .stmt(
              `INSERT INTO goals (id, person_id, title, description, status, origin_message_id, check_in, notes, taint_source, created_at, updated_at)
               VALUES (?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(
              newId("goal"),
              input.personId,
              input.title,
              input.description ?? "",
              input.originMessageId ?? null,
              input.checkIn ? jsonText(input.checkIn) : null,
              input.notes ?? "",
              input.taint?.source ?? null,
              now,
              now,
            ) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  getGoal(id: GoalId): Promise<Goal | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM goals WHERE id = ?").get(id) as Row | undefined;
      return row ? toGoal(row) : null;
    });
  }

  updateGoal(id: GoalId, patch: GoalPatch): Promise<Goal> {
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => {
      sets.push(`${column} = ?`);
      params.push(value);
    };
    if (patch.title !== undefined) set("title", patch.title);
    if (patch.description !== undefined) set("description", patch.description);
    if (patch.status !== undefined) set("status", patch.status);
    if (patch.checkIn !== undefined) set("check_in", patch.checkIn === null ? null : jsonText(patch.checkIn));
    if (patch.notes !== undefined) set("notes", patch.notes);
    if (patch.taint) set("taint_source", patch.taint.source);
    set("updated_at", this.ctx.nowMs());
    return this.ctx.run(() => {
      const row = this.ctx.stmt(`UPDATE goals SET ${sets.join(", ")} WHERE id = ? RETURNING *`).get(...params, id) as Row | undefined;
      if (!row) throw new NotFoundError("goal", id);
      return toGoal(row);
    });
  }

  listGoals(personId: PersonId, filter?: { status?: GoalStatus[] }, page?: PageRequest): Promise<Page<Goal>> {
    return this.ctx.run(() => {
      const k = keyset(page, "created_at", "asc");
      const where = ["person_id = ?"];
      const params: unknown[] = [personId];
      if (filter?.status) {
        where.push(`status IN ${inJson}`);
        params.push(JSON.stringify(filter.status));
      }
      if (k.where) where.push(k.where);
      const rows = this.ctx.stmt(`SELECT * FROM goals WHERE ${where.join(" AND ")} ${k.orderBy} LIMIT ?`).all(...params, ...k.params, k.fetch) as Row[];
      return toPage(rows, k.limit, "created_at", toGoal);
    });
  }
}
