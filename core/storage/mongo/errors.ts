/**
 * The one place driver errors become Familiar errors: duplicate keys (server code 11000) →
 * `DuplicateKeyError`; network, server-selection and timeout failures → `StoreUnavailableError`.
 * Anything else is rethrown unchanged (a bug in a filter shows as the server's own message).
 */
import { MongoError, MongoNetworkError, MongoServerSelectionError, MongoNetworkTimeoutError } from "mongodb";
import { z } from "zod";
import { DuplicateKeyError, FamiliarError, StoreUnavailableError } from "../../errors.js";

/** Shape of a duplicate-key error as the driver reports it (a `MongoServerError`). */
const duplicateKeyShape = z.object({
  code: z.literal(11000),
  keyValue: z.record(z.string(), z.unknown()).optional(),
  keyPattern: z.record(z.string(), z.unknown()).optional(),
});

/** True if `err` is the server's duplicate-key error (E11000). */
export function isDuplicateKey(err: unknown): boolean {
  return duplicateKeyShape.safeParse(err).success;
}

/**
 * Maps a driver error raised while working on `entity` (e.g. "identity", "outbox message").
 * The duplicate key is reported from the error's `keyValue` (the values of the violated index).
 */
export function mapMongoError(err: unknown, entity: string): unknown {
  if (err instanceof FamiliarError) return err;
  const dup = duplicateKeyShape.safeParse(err);
  if (dup.success) {
    const values = Object.values(dup.data.keyValue ?? {}).map((v) => (v instanceof Date ? v.toISOString() : String(v)));
    return new DuplicateKeyError(entity, values.length > 0 ? values.join("/") : "unknown key", { cause: err });
  }
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError || err instanceof MongoNetworkTimeoutError) {
    return new StoreUnavailableError(`MongoDB did not answer while working on ${entity}: ${err.message}`, { cause: err });
  }
  return err;
}

/** True for driver errors that `ClientSession.withTransaction` retries (it checks these labels). */
export function isRetryableInTransaction(err: unknown): boolean {
  return (
    err instanceof MongoError &&
    (err.hasErrorLabel("TransientTransactionError") || err.hasErrorLabel("UnknownTransactionCommitResult"))
  );
}
