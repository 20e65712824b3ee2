/**
 * The subset of the official `mongodb` driver's `Db` / `Collection` API the adapter uses. The real
 * `Db` satisfies it (checked at compile time below); tests inject an in-memory fake that implements
 * exactly this subset and evaluates every filter and update with mingo.
 *
 * Keeping the surface this small is deliberate: every method listed here is one the fake must model
 * faithfully, so a new driver call should be added here (and to the fake) on purpose.
 */
import type { ClientSession, Db, Document, IndexDescription, Sort } from "mongodb";

/** Options the adapter passes to reads. `session` is set inside a transaction. */
export interface ReadOptions {
  session?: ClientSession;
  sort?: Sort;
  limit?: number;
  projection?: Document;
}

/** Options the adapter passes to `findOneAndUpdate`. */
export interface FindOneAndUpdateOptionsLike {
  session?: ClientSession;
  /** Driver default is `"before"`: the adapter always says which one it wants. */
  returnDocument: "before" | "after";
  upsert?: boolean;
  sort?: Sort;
  /** Driver 6+: false (the default) returns the document or null instead of a ModifyResult. */
  includeResultMetadata: false;
}

/** Options the adapter passes to writes. */
export interface WriteOptions {
  session?: ClientSession;
  upsert?: boolean;
}

/** A cursor the adapter only ever drains. */
export interface CursorLike<T> {
  toArray(): Promise<T[]>;
}

/** The collection methods the adapter calls. */
export interface CollectionLike {
  createIndexes(specs: IndexDescription[]): Promise<string[]>;
  insertOne(doc: Document, options?: { session?: ClientSession }): Promise<unknown>;
  findOne(filter: Document, options?: ReadOptions): Promise<Document | null>;
  find(filter: Document, options?: ReadOptions): CursorLike<Document>;
  findOneAndUpdate(filter: Document, update: Document, options: FindOneAndUpdateOptionsLike): Promise<Document | null>;
  updateOne(filter: Document, update: Document, options?: WriteOptions): Promise<{ matchedCount: number; modifiedCount: number; upsertedCount: number }>;
  updateMany(filter: Document, update: Document, options?: WriteOptions): Promise<{ matchedCount: number; modifiedCount: number }>;
  deleteOne(filter: Document, options?: { session?: ClientSession }): Promise<{ deletedCount: number }>;
  deleteMany(filter: Document, options?: { session?: ClientSession }): Promise<{ deletedCount: number }>;
  aggregate(pipeline: Document[], options?: { session?: ClientSession }): CursorLike<Document>;
}

/** The database handle the adapter runs on: a driver `Db` or a test fake. */
export interface DbLike {
  readonly databaseName: string;
  collection(name: string): CollectionLike;
  /** Used for `{ ping: 1 }` (health). */
  command(command: Document): Promise<Document>;
}

/** Compile-time proof that the driver's `Db` is a `DbLike` (no runtime effect). */
export const driverDbIsDbLike: (db: Db) => DbLike = (db) => db;
