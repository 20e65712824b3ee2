import { NotFoundError } from "../../errors.js";
import { asId, newId, type ArtifactId, type PersonId } from "../../ids.js";
import { artifactKindOf, type Artifact, type ArtifactKind, type NewArtifact } from "../../artifacts/records.js";
import { type ArtifactRepository } from "../artifacts.js";
import type { Page, PageRequest } from "../index.js";
import { type Row, type SqliteContext, ms, toDate } from "./context.js";
import { keyset, toPage } from "./pagination.js";

function toArtifact(row: Row): Artifact {
  const id = asId("artifact", row.id as string);
  const mimeType = row.mime_type as string;
  return {
    id,
    personId: asId("person", row.person_id as string),
    seriesId: row.series_id ? asId("artifact", row.series_id as string) : id,
    version: (row.version as number | null) ?? 1,
    latest: row.latest !== 0,
    kind: ((row.kind as ArtifactKind | null) ?? artifactKindOf(mimeType)),
    title: (row.title as string | null) ?? (row.name as string),
    name: row.name as string,
    mimeType,
    size: row.size as number,
    path: row.path as string,
    source: row.source as string,
    taskId: row.task_id ? asId("task", row.task_id as string) : null,
    goalId: row.goal_id ? asId("goal", row.goal_id as string) : null,
    taint: row.taint_source ? { source: row.taint_source as string } : null,
    createdAt: toDate(row.created_at),
  };
}

/**
 * Files a person keeps, one row per version (tables of migrations 40 and 70): the latest version of
 * each artifact has `latest = 1`; lists show those, newest first. Adding or deleting a version
 * moves the flag in the same transaction.
 */
export class SqliteArtifactRepository implements ArtifactRepository {
  constructor(private readonly ctx: SqliteContext) {}

  recordArtifact(input: NewArtifact): Promise<Artifact> {
    return this.ctx.atomic(
      () => {
          const id = newId("artifact");
          let series: ArtifactId = id;
          let version = 1;
          let previous: Artifact | null = null;
          if (input.versionOf !== undefined) {
            const of = this.ctx.stmt("SELECT * FROM artifacts WHERE id = ? AND person_id = ?").get(input.versionOf, input.personId) as Row | undefined;
            if (!of) throw new NotFoundError("artifact", input.versionOf);
            series = toArtifact(of).seriesId;
            const last = this.ctx.stmt("SELECT * FROM artifacts WHERE series_id = ? ORDER BY version DESC LIMIT 1").get(series) as Row;
            previous = toArtifact(last);
            version = previous.version + 1;
            this.ctx.stmt("UPDATE artifacts SET latest = 0 WHERE series_id = ?").run(series);
          }
          const row = this.ctx
            .stmt(
              `INSERT INTO artifacts (id, person_id, name, mime_type, size, path, source, created_at, series_id, version, latest, kind, title, task_id, goal_id, taint_source)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(
              id, input.personId, input.name, input.mimeType, input.size, input.path, input.source, ms(input.createdAt), series, version,
              input.kind ?? previous?.kind ?? artifactKindOf(input.mimeType),
              input.title ?? previous?.title ?? input.name,
              input.taskId ?? previous?.taskId ?? null,
              input.goalId ?? previous?.goalId ?? null,
              input.taint?.source ?? null,
            ) as Row;
          return toArtifact(row);
      },
      { references: { entity: "person", id: input.personId } },
    );
  }

  getArtifact(id: ArtifactId): Promise<Artifact | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM artifacts WHERE id = ?").get(id) as Row | undefined;
      return row ? toArtifact(row) : null;
    });
  }

  listArtifacts(personId: PersonId, page?: PageRequest): Promise<Page<Artifact>> {
    return this.ctx.run(() => {
      const k = keyset(page, "created_at", "desc");
      const where = ["person_id = ?", "latest = 1"];
      if (k.where) where.push(k.where);
      const rows = this.ctx.stmt(`SELECT * FROM artifacts WHERE ${where.join(" AND ")} ${k.orderBy} LIMIT ?`).all(personId, ...k.params, k.fetch) as Row[];
      return toPage(rows, k.limit, "created_at", toArtifact);
    });
  }

  listArtifactVersions(seriesId: ArtifactId): Promise<Artifact[]> {
    return this.ctx.run(() => {
      const of = this.ctx.stmt("SELECT * FROM artifacts WHERE id = ?").get(seriesId) as Row | undefined;
      if (!of) return [];
      const series = toArtifact(of).seriesId;
      return (this.ctx.stmt("SELECT * FROM artifacts WHERE series_id = ? ORDER BY version").all(series) as Row[]).map(toArtifact);
    });
  }

  deleteArtifact(personId: PersonId, id: ArtifactId, scope: "version" | "artifact"): Promise<Artifact[]> {
    return this.ctx.atomic(() => {
        const row = this.ctx.stmt("SELECT * FROM artifacts WHERE id = ? AND person_id = ?").get(id, personId) as Row | undefined;
        if (!row) return [];
        const target = toArtifact(row);
        const rows =
          scope === "artifact"
            ? (this.ctx.stmt("DELETE FROM artifacts WHERE series_id = ? RETURNING *").all(target.seriesId) as Row[])
            : (this.ctx.stmt("DELETE FROM artifacts WHERE id = ? RETURNING *").all(id) as Row[]);
        if (scope === "version" && target.latest) {
          this.ctx.stmt("UPDATE artifacts SET latest = 1 WHERE id = (SELECT id FROM artifacts WHERE series_id = ? ORDER BY version DESC LIMIT 1)").run(target.seriesId);
        }
        return rows.map(toArtifact).sort((a, b) => a.version - b.version);
    });
  }
}
