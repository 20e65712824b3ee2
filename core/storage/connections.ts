/**
 * What the store keeps about a person's connections (a mailbox, a calendar): the connection records
 * — never their credentials, which live in the person's vault — and, per synced source (a mailbox
 * folder, a calendar), a cursor and the changes the sync found, in one sequence. Changes are what
 * wakes tasks that wait on outside events; `dispatchedAt` says the runtime has handed one on.
 */
import type { ConnectionId, PersonId } from "../ids.js";
import type { Json } from "./types.js";

/** How a connection is doing, as its sync last saw it (shown on the Connections page). */
export interface ConnectionStatus {
  /** `ok`: the last attempt worked; `error`: it failed (see `lastError`); `unknown`: never tried. */
  state: "ok" | "error" | "unknown";
  /** What the sync is doing: `idle` (IMAP IDLE alive), `polling`, `connecting`, `waiting` (backoff), `stopped`. */
  mode: string;
  lastSyncAt: Date | null;
  /** The last failure in words (never a credential). */
  lastError: string | null;
  checkedAt: Date | null;
}

/** A person's connection to an outside service. `settings` are the kind's own (no secrets). */
export interface Connection {
  id: ConnectionId;
  personId: PersonId;
  /** `email`, `caldav`, `ics`, … (connectors/ define the kinds). */
  kind: string;
  /** How the person knows it: the address, the calendar's name. */
  label: string;
  settings: Json;
  /** The capabilities the person granted (`read`, `send`, `organise` for email), each separately. */
  capabilities: string[];
  /** `config`: from FAMILIAR_CONFIG (updated at every start); `person`: made on the Connections page or by /connect. */
  source: "config" | "person";
  status: ConnectionStatus;
  createdAt: Date;
  updatedAt: Date;
}

export type NewConnection = Pick<Connection, "personId" | "kind" | "label" | "settings" | "capabilities" | "source">;
export type ConnectionPatch = Partial<Pick<Connection, "label" | "settings" | "capabilities" | "source">>;

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

/** One change a sync found (a new mail), or a record a connector keeps (a sent mail). */
export interface ConnectionChange {
  /** Increases with every change recorded in the store (across connections). */
  seq: number;
  connectionId: ConnectionId;
  personId: PersonId;
  /** The synced source within the connection (`INBOX`). */
  source: string;
  /** Unique within (connection, source): a second change with the same key is not recorded. */
  key: string;
  /** `email.arrived`, `email.sent`, … */
  kind: string;
  /** A grouping the connector counts by (an email thread). */
  topic: string | null;
  occurredAt: Date;
  /** What the change says, as the connector stored it (already filtered: no one-time codes). */
  data: Json;
  /** When the runtime handed it on to waiting tasks; null until then (and for records nobody waits on, set at once). */
  dispatchedAt: Date | null;
}

export type NewConnectionChange = Omit<ConnectionChange, "seq" | "connectionId" | "personId" | "source" | "dispatchedAt"> & { dispatched?: boolean };

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
