/**
 * What the store keeps about a person's connections (a mailbox, a calendar): the connection records
 * — never their credentials, which live in the person's vault — and, per synced source (a mailbox
 * folder, a calendar), a cursor and the changes the sync found, in one sequence. Changes are what
 * wakes tasks that wait on outside events; `dispatchedAt` says the runtime has handed one on.
 */
import type { ConnectionId, PersonId } from "../ids.js";
import type { Json } from "../json.js";
import type { Connection, ConnectionChange, ConnectionPatch, ConnectionStatus, NewConnection, NewConnectionChange } from "../connections/records.js";

/** A person's connections. */
export interface ConnectionRepository {
  createConnection(input: NewConnection): Promise<Connection>;
  getConnection(id: ConnectionId): Promise<Connection | null>;
  /** Oldest first; optionally one person's, or one kind's. */
  listConnections(filter?: { personId?: PersonId; kind?: string }): Promise<Connection[]>;
  /** Throws NotFoundError. */
  updateConnection(id: ConnectionId, patch: ConnectionPatch, now: Date): Promise<Connection>;
  /** Records what the sync saw; does nothing when the connection is gone. */
  setConnectionStatus(id: ConnectionId, status: ConnectionStatus): Promise<void>;
  /** Removes the connection with its cursors and changes; false when there was none. */
  deleteConnection(id: ConnectionId): Promise<boolean>;
}

/** Cursors and changes of synced sources. */
export interface ChangeRepository {
  /** The stored cursor of (connection, source), or null before the first sync. */
  readCursor(connectionId: ConnectionId, source: string): Promise<Json | null>;
  /**
   * Records `changes` (skipping keys already recorded for the source) and stores `cursor`, together:
   * in one transaction where the store has them; otherwise changes first, so a crash in between
   * repeats the sync pass instead of losing its changes. Returns the changes actually recorded.
   */
  commitChanges(input: { connectionId: ConnectionId; personId: PersonId; source: string; cursor: Json; changes: readonly NewConnectionChange[]; now: Date }): Promise<ConnectionChange[]>;
  /** The change recorded under `key` for (connection, source), or null (never recorded, or pruned). */
  findChange(input: { connectionId: ConnectionId; source: string; key: string }): Promise<ConnectionChange | null>;
  /** Changes not yet dispatched, oldest first, at most `limit`. */
  listUndispatched(limit: number): Promise<ConnectionChange[]>;
  /** The person's changes of `kind` with a seq above `afterSeq`, oldest first, at most `limit`. */
  listChangesAfter(input: { personId: PersonId; kind: string; afterSeq: number; limit: number }): Promise<ConnectionChange[]>;
  /** Marks a change dispatched (idempotent). */
  markDispatched(seq: number, now: Date): Promise<void>;
  /** The highest seq recorded for the person (0 when none): a new watch waits for changes after it. */
  latestSeq(personId: PersonId): Promise<number>;
  /** How many changes of `kind` and `topic` the connection recorded at or after `since`. */
  countChanges(input: { connectionId: ConnectionId; kind: string; topic: string; since: Date }): Promise<number>;
  /** Deletes dispatched changes that occurred before `before`; returns how many. */
  pruneChanges(before: Date): Promise<number>;
}
