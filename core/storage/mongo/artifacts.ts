/**
 * MongoDB implementation of `ArtifactRepository` (`artifacts`): one document per version, the
 * latest flagged; lists newest first by (createdAt, id). Documents from before versions (no
 * `seriesId`) are first versions of their own artifact.
 *
 * A new version is inserted (latest) before the older ones are unflagged, inside a transaction
 * where the deployment has them; without, a crash between the two leaves two flagged versions,
 * which lists show once (the highest) and the next version clears. (Two writers adding a version
 * to one artifact at once need not be served: a person's activations run one at a time.)
 */
import { NotFoundError } from "../../errors.js";
import { asId, newId, type ArtifactId, type PersonId } from "../../ids.js";
import { artifactKindOf, type ArtifactKind, type Artifact, type NewArtifact } from "../../artifacts/records.js";
import { type ArtifactRepository } from "../artifacts.js";
import type { Page, PageRequest } from "../index.js";
import type { DbLike } from "./driver.js";
import { pageLimit, timeAfter, toPage } from "./paging.js";
import { openColl } from "./session.js";

/** One version of an artifact. The fields after `createdAt` are absent on documents from before versions (issue 23). */
export interface ArtifactDoc {
  _id: string;
  personId: string;
  name: string;
  mimeType: string;
  size: number;
  path: string;
  source: string;
  createdAt: Date;
  /** The first version's id (absent: the document's own). */
  seriesId?: string;
  version?: number;
  /** Absent: true. */
  latest?: boolean;
  kind?: ArtifactKind;
  title?: string;
  taskId?: string | null;
  goalId?: string | null;
  taintSource?: string | null;
}

function toArtifact(d: ArtifactDoc): Artifact {
  const id = asId("artifact", d._id);
  return {
    id,
    personId: asId("person", d.personId),
    seriesId: d.seriesId ? asId("artifact", d.seriesId) : id,
    version: d.version ?? 1,
    latest: d.latest !== false,
    kind: d.kind ?? artifactKindOf(d.mimeType),
    title: d.title ?? d.name,
    name: d.name,
    mimeType: d.mimeType,
    size: d.size,
    path: d.path,
    source: d.source,
    taskId: d.taskId ? asId("task", d.taskId) : null,
    goalId: d.goalId ? asId("goal", d.goalId) : null,
    taint: d.taintSource ? { source: d.taintSource } : null,
    createdAt: d.createdAt,
  };
}

/** The documents of one artifact: its first version (by id) and every version pointing at it. */
const ofSeries = (seriesId: string) => ({ $or: [{ _id: seriesId }, { seriesId }] });

/** Files a person keeps, in versions (the bytes live in the workspace). */
export class MongoArtifactRepository implements ArtifactRepository {
  private readonly artifacts;

  constructor(
    db: DbLike,
    private readonly atomically: <T>(fn: () => Promise<T>) => Promise<T> = (fn) => fn(),
  ) {
    this.artifacts = openColl<ArtifactDoc>(db, "artifacts", "artifact");
  }

  recordArtifact(input: NewArtifact): Promise<Artifact> {
    return this.atomically(async () => {
      const _id = newId("artifact");
      let previous: Artifact | null = null;
      if (input.versionOf !== undefined) {
        const of = await this.artifacts.findOne({ _id: input.versionOf, personId: input.personId });
        if (of === null) throw new NotFoundError("artifact", input.versionOf);
        const versions = await this.artifacts.find(ofSeries(toArtifact(of).seriesId), { sort: { version: -1 }, limit: 1 });
        previous = toArtifact(versions[0] ?? of);
      }
      const doc: ArtifactDoc = {
        _id,
        personId: input.personId,
        name: input.name,
        mimeType: input.mimeType,
        size: input.size,
        path: input.path,
        source: input.source,
        createdAt: input.createdAt,
        seriesId: previous?.seriesId ?? _id,
        version: (previous?.version ?? 0) + 1,
        latest: true,
        kind: input.kind ?? previous?.kind ?? artifactKindOf(input.mimeType),
        title: input.title ?? previous?.title ?? input.name,
        taskId: input.taskId ?? previous?.taskId ?? null,
        goalId: input.goalId ?? previous?.goalId ?? null,
        taintSource: input.taint?.source ?? null,
      };
      await this.artifacts.insertOne(doc);
      if (previous !== null) await this.artifacts.updateMany({ ...ofSeries(previous.seriesId), _id: { $ne: _id } }, { $set: { latest: false } });
      return toArtifact(doc);
    });
  }

  async getArtifact(id: ArtifactId): Promise<Artifact | null> {
    const doc = await this.artifacts.findOne({ _id: id });
    return doc === null ? null : toArtifact(doc);
  }

  async listArtifacts(personId: PersonId, page?: PageRequest): Promise<Page<Artifact>> {
    const limit = pageLimit(page);
    const filter = { personId, latest: { $ne: false }, ...timeAfter("createdAt", page?.after, -1) };
    const docs = await this.artifacts.find(filter, { sort: { createdAt: -1, _id: -1 }, limit: limit + 1 });
    const result = toPage(docs, limit, toArtifact, (d) => d.createdAt);
    // Two flagged versions of one artifact (a crash between insert and unflag): the highest only.
    const highest = new Map<string, number>();
    for (const a of result.items) highest.set(a.seriesId, Math.max(highest.get(a.seriesId) ?? 0, a.version));
    return { ...result, items: result.items.filter((a) => highest.get(a.seriesId) === a.version) };
  }

  async listArtifactVersions(seriesId: ArtifactId): Promise<Artifact[]> {
    const of = await this.artifacts.findOne({ _id: seriesId });
    if (of === null) return [];
    const docs = await this.artifacts.find(ofSeries(toArtifact(of).seriesId), { sort: { version: 1 } });
    return docs.map(toArtifact);
  }

  deleteArtifact(personId: PersonId, id: ArtifactId, scope: "version" | "artifact"): Promise<Artifact[]> {
    return this.atomically(async () => {
      const doc = await this.artifacts.findOne({ _id: id, personId });
      if (doc === null) return [];
      const target = toArtifact(doc);
      const doomed = scope === "artifact" ? await this.artifacts.find(ofSeries(target.seriesId), { sort: { version: 1 } }) : [doc];
      await this.artifacts.deleteMany({ _id: { $in: doomed.map((d) => d._id) } });
      if (scope === "version" && target.latest) {
        const rest = await this.artifacts.find(ofSeries(target.seriesId), { sort: { version: -1 }, limit: 1 });
        if (rest[0]) await this.artifacts.updateOne({ _id: rest[0]._id }, { $set: { latest: true } });
      }
      return doomed.map(toArtifact);
    });
  }
}
