/** MongoDB implementation of `ArtifactRepository` (`artifacts`), newest first by (createdAt, id). */
import { asId, newId, type ArtifactId, type PersonId } from "../../ids.js";
import type { ArtifactRepository, Artifact, NewArtifact, Page, PageRequest } from "../index.js";
import type { ArtifactDoc } from "./collections.js";
import type { DbLike } from "./driver.js";
import { pageLimit, timeAfter, toPage } from "./paging.js";
import { openColl } from "./session.js";

function toArtifact(d: ArtifactDoc): Artifact {
  return {
    id: asId("artifact", d._id),
    personId: asId("person", d.personId),
    name: d.name,
    mimeType: d.mimeType,
    size: d.size,
    path: d.path,
    source: d.source,
    createdAt: d.createdAt,
  };
}

/** Files Familiar made or downloaded for a person (the bytes live in the workspace). */
export class MongoArtifactRepository implements ArtifactRepository {
  private readonly artifacts;

  constructor(db: DbLike) {
    this.artifacts = openColl<ArtifactDoc>(db, "artifacts", "artifact");
  }

  async recordArtifact(input: NewArtifact): Promise<Artifact> {
    const doc: ArtifactDoc = {
      _id: newId("artifact"),
      personId: input.personId,
      name: input.name,
      mimeType: input.mimeType,
      size: input.size,
      path: input.path,
      source: input.source,
      createdAt: input.createdAt,
    };
    await this.artifacts.insertOne(doc);
    return toArtifact(doc);
  }

  async getArtifact(id: ArtifactId): Promise<Artifact | null> {
    const doc = await this.artifacts.findOne({ _id: id });
    return doc === null ? null : toArtifact(doc);
  }

  async listArtifacts(personId: PersonId, page?: PageRequest): Promise<Page<Artifact>> {
    const limit = pageLimit(page);
    const filter = { personId, ...timeAfter("createdAt", page?.after, -1) };
    const docs = await this.artifacts.find(filter, { sort: { createdAt: -1, _id: -1 }, limit: limit + 1 });
    return toPage(docs, limit, toArtifact, (d) => d.createdAt);
  }
}
