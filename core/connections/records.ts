/**
 * A person's connections to outside services (a mailbox, a calendar) — never their credentials,
 * which live in the person's vault — and the changes their syncs find, in one sequence (changes are
 * what wakes tasks that wait on outside events).
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door.
 */
import type { ConnectionId, PersonId } from "../ids.js";
import type { Json } from "../json.js";

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
