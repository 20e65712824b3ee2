import { asId, newId, type ArtifactId, type PersonId } from "../../ids.js";
import type { ArtifactRepository, Artifact, NewArtifact, Page, PageRequest } from "../index.js";
import { type Row, type SqliteContext, ms, toDate } from "./context.js";
import { keyset, toPage } from "./pagination.js";

function toArtifact(row: Row): Artifact {
  return {
    id: asId("artifact", row.id as string),
    personId: asId("person", row.person_id as string),
    name: row.name as string,
    mimeType: row.mime_type as string,
    size: row.size as number,
    path: row.path as string,
    source: row.source as string,
    createdAt: toDate(row.created_at),
  };
}

/** Files Familiar made or downloaded (table added by migration 40); newest first. */
export class SqliteArtifactRepository implements ArtifactRepository {
  constructor(private readonly ctx: SqliteContext) {}

  recordArtifact(input: NewArtifact): Promise<Artifact> {
    return this.ctx.run(
      () =>
        toArtifact(
          this.ctx
            .stmt("INSERT INTO artifacts (id, person_id, name, mime_type, size, path, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *")
            .get(newId("artifact"), input.personId, input.name, input.mimeType, input.size, input.path, input.source, ms(input.createdAt)) as Row,
        ),
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
      const where = ["person_id = ?"];
      if (k.where) where.push(k.where);
      const rows = this.ctx.stmt(`SELECT * FROM artifacts WHERE ${where.join(" AND ")} ${k.orderBy} LIMIT ?`).all(personId, ...k.params, k.fetch) as Row[];
      return toPage(rows, k.limit, "created_at", toArtifact);
    });
  }
}
