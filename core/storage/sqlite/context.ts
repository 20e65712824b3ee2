import type Database from "better-sqlite3";
import {
  FamiliarError,
  IllegalTransitionError,
  NotFoundError,
  StoreUnavailableError,
  ValidationError,
} from "../../errors.js";
import type { Json } from "../../json.js";
import type { Clock } from "../../clock.js";
import type { TxGate } from "./gate.js";

/** What a repository call knows about its own keys, to turn constraint failures into domain errors. */
export interface ErrorHints {
  /** Builds the error for a UNIQUE / PRIMARY KEY violation (usually a DuplicateKeyError). */
  duplicate?: (cause: unknown) => FamiliarError;
  /** The record a FOREIGN KEY points at, reported as NotFoundError when it does not exist. */
  references?: { entity: string; id: string };
}

/** Prefix of the message raised by the `tasks_state_machine` trigger: `<prefix> <taskId> <from> <to>`. */
export const illegalTransitionMarker = "FAMILIAR_ILLEGAL_TRANSITION";

interface SqliteErrorLike {
  code: string;
  message: string;
}

function isSqliteError(error: unknown): error is SqliteErrorLike {
  if (!(error instanceof Error)) return false;
  const code: unknown = (error as Error & { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("SQLITE_");
}

/**
 * Maps a failure from better-sqlite3 to Familiar's error kinds: UNIQUE / PRIMARY KEY → the hint's
 * DuplicateKeyError, the state-machine trigger → IllegalTransitionError, FOREIGN KEY → NotFoundError,
 * anything else from SQLite (busy, I/O, closed database) → StoreUnavailableError.
 */
export function mapSqliteError(error: unknown, hints: ErrorHints = {}): unknown {
  if (error instanceof FamiliarError) return error;
  if (error instanceof TypeError && /database connection is not open/i.test(error.message)) {
    return new StoreUnavailableError("SQLite store is closed: open it again with openSqliteStore", { cause: error });
  }
  if (!isSqliteError(error)) return error;
  if ((error.code === "SQLITE_CONSTRAINT_UNIQUE" || error.code === "SQLITE_CONSTRAINT_PRIMARYKEY") && hints.duplicate) {
    return hints.duplicate(error);
  }
  if (error.code === "SQLITE_CONSTRAINT_TRIGGER" && error.message.startsWith(illegalTransitionMarker)) {
    const [, taskId = "?", from = "?", to = "?"] = error.message.split(" ");
    return new IllegalTransitionError(taskId, from, to);
  }
  if (error.code === "SQLITE_CONSTRAINT_FOREIGNKEY" && hints.references) {
    return new NotFoundError(hints.references.entity, hints.references.id);
  }
  const hint = error.code.startsWith("SQLITE_BUSY") ? " (another process holds the write lock longer than busy_timeout)" : "";
  return new StoreUnavailableError(`SQLite ${error.code}: ${error.message}${hint}`, { cause: error });
}

/**
 * Shared state of one SQLite store: the connection, the transaction gate and a prepared-statement
 * cache. Repositories run every call through `run` so errors are mapped and transactions isolated.
 */
export class SqliteContext {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    readonly db: Database.Database,
    readonly gate: TxGate,
    /** The clock stamping `createdAt`/`updatedAt` (the system clock unless a test injects one). */
    readonly clock: Clock,
  ) {}

  /** The clock's current instant in UTC milliseconds. */
  nowMs(): number {
    return this.clock.now().getTime();
  }

  /** A prepared statement for `sql`, prepared once per connection. */
  stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs the synchronous `fn` through the transaction gate, mapping SQLite errors. */
  run<T>(fn: () => T, hints?: ErrorHints): Promise<T> {
    return this.gate.run(() => {
      try {
        return fn();
      } catch (error) {
        throw mapSqliteError(error, hints);
      }
    });
  }

  /**
   * Runs `fn` as one write transaction (`BEGIN IMMEDIATE`, or a savepoint inside an open one), for
   * read-then-write steps that must be atomic across processes sharing the file.
   */
  atomic<T>(fn: () => T, hints?: ErrorHints): Promise<T> {
    return this.run(() => this.db.transaction(fn).immediate(), hints);
  }
}

/** Date → integer UTC milliseconds. */
export function ms(date: Date): number {
  const value = date.getTime();
  if (!Number.isFinite(value)) throw new ValidationError(`invalid Date passed to the store: ${String(date)}`);
  return value;
}

/** Date or null → integer UTC milliseconds or null. */
export function msOrNull(date: Date | null | undefined): number | null {
  return date ? ms(date) : null;
}

/** Integer UTC milliseconds from a row → Date. */
export function toDate(value: unknown): Date {
  return new Date(value as number);
}

/** Nullable millisecond column → Date or null. */
export function toDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(value as number);
}

/** JSON value → TEXT column. */
export function jsonText(value: Json | object): string {
  return JSON.stringify(value);
}

/** TEXT column written by `jsonText` → value. */
export function parseJson<T = Json>(value: unknown): T {
  return JSON.parse(value as string) as T;
}

/** A row as returned by better-sqlite3: column name → value. */
export type Row = Record<string, unknown>;

/**
 * `IN` operand over a JSON array parameter: `column IN ${inJson}` with `JSON.stringify(values)` bound.
 * One statement text for any list length, so the statement cache stays small.
 */
export const inJson = "(SELECT value FROM json_each(?))";
