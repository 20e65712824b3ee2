/**
 * MongoDB implementation of `MemoryRepository` (`memory_items`). Search uses the `$text` index on
 * (personId, text) and ranks by `textScore`; expired items are filtered out at query time.
 */
import type { Clock } from "../../clock.js";
import { NotFoundError } from "../../errors.js";
import { newId, type MemoryId, type PersonId } from "../../ids.js";
import type { MemoryRepository } from "../index.js";
import type { MemoryItem, MemoryPatch, NewMemoryItem } from "../../memory/records.js";
import type { Page, PageRequest } from "../index.js";
import type { MemoryDoc } from "./documents.js";
import { toMemory } from "./codec.js";
import type { DbLike } from "./driver.js";
import { memorySearchFilter, searchTerms, setPatch, textScoreProjection, textScoreSort } from "./filters.js";
import { idAfter, pageLimit, toPage } from "./paging.js";
import { openColl } from "./session.js";

/** Confidence of an item added without one (same default as the SQLite adapter). */
const defaultConfidence = 0.7;

/** Personal memory items with `$text` search (`memory_items`). */
export class MongoMemoryRepository implements MemoryRepository {
  private readonly items;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.items = openColl<MemoryDoc>(db, "memory", "memory item");
  }

  async addMemory(input: NewMemoryItem): Promise<MemoryItem> {
    const now = this.clock.now();
    const doc: MemoryDoc = {
      _id: newId("memory"),
      personId: input.personId,
      kind: input.kind,
      text: input.text,
      provenance: {
        messageId: input.provenance?.messageId ?? null,
        channel: input.provenance?.channel ?? null,
        note: input.provenance?.note ?? null,
      },
      confidence: input.confidence ?? defaultConfidence,
      expiresAt: input.expiresAt ?? null,
      taintSource: input.taint?.source ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.items.insertOne(doc);
    return toMemory(doc);
  }

  async getMemory(id: MemoryId): Promise<MemoryItem | null> {
    const doc = await this.items.findOne({ _id: id });
    return doc === null ? null : toMemory(doc);
  }

  async updateMemory(personId: PersonId, id: MemoryId, patch: MemoryPatch): Promise<MemoryItem> {
    const doc = await this.items.findOneAndUpdate({ _id: id, personId }, setPatch({ ...patch }, this.clock.now()));
    if (doc === null) throw new NotFoundError("memory item", id);
    return toMemory(doc);
  }

  async deleteMemory(personId: PersonId, id: MemoryId): Promise<boolean> {
    return (await this.items.deleteOne({ _id: id, personId })) === 1;
  }

  async listMemory(personId: PersonId, page?: PageRequest): Promise<Page<MemoryItem>> {
    const limit = pageLimit(page);
    const docs = await this.items.find({ personId, ...idAfter(page?.after, -1) }, { sort: { _id: -1 }, limit: limit + 1 });
    return toPage(docs, limit, toMemory);
  }

  async searchMemory(personId: PersonId, query: string, options: { limit: number; now: Date }): Promise<MemoryItem[]> {
    const terms = searchTerms(query);
    if (terms.length === 0 || options.limit <= 0) return [];
    const docs = await this.items.find(memorySearchFilter(personId, terms, options.now), {
      projection: textScoreProjection,
      sort: textScoreSort,
      limit: options.limit,
    });
    return docs.map(toMemory);
  }
}
