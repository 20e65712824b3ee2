/**
 * SQLite implementations of `ConnectionRepository` and `ChangeRepository` (tables added by migration
 * 73): connection records, sync cursors, and connection changes in one AUTOINCREMENT sequence; a
 * commit of changes and cursor is one write transaction.
 */
import { DuplicateKeyError, NotFoundError } from "../../errors.js";
import { asId, newId, type ConnectionId, type PersonId } from "../../ids.js";
import type { ChangeRepository, ConnectionRepository } from "../index.js";
import type { Connection, ConnectionChange, ConnectionPatch, ConnectionStatus, NewConnection, NewConnectionChange } from "../../connections/records.js";
import type { Json } from "../../json.js";
import { type Row, type SqliteContext, jsonText, ms, parseJson, toDate, toDateOrNull } from "./context.js";

const unknownStatus: ConnectionStatus = { state: "unknown", mode: "stopped", lastSyncAt: null, lastError: null, checkedAt: null };

interface StoredStatus {
  state: ConnectionStatus["state"];
  mode: string;
  lastSyncAt: number | null;
  lastError: string | null;
  checkedAt: number | null;
}

function toStatus(text: unknown): ConnectionStatus {
  const s = parseJson<StoredStatus>(text);
  return { state: s.state, mode: s.mode, lastSyncAt: toDateOrNull(s.lastSyncAt), lastError: s.lastError, checkedAt: toDateOrNull(s.checkedAt) };
}

function statusText(s: ConnectionStatus): string {
  const stored: StoredStatus = { state: s.state, mode: s.mode, lastSyncAt: s.lastSyncAt ? ms(s.lastSyncAt) : null, lastError: s.lastError, checkedAt: s.checkedAt ? ms(s.checkedAt) : null };
  return JSON.stringify(stored);
}

function toConnection(row: Row): Connection {
  return {
    id: asId("connection", row.id as string),
    personId: asId("person", row.person_id as string),
    kind: row.kind as string,
    label: row.label as string,
    settings: parseJson(row.settings),
    capabilities: parseJson<string[]>(row.capabilities),
    source: row.source as Connection["source"],
    status: toStatus(row.status),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

function toChange(row: Row): ConnectionChange {
  return {
    seq: row.seq as number,
    connectionId: asId("connection", row.connection_id as string),
    personId: asId("person", row.person_id as string),
    source: row.source as string,
    key: row.key as string,
    kind: row.kind as string,
    topic: (row.topic as string | null) ?? null,
    occurredAt: toDate(row.occurred_at),
    data: parseJson(row.data),
    dispatchedAt: toDateOrNull(row.dispatched_at),
  };
}

export class SqliteConnectionRepository implements ConnectionRepository {
  constructor(private readonly ctx: SqliteContext) {}

  createConnection(input: NewConnection): Promise<Connection> {
    const now = this.ctx.nowMs();
    return this.ctx.run(
      () =>
        toConnection(
          this.ctx
            .stmt(
              `INSERT INTO connections (id, person_id, kind, label, settings, capabilities, source, status, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(newId("connection"), input.personId, input.kind, input.label, jsonText(input.settings), jsonText(input.capabilities), input.source, statusText(unknownStatus), now, now) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  getConnection(id: ConnectionId): Promise<Connection | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM connections WHERE id = ?").get(id) as Row | undefined;
      return row ? toConnection(row) : null;
    });
  }

  listConnections(filter: { personId?: PersonId; kind?: string } = {}): Promise<Connection[]> {
    return this.ctx.run(() =>
      (
        this.ctx
          .stmt("SELECT * FROM connections WHERE (@person IS NULL OR person_id = @person) AND (@kind IS NULL OR kind = @kind) ORDER BY created_at, id")
          .all({ person: filter.personId ?? null, kind: filter.kind ?? null }) as Row[]
      ).map(toConnection),
    );
  }

  updateConnection(id: ConnectionId, patch: ConnectionPatch, now: Date): Promise<Connection> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE connections SET label = coalesce(@label, label), settings = coalesce(@settings, settings),
             capabilities = coalesce(@capabilities, capabilities), source = coalesce(@source, source), updated_at = @now
           WHERE id = @id RETURNING *`,
        )
        .get({
          id,
          label: patch.label ?? null,
          settings: patch.settings === undefined ? null : jsonText(patch.settings),
          capabilities: patch.capabilities === undefined ? null : jsonText(patch.capabilities),
          source: patch.source ?? null,
          now: ms(now),
        }) as Row | undefined;
      if (!row) throw new NotFoundError("connection", id);
      return toConnection(row);
    });
  }

  setConnectionStatus(id: ConnectionId, status: ConnectionStatus): Promise<void> {
    return this.ctx.run(() => {
      this.ctx.stmt("UPDATE connections SET status = ? WHERE id = ?").run(statusText(status), id);
    });
  }

  deleteConnection(id: ConnectionId): Promise<boolean> {
    return this.ctx.atomic(() => this.ctx.stmt("DELETE FROM connections WHERE id = ?").run(id).changes === 1);
  }
}

export class SqliteChangeRepository implements ChangeRepository {
  constructor(private readonly ctx: SqliteContext) {}

  readCursor(connectionId: ConnectionId, source: string): Promise<Json | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT cursor FROM sync_cursors WHERE connection_id = ? AND source = ?").get(connectionId, source) as Row | undefined;
      return row ? parseJson(row.cursor) : null;
    });
  }

  commitChanges(input: { connectionId: ConnectionId; personId: PersonId; source: string; cursor: Json; changes: readonly NewConnectionChange[]; now: Date }): Promise<ConnectionChange[]> {
    const now = ms(input.now);
    return this.ctx.atomic(
      () => {
        const insert = this.ctx.stmt(
          `INSERT INTO connection_changes (connection_id, person_id, source, key, kind, topic, occurred_at, data, dispatched_at)
           VALUES (@connection, @person, @source, @key, @kind, @topic, @occurred, @data, @dispatched)
           ON CONFLICT (connection_id, source, key) DO NOTHING RETURNING *`,
        );
        const recorded: ConnectionChange[] = [];
        for (const c of input.changes) {
          const row = insert.get({
            connection: input.connectionId,
            person: input.personId,
            source: input.source,
            key: c.key,
            kind: c.kind,
            topic: c.topic,
            occurred: ms(c.occurredAt),
            data: jsonText(c.data),
            dispatched: c.dispatched ? now : null,
          }) as Row | undefined;
          if (row) recorded.push(toChange(row));
        }
        this.ctx
          .stmt(
            `INSERT INTO sync_cursors (connection_id, source, cursor, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (connection_id, source) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
          )
          .run(input.connectionId, input.source, jsonText(input.cursor), now);
        return recorded;
      },
      { references: { entity: "connection", id: input.connectionId }, duplicate: (cause) => new DuplicateKeyError("connection change", input.source, { cause }) },
    );
  }

  findChange(input: { connectionId: ConnectionId; source: string; key: string }): Promise<ConnectionChange | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM connection_changes WHERE connection_id = ? AND source = ? AND key = ?").get(input.connectionId, input.source, input.key) as Row | undefined;
      return row ? toChange(row) : null;
    });
  }

  listUndispatched(limit: number): Promise<ConnectionChange[]> {
    return this.ctx.run(() => (this.ctx.stmt("SELECT * FROM connection_changes WHERE dispatched_at IS NULL ORDER BY seq LIMIT ?").all(limit) as Row[]).map(toChange));
  }

  listChangesAfter(input: { personId: PersonId; kind: string; afterSeq: number; limit: number }): Promise<ConnectionChange[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM connection_changes WHERE person_id = ? AND kind = ? AND seq > ? ORDER BY seq LIMIT ?").all(input.personId, input.kind, input.afterSeq, input.limit) as Row[]).map(toChange),
    );
  }

  markDispatched(seq: number, now: Date): Promise<void> {
    return this.ctx.run(() => {
      this.ctx.stmt("UPDATE connection_changes SET dispatched_at = ? WHERE seq = ? AND dispatched_at IS NULL").run(ms(now), seq);
    });
  }

  latestSeq(personId: PersonId): Promise<number> {
    return this.ctx.run(() => (this.ctx.stmt("SELECT coalesce(max(seq), 0) AS s FROM connection_changes WHERE person_id = ?").get(personId) as { s: number }).s);
  }

  countChanges(input: { connectionId: ConnectionId; kind: string; topic: string; since: Date }): Promise<number> {
    return this.ctx.run(
      () =>
        (
          this.ctx
            .stmt("SELECT count(*) AS n FROM connection_changes WHERE connection_id = ? AND kind = ? AND topic = ? AND occurred_at >= ?")
            .get(input.connectionId, input.kind, input.topic, ms(input.since)) as { n: number }
        ).n,
    );
  }

  pruneChanges(before: Date): Promise<number> {
    return this.ctx.run(() => this.ctx.stmt("DELETE FROM connection_changes WHERE dispatched_at IS NOT NULL AND occurred_at < ?").run(ms(before)).changes);
  }
}
