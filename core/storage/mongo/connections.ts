/**
 * MongoDB implementations of `ConnectionRepository` (`connections`) and `ChangeRepository`
 * (`sync_cursors`, `connection_changes`). Change seqs come from the `connection_changes` counter; the
 * unique (connection, source, key) index drops a change recorded twice. Without transactions the
 * changes are inserted before the cursor moves, so a crash in between repeats a sync pass and
 * loses nothing (the repeated changes are dropped by the index).
 */
import type { Clock } from "../../clock.js";
import { DuplicateKeyError, NotFoundError } from "../../errors.js";
import { asId, newId, type ConnectionId, type PersonId } from "../../ids.js";
import type { ChangeRepository, ConnectionRepository } from "../index.js";
import type { Connection, ConnectionChange, ConnectionPatch, ConnectionStatus, NewConnection, NewConnectionChange } from "../../connections/records.js";
import type { Json } from "../../json.js";
import type { ChangeDoc, ConnectionDoc, CounterDoc, SyncCursorDoc } from "./documents.js";
import { decodeJson, encodeJson } from "./codec.js";
import type { Atomically } from "./conversation.js";
import { nextCounterValue } from "./conversation.js";
import type { DbLike } from "./driver.js";
import { openColl } from "./session.js";

const unknownStatus: ConnectionStatus = { state: "unknown", mode: "stopped", lastSyncAt: null, lastError: null, checkedAt: null };

/** Counter name of connection change seqs. */
export const changeCounter = "connection_changes";

function toConnection(d: ConnectionDoc): Connection {
  return {
    id: asId("connection", d._id),
    personId: asId("person", d.personId),
    kind: d.kind,
    label: d.label,
    settings: decodeJson(d.settings),
    capabilities: [...d.capabilities],
    source: d.source,
    status: { ...d.status },
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

function toChange(d: ChangeDoc): ConnectionChange {
  return {
    seq: d.seq,
    connectionId: asId("connection", d.connectionId),
    personId: asId("person", d.personId),
    source: d.source,
    key: d.key,
    kind: d.kind,
    topic: d.topic,
    occurredAt: d.occurredAt,
    data: decodeJson(d.data),
    dispatchedAt: d.dispatchedAt,
  };
}

export class MongoConnectionRepository implements ConnectionRepository {
  private readonly connections;
  private readonly cursors;
  private readonly changes;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.connections = openColl<ConnectionDoc>(db, "connections", "connection");
    this.cursors = openColl<SyncCursorDoc>(db, "syncCursors", "sync cursor");
    this.changes = openColl<ChangeDoc>(db, "connectionChanges", "connection change");
  }

  async createConnection(input: NewConnection): Promise<Connection> {
    const now = this.clock.now();
    const doc: ConnectionDoc = {
      _id: newId("connection"),
      personId: input.personId,
      kind: input.kind,
      label: input.label,
      settings: encodeJson(input.settings),
      capabilities: [...input.capabilities],
      source: input.source,
      status: { ...unknownStatus },
      createdAt: now,
      updatedAt: now,
    };
    await this.connections.insertOne(doc);
    return toConnection(doc);
  }

  async getConnection(id: ConnectionId): Promise<Connection | null> {
    const doc = await this.connections.findOne({ _id: id });
    return doc === null ? null : toConnection(doc);
  }

  async listConnections(filter: { personId?: PersonId; kind?: string } = {}): Promise<Connection[]> {
    const query: Record<string, string> = {};
    if (filter.personId !== undefined) query.personId = filter.personId;
    if (filter.kind !== undefined) query.kind = filter.kind;
    return (await this.connections.find(query, { sort: { _id: 1 } })).map(toConnection);
  }

  async updateConnection(id: ConnectionId, patch: ConnectionPatch, now: Date): Promise<Connection> {
    const set: Record<string, unknown> = { updatedAt: now };
    if (patch.label !== undefined) set.label = patch.label;
    if (patch.settings !== undefined) set.settings = encodeJson(patch.settings);
    if (patch.capabilities !== undefined) set.capabilities = [...patch.capabilities];
    if (patch.source !== undefined) set.source = patch.source;
    const doc = await this.connections.findOneAndUpdate({ _id: id }, { $set: set });
    if (doc === null) throw new NotFoundError("connection", id);
    return toConnection(doc);
  }

  async setConnectionStatus(id: ConnectionId, status: ConnectionStatus): Promise<void> {
    await this.connections.updateOne({ _id: id }, { $set: { status: { ...status } } });
  }

  async deleteConnection(id: ConnectionId): Promise<boolean> {
    const removed = (await this.connections.deleteOne({ _id: id })) === 1;
    await this.cursors.deleteMany({ connectionId: id });
    await this.changes.deleteMany({ connectionId: id });
    return removed;
  }
}

export class MongoChangeRepository implements ChangeRepository {
  private readonly connections;
  private readonly cursors;
  private readonly changes;
  private readonly counters;

  constructor(
    db: DbLike,
    private readonly atomically: Atomically,
  ) {
    this.connections = openColl<ConnectionDoc>(db, "connections", "connection");
    this.cursors = openColl<SyncCursorDoc>(db, "syncCursors", "sync cursor");
    this.changes = openColl<ChangeDoc>(db, "connectionChanges", "connection change");
    this.counters = openColl<CounterDoc>(db, "counters", "counter");
  }

  async readCursor(connectionId: ConnectionId, source: string): Promise<Json | null> {
    const doc = await this.cursors.findOne({ _id: `${connectionId}\u0000${source}` });
    return doc === null ? null : decodeJson(doc.cursor);
  }

  commitChanges(input: { connectionId: ConnectionId; personId: PersonId; source: string; cursor: Json; changes: readonly NewConnectionChange[]; now: Date }): Promise<ConnectionChange[]> {
    return this.atomically(async () => {
      if ((await this.connections.findOne({ _id: input.connectionId }, { projection: { _id: 1 } })) === null) throw new NotFoundError("connection", input.connectionId);
      const recorded: ConnectionChange[] = [];
      for (const c of input.changes) {
        if ((await this.changes.findOne({ connectionId: input.connectionId, source: input.source, key: c.key }, { projection: { _id: 1 } })) !== null) continue;
        const seq = await nextCounterValue(this.counters, changeCounter);
        const doc: ChangeDoc = {
          _id: `chg_${String(seq).padStart(15, "0")}`,
          seq,
          connectionId: input.connectionId,
          personId: input.personId,
          source: input.source,
          key: c.key,
          kind: c.kind,
          topic: c.topic,
          occurredAt: c.occurredAt,
          data: encodeJson(c.data),
          dispatchedAt: c.dispatched ? input.now : null,
        };
        try {
          await this.changes.insertOne(doc);
        } catch (err) {
          if (err instanceof DuplicateKeyError) continue;
          throw err;
        }
        recorded.push(toChange(doc));
      }
      await this.cursors.updateOne(
        { _id: `${input.connectionId}\u0000${input.source}` },
        { $set: { connectionId: input.connectionId, source: input.source, cursor: encodeJson(input.cursor), updatedAt: input.now } },
        { upsert: true },
      );
      return recorded;
    });
  }

  async findChange(input: { connectionId: ConnectionId; source: string; key: string }): Promise<ConnectionChange | null> {
    const doc = await this.changes.findOne({ connectionId: input.connectionId, source: input.source, key: input.key });
    return doc === null ? null : toChange(doc);
  }

  async listUndispatched(limit: number): Promise<ConnectionChange[]> {
    return (await this.changes.find({ dispatchedAt: null }, { sort: { seq: 1 }, limit })).map(toChange);
  }

  async listChangesAfter(input: { personId: PersonId; kind: string; afterSeq: number; limit: number }): Promise<ConnectionChange[]> {
    return (await this.changes.find({ personId: input.personId, kind: input.kind, seq: { $gt: input.afterSeq } }, { sort: { seq: 1 }, limit: input.limit })).map(toChange);
  }

  async markDispatched(seq: number, now: Date): Promise<void> {
    await this.changes.updateOne({ seq, dispatchedAt: null }, { $set: { dispatchedAt: now } });
  }

  async latestSeq(personId: PersonId): Promise<number> {
    const [doc] = await this.changes.find({ personId }, { sort: { seq: -1 }, limit: 1, projection: { seq: 1 } });
    return doc?.seq ?? 0;
  }

  async countChanges(input: { connectionId: ConnectionId; kind: string; topic: string; since: Date }): Promise<number> {
    const docs = await this.changes.find({ connectionId: input.connectionId, kind: input.kind, topic: input.topic, occurredAt: { $gte: input.since } }, { projection: { _id: 1 } });
    return docs.length;
  }

  async pruneChanges(before: Date): Promise<number> {
    return this.changes.deleteMany({ dispatchedAt: { $ne: null }, occurredAt: { $lt: before } });
  }
}
