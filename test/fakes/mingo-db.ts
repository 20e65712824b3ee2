/**
 * An in-memory fake of the subset of the `mongodb` driver's `Db` / `Collection` API that the MongoDB
 * store adapter uses (`DbLike`, core/storage/mongo/driver.ts). Every filter, update, sort, projection
 * and aggregation stage is evaluated by mingo, so the adapter's documents are checked for shape and
 * meaning offline; unique indexes are enforced from the adapter's own `createIndexes` calls (E11000
 * errors shaped like the server's); options and operators the fake does not model throw.
 *
 * Faithful to the driver where the adapter could go wrong: `findOneAndUpdate` returns the document
 * *before* the update unless `returnDocument: "after"`, and the document itself (not a ModifyResult)
 * unless `includeResultMetadata: true`, which the fake refuses; `limit: 0` means no limit; upserts
 * seed the new document from the filter's equality conditions; documents are copied in and out.
 *
 * Not modelled: sessions and transactions (a `session` option throws), `$text` language rules (see
 * `textScore`), collation, partial/sparse/TTL indexes, write concerns, and real concurrency (each
 * operation runs atomically after one await, so adapter operations interleave only between calls).
 */
import { Aggregator, Query, find as mingoFind } from "mingo";
import type { Document, IndexDescription } from "mongodb";
import type { CollectionLike, CursorLike, DbLike, FindOneAndUpdateOptionsLike, ReadOptions, WriteOptions } from "../../core/storage/mongo/driver.js";
import { FakeShapeError, applyUpdate, checkFilter, checkStorable, getPath, isPlainObject, sameValue, textScore, upsertSeed } from "./mingo-shapes.js";

export { FakeShapeError } from "./mingo-shapes.js";

/** The server's duplicate key error as the driver surfaces it (`MongoServerError`, code 11000). */
export class FakeDuplicateKeyError extends Error {
  override readonly name = "MongoServerError";
  readonly code = 11000;
  constructor(
    message: string,
    readonly keyPattern: Record<string, unknown>,
    readonly keyValue: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface IndexDef {
  name: string;
  key: Record<string, 1 | -1 | "text">;
  unique: boolean;
}

const scoreField = "__fakeTextScore__";

function checkOptions(method: string, options: object | undefined, allowed: readonly string[]): void {
  for (const [key, value] of Object.entries(options ?? {})) {
    if (value === undefined) continue;
    if (key === "session") throw new FakeShapeError(`${method}: sessions/transactions are not modelled by the fake`);
    if (!allowed.includes(key)) throw new FakeShapeError(`${method}: option ${key} is not modelled by the fake`);
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One collection of the fake. */
export class MingoCollection implements CollectionLike {
  private docs: Document[] = [];
  private readonly indexDefs: IndexDef[] = [{ name: "_id_", key: { _id: 1 }, unique: true }];

  constructor(readonly name: string) {}

  /** Declared indexes (including `_id_`), for tests. */
  get indexes(): readonly IndexDef[] {
    return this.indexDefs;
  }

  /** Copies of the stored documents, in insertion order, for tests. */
  snapshot(): Document[] {
    return this.docs.map((d) => structuredClone(d));
  }

  async createIndexes(specs: IndexDescription[]): Promise<string[]> {
    await tick();
    const names: string[] = [];
    for (const spec of specs) {
      checkOptions("createIndexes", spec, ["key", "name", "unique"]);
      const key = spec.key instanceof Map ? Object.fromEntries(spec.key) : spec.key;
      if (!isPlainObject(key) || Object.keys(key).length === 0) throw new FakeShapeError("createIndexes: key must be a non-empty object");
      for (const [field, dir] of Object.entries(key)) {
        if (dir !== 1 && dir !== -1 && dir !== "text") throw new FakeShapeError(`createIndexes: ${field}: ${String(dir)} is not modelled`);
      }
      const def: IndexDef = { name: spec.name ?? Object.entries(key).map(([f, d]) => `${f}_${String(d)}`).join("_"), key: key as IndexDef["key"], unique: spec.unique === true };
      if (def.unique && Object.values(def.key).includes("text")) throw new FakeShapeError("createIndexes: a text index cannot be unique");
      const existing = this.indexDefs.find((i) => i.name === def.name);
      if (existing !== undefined) {
        if (!sameValue(existing.key, def.key) || existing.unique !== def.unique) throw new FakeShapeError(`createIndexes: index ${def.name} exists with different options`);
      } else {
        if (Object.values(def.key).includes("text") && this.textIndex() !== undefined) throw new FakeShapeError("createIndexes: only one text index per collection");
        for (const doc of this.docs) this.checkUnique(doc, doc, [def]);
        this.indexDefs.push(def);
      }
      names.push(def.name);
    }
    return names;
  }

  async insertOne(doc: Document, options?: { session?: unknown }): Promise<{ acknowledged: true; insertedId: unknown }> {
    await tick();
    checkOptions("insertOne", options, []);
    checkStorable(doc, "");
    if (typeof doc._id !== "string") throw new FakeShapeError("insertOne: the adapter must supply a string _id (app-generated ids)");
    const stored = structuredClone(doc);
    this.checkUnique(stored, undefined);
    this.docs.push(stored);
    return { acknowledged: true, insertedId: stored._id };
  }

  async findOne(filter: Document, options?: ReadOptions): Promise<Document | null> {
    await tick();
    checkOptions("findOne", options, ["sort", "projection"]);
    return this.query(filter, options?.sort, 1, options?.projection)[0] ?? null;
  }

  find(filter: Document, options?: ReadOptions): CursorLike<Document> {
    checkOptions("find", options, ["sort", "limit", "projection"]);
    const limit = options?.limit;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw new FakeShapeError("find: limit must be a non-negative integer");
    return {
      toArray: async () => {
        await tick();
        // Driver semantics: limit 0 (or none) returns everything.
        return this.query(filter, options?.sort, limit === 0 ? undefined : limit, options?.projection);
      },
    };
  }

  async findOneAndUpdate(filter: Document, update: Document, options: FindOneAndUpdateOptionsLike): Promise<Document | null> {
    await tick();
    checkOptions("findOneAndUpdate", options, ["returnDocument", "upsert", "sort", "includeResultMetadata"]);
    const raw = options as { includeResultMetadata?: boolean; returnDocument?: string };
    if (raw.includeResultMetadata === true) throw new FakeShapeError("findOneAndUpdate: includeResultMetadata: true (ModifyResult) is not modelled");
    if (raw.returnDocument !== undefined && raw.returnDocument !== "before" && raw.returnDocument !== "after") {
      throw new FakeShapeError(`findOneAndUpdate: returnDocument ${String(raw.returnDocument)}`);
    }
    const after = raw.returnDocument === "after";
    const target = this.matches(filter, options.sort)[0];
    if (target !== undefined) {
      const before = structuredClone(target);
      this.replace(target, this.updated(target, update, false));
      return after ? structuredClone(this.docs.find((d) => d._id === before._id) ?? null) : before;
    }
    if (options.upsert !== true) return null;
    const inserted = this.upsert(filter, update);
    return after ? structuredClone(inserted) : null;
  }

  async updateOne(filter: Document, update: Document, options?: WriteOptions): Promise<{ acknowledged: true; matchedCount: number; modifiedCount: number; upsertedCount: number; upsertedId: unknown }> {
    await tick();
    checkOptions("updateOne", options, ["upsert"]);
    const target = this.matches(filter)[0];
    if (target !== undefined) {
      const next = this.updated(target, update, false);
      const modified = !sameValue(next, target);
      this.replace(target, next);
      return { acknowledged: true, matchedCount: 1, modifiedCount: modified ? 1 : 0, upsertedCount: 0, upsertedId: null };
    }
    if (options?.upsert !== true) return { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
    const inserted = this.upsert(filter, update);
    return { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: inserted._id };
  }

  async updateMany(filter: Document, update: Document, options?: WriteOptions): Promise<{ acknowledged: true; matchedCount: number; modifiedCount: number }> {
    await tick();
    checkOptions("updateMany", options, []);
    const targets = this.matches(filter);
    // All or nothing, like a single server statement that fails validation up front.
    const nexts = targets.map((t) => this.updated(t, update, false));
    let modified = 0;
    targets.forEach((t, i) => {
      const next = nexts[i]!;
      if (!sameValue(next, t)) modified++;
      this.replace(t, next);
    });
    return { acknowledged: true, matchedCount: targets.length, modifiedCount: modified };
  }

  async deleteOne(filter: Document, options?: { session?: unknown }): Promise<{ acknowledged: true; deletedCount: number }> {
    await tick();
    checkOptions("deleteOne", options, []);
    const target = this.matches(filter)[0];
    if (target === undefined) return { acknowledged: true, deletedCount: 0 };
    this.docs = this.docs.filter((d) => d !== target);
    return { acknowledged: true, deletedCount: 1 };
  }

  async deleteMany(filter: Document, options?: { session?: unknown }): Promise<{ acknowledged: true; deletedCount: number }> {
    await tick();
    checkOptions("deleteMany", options, []);
    const targets = new Set(this.matches(filter));
    this.docs = this.docs.filter((d) => !targets.has(d));
    return { acknowledged: true, deletedCount: targets.size };
  }

  aggregate(pipeline: Document[], options?: { session?: unknown }): CursorLike<Document> {
    checkOptions("aggregate", options, []);
    const allowed = ["$match", "$sort", "$group", "$replaceRoot", "$limit", "$project"];
    for (const stage of pipeline) {
      const keys = Object.keys(stage);
      if (keys.length !== 1 || !allowed.includes(keys[0]!)) throw new FakeShapeError(`aggregate: stage ${keys.join(",")} is not modelled`);
      if (keys[0] === "$match") {
        checkFilter(stage.$match);
        if ("$text" in (stage.$match as Document)) throw new FakeShapeError("aggregate: $text in $match is not modelled");
      }
    }
    return {
      toArray: async () => {
        await tick();
        return new Aggregator(pipeline).run<Document>(this.docs.map((d) => structuredClone(d)));
      },
    };
  }

  // -- internals ------------------------------------------------------------------------------

  private textIndex(): IndexDef | undefined {
    return this.indexDefs.find((i) => Object.values(i.key).includes("text"));
  }

  /** Stored documents matching `filter`, in `sort` order (stored objects, not copies). */
  private matches(filter: Document, sort?: ReadOptions["sort"]): Document[] {
    checkFilter(filter);
    const { $text, ...rest } = filter as { $text?: { $search: string } } & Document;
    const query = new Query(rest);
    let hits = this.docs.filter((d) => query.test(d));
    if ($text !== undefined) {
      const index = this.textIndex();
      if (index === undefined) throw new FakeShapeError(`${this.name}: text index required for $text query`);
      const textFields = Object.entries(index.key).filter(([, d]) => d === "text").map(([f]) => f);
      for (const [field, dir] of Object.entries(index.key)) {
        // Server rule: a compound text index needs equality matches on its non-text prefix fields.
        if (dir !== "text" && (!(field in rest) || isPlainObject(rest[field]))) {
          throw new FakeShapeError(`${this.name}: $text query must match ${field} by equality (prefix of text index ${index.name})`);
        }
      }
      const scored = new Map<Document, number>();
      for (const d of hits) scored.set(d, textScore($text.$search, textFields.map((f) => String(getPath(d, f) ?? ""))));
      hits = hits.filter((d) => (scored.get(d) ?? 0) > 0);
      this.lastScores = scored;
    } else {
      this.lastScores = undefined;
    }
    if (sort === undefined) return hits;
    if (!isPlainObject(sort)) throw new FakeShapeError("sort: only object sort specs are modelled");
    const spec: Record<string, 1 | -1> = {};
    for (const [field, dir] of Object.entries(sort)) {
      if (isPlainObject(dir) && dir.$meta === "textScore") {
        if ($text === undefined) throw new FakeShapeError(`sort: ${field}: { $meta: "textScore" } needs a $text query`);
        spec[scoreField] = -1;
      } else if (dir === 1 || dir === -1) {
        spec[field] = dir;
      } else {
        throw new FakeShapeError(`sort: ${field}: ${JSON.stringify(dir)} is not modelled`);
      }
    }
    const scores = this.lastScores;
    const keyed = hits.map((d, i) => ({ ...d, [scoreField]: scores?.get(d) ?? 0, __fakeIndex__: i }));
    const sorted = mingoFind(keyed, {}).sort(spec).all() as { __fakeIndex__: number }[];
    return sorted.map((s) => hits[s.__fakeIndex__]!);
  }

  private lastScores: Map<Document, number> | undefined;

  /** Copies of matches, limited and projected. */
  private query(filter: Document, sort: ReadOptions["sort"], limit: number | undefined, projection: Document | undefined): Document[] {
    const hits = this.matches(filter, sort).slice(0, limit ?? Infinity);
    const scores = this.lastScores;
    if (projection === undefined) return hits.map((d) => structuredClone(d));
    const metaFields: string[] = [];
    const plain: Document = {};
    for (const [field, value] of Object.entries(projection)) {
      if (isPlainObject(value) && value.$meta === "textScore") {
        if (scores === undefined) throw new FakeShapeError(`projection: ${field}: textScore needs a $text query`);
        metaFields.push(field);
      } else if (value === 0 || value === 1 || value === true || value === false) {
        plain[field] = value;
      } else {
        throw new FakeShapeError(`projection: ${field}: ${JSON.stringify(value)} is not modelled`);
      }
    }
    return hits.map((d) => {
      const out = Object.keys(plain).length === 0 ? structuredClone(d) : (mingoFind([structuredClone(d)], {}, plain).all()[0] as Document);
      for (const f of metaFields) out[f] = scores?.get(d) ?? 0;
      return out;
    });
  }

  private updated(target: Document, update: Document, isInsert: boolean): Document {
    const next = structuredClone(target);
    applyUpdate(next, update, isInsert);
    checkStorable(next, "");
    return next;
  }

  private replace(target: Document, next: Document): void {
    this.checkUnique(next, target);
    const i = this.docs.indexOf(target);
    this.docs[i] = next;
  }

  private upsert(filter: Document, update: Document): Document {
    const doc = upsertSeed(filter);
    applyUpdate(doc, update, true);
    checkStorable(doc, "");
    if (typeof doc._id !== "string") throw new FakeShapeError("upsert: the filter or $setOnInsert must supply a string _id (the fake makes no ObjectIds)");
    if (!new Query(Object.fromEntries(Object.entries(filter).filter(([k]) => k !== "$text"))).test(doc)) {
      throw new FakeShapeError("upsert: the inserted document does not match its own filter");
    }
    this.checkUnique(doc, undefined);
    this.docs.push(doc);
    return doc;
  }

  /** Throws E11000 if `doc` collides with another stored document (`self` is the one it replaces). */
  private checkUnique(doc: Document, self: Document | undefined, defs: readonly IndexDef[] = this.indexDefs): void {
    for (const index of defs) {
      if (!index.unique) continue;
      const fields = Object.keys(index.key);
      const values = fields.map((f) => getPath(doc, f) ?? null);
      const clash = this.docs.find((other) => other !== self && other !== doc && fields.every((f, i) => sameValue(getPath(other, f) ?? null, values[i])));
      if (clash !== undefined) {
        const keyValue = Object.fromEntries(fields.map((f, i) => [f, values[i]]));
        throw new FakeDuplicateKeyError(
          `E11000 duplicate key error collection: fake.${this.name} index: ${index.name} dup key: ${JSON.stringify(keyValue)}`,
          { ...index.key },
          keyValue,
        );
      }
    }
  }
}

/** The fake database: collections by name, created on first use like the server's. */
export class MingoDb implements DbLike {
  private readonly collections = new Map<string, MingoCollection>();

  constructor(readonly databaseName = "fake") {}

  collection(name: string): MingoCollection {
    let coll = this.collections.get(name);
    if (coll === undefined) {
      coll = new MingoCollection(name);
      this.collections.set(name, coll);
    }
    return coll;
  }

  /** Names of the collections touched so far. */
  collectionNames(): string[] {
    return [...this.collections.keys()];
  }

  async command(command: Document): Promise<Document> {
    await tick();
    if (Object.keys(command).length === 1 && command.ping === 1) return { ok: 1 };
    throw new FakeShapeError(`command ${JSON.stringify(command)} is not modelled by the fake`);
  }
}
