/**
 * Per-call plumbing shared by the repositories: the transaction session (carried through
 * AsyncLocalStorage so repository methods need no extra parameter) and a collection wrapper that
 * adds the session to every operation and maps driver errors in one place.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ClientSession, Document, IndexDescription } from "mongodb";
import type { CollectionLike, DbLike, ReadOptions } from "./driver.js";
import { isRetryableInTransaction, mapMongoError } from "./errors.js";
import { collectionNames, indexSpecs, type CollectionKey } from "./collections.js";

/** Holds the session of the transaction the current async call chain runs in (if any). */
export const sessionStorage = new AsyncLocalStorage<ClientSession>();

function sessionOption(): { session?: ClientSession } {
  const session = sessionStorage.getStore();
  return session === undefined ? {} : { session };
}

/**
 * One collection as the repositories use it: typed documents, the current session added to every
 * call, errors mapped by `mapMongoError` with the entity name given at construction.
 */
export class Coll<TDoc extends Document> {
  constructor(
    private readonly raw: CollectionLike,
    readonly entity: string,
  ) {}

  private async guard<R>(op: () => Promise<R>): Promise<R> {
    try {
      return await op();
    } catch (err) {
      // Inside a transaction, errors the driver retries on (labelled TransientTransactionError or
      // UnknownTransactionCommitResult) must reach `withTransaction` unchanged, or it cannot retry.
      if (sessionStorage.getStore() !== undefined && isRetryableInTransaction(err)) throw err;
      throw mapMongoError(err, this.entity);
    }
  }

  insertOne(doc: TDoc): Promise<void> {
    return this.guard(async () => {
      await this.raw.insertOne(doc, sessionOption());
    });
  }

  findOne(filter: Document, options: Omit<ReadOptions, "session" | "limit"> = {}): Promise<TDoc | null> {
    return this.guard(async () => (await this.raw.findOne(filter, { ...options, ...sessionOption() })) as TDoc | null);
  }

  find(filter: Document, options: Omit<ReadOptions, "session"> = {}): Promise<TDoc[]> {
    return this.guard(async () => (await this.raw.find(filter, { ...options, ...sessionOption() }).toArray()) as TDoc[]);
  }

  /** Applies `update` to the first match and returns the document after it, or null if none matched. */
  findOneAndUpdate(filter: Document, update: Document, options: { upsert?: boolean; sort?: ReadOptions["sort"] } = {}): Promise<TDoc | null> {
    return this.guard(
      async () =>
        (await this.raw.findOneAndUpdate(filter, update, {
          ...options,
          returnDocument: "after",
          includeResultMetadata: false,
          ...sessionOption(),
        })) as TDoc | null,
    );
  }

  updateOne(filter: Document, update: Document, options: { upsert?: boolean } = {}): Promise<{ matchedCount: number; upsertedCount: number }> {
    return this.guard(() => this.raw.updateOne(filter, update, { ...options, ...sessionOption() }));
  }

  updateMany(filter: Document, update: Document): Promise<{ matchedCount: number; modifiedCount: number }> {
    return this.guard(() => this.raw.updateMany(filter, update, sessionOption()));
  }

  deleteOne(filter: Document): Promise<number> {
    return this.guard(async () => (await this.raw.deleteOne(filter, sessionOption())).deletedCount);
  }

  deleteMany(filter: Document): Promise<number> {
    return this.guard(async () => (await this.raw.deleteMany(filter, sessionOption())).deletedCount);
  }

  aggregate<R extends Document>(pipeline: Document[]): Promise<R[]> {
    return this.guard(async () => (await this.raw.aggregate(pipeline, sessionOption()).toArray()) as R[]);
  }

  createIndexes(specs: IndexDescription[]): Promise<void> {
    return this.guard(async () => {
      if (specs.length > 0) await this.raw.createIndexes(specs);
    });
  }
}

/** Opens the named collection of `db` as a `Coll` and declares nothing (see `ensureIndexes`). */
export function openColl<TDoc extends Document>(db: DbLike, key: CollectionKey, entity: string): Coll<TDoc> {
  return new Coll<TDoc>(db.collection(collectionNames[key]), entity);
}

/** Creates every declared index (idempotent on the server: existing identical indexes are kept). */
export async function ensureIndexes(db: DbLike): Promise<void> {
  for (const key of Object.keys(indexSpecs) as CollectionKey[]) {
    const specs = indexSpecs[key];
    if (specs.length > 0) await openColl(db, key, `${key} indexes`).createIndexes(specs);
  }
}
