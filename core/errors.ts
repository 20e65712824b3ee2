/**
 * Familiar's error kinds. Each class has a stable `code` so callers (and tests) branch on the kind,
 * never on message text. Messages say what happened, where, and what to do.
 */

/** Stable error codes, one per kind. */
export type FamiliarErrorCode =
  | "CONFIG_INVALID"
  | "DUPLICATE"
  | "NOT_FOUND"
  | "CONFLICT"
  | "ILLEGAL_TRANSITION"
  | "VALIDATION"
  | "STORE_UNAVAILABLE"
  | "MODEL_ERROR"
  | "CHANNEL_ERROR";

/** Base class of every error Familiar throws on purpose. */
export class FamiliarError extends Error {
  readonly code: FamiliarErrorCode;
  constructor(code: FamiliarErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Settings are missing, malformed or contradictory; `issues` lists every bad key. */
export class ConfigError extends FamiliarError {
  constructor(
    message: string,
    readonly issues: readonly { key: string; expected: string }[],
  ) {
    super("CONFIG_INVALID", message);
  }
}

/** A unique constraint was violated (the same key was inserted twice). Both stores map to this. */
export class DuplicateKeyError extends FamiliarError {
  constructor(
    readonly entity: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super("DUPLICATE", `${entity} with key ${JSON.stringify(key)} already exists`, options);
  }
}

/** The record does not exist (or does not belong to the person asking). */
export class NotFoundError extends FamiliarError {
  constructor(
    readonly entity: string,
    readonly id: string,
  ) {
    super("NOT_FOUND", `${entity} ${id} not found`);
  }
}

/** A conditional update matched nothing: someone else changed the record first (lost race, lost lease). */
export class ConflictError extends FamiliarError {
  constructor(message: string) {
    super("CONFLICT", message);
  }
}

/** A task state change the state machine does not allow (rejected by the store itself). */
export class IllegalTransitionError extends FamiliarError {
  constructor(
    readonly taskId: string,
    readonly from: string,
    readonly to: string,
  ) {
    super("ILLEGAL_TRANSITION", `task ${taskId}: ${from} → ${to} is not a legal transition`);
  }
}

/** Input from outside did not match its schema. `issues` are human-readable paths and expectations. */
export class ValidationError extends FamiliarError {
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super("VALIDATION", message);
  }
}

/** The store could not be reached or answered with an unexpected failure. */
export class StoreUnavailableError extends FamiliarError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("STORE_UNAVAILABLE", message, options);
  }
}

/** Why a model request finally failed (after the SDK's own retries). */
export type ModelFailureReason =
  | "timeout"
  | "rate_limited"
  | "server"
  | "auth"
  | "rejected"
  | "connection"
  | "aborted"
  | "invalid_response"
  /** The person's daily model budget is used up (core/runtime/model-budget.ts): no request was made. */
  | "budget";

/**
 * A model request failed for good: retries (429, 5xx, connection errors, timeouts) are exhausted, or
 * the failure is not retryable (401, 400, abort). The message never contains the API key; the SDK
 * error is deliberately not kept as `cause` because its body may echo the key.
 */
export class ModelError extends FamiliarError {
  constructor(
    message: string,
    readonly reason: ModelFailureReason,
    /** HTTP status of the last response, null when no response arrived (timeout, connection, abort). */
    readonly status: number | null = null,
    /** The provider's request id (`x-request-id`), for support tickets. */
    readonly requestId: string | null = null,
  ) {
    super("MODEL_ERROR", message);
  }
}
