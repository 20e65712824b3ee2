/**
 * The MongoDB adapter of the `Store` port (official driver). Public API: `connectMongoStore` for the
 * composition root, `MongoStore` for an injected database, and the URI helpers used in messages.
 */
export { connectMongoStore, parseMongoUri, scrubPassword, supportsTransactions, type ConnectMongoOptions, type ConnectedMongoStore } from "./connect.js";
export { MongoStore, type MongoStoreOptions } from "./store.js";
export type { CollectionLike, DbLike } from "./driver.js";
export { collectionNames, indexSpecs } from "./collections.js";
