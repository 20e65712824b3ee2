import { NotFoundError } from "../../errors.js";
import { asId, newId, type MemoryId, type PersonId } from "../../ids.js";
import type { MemoryRepository } from "../index.js";
import type { ChannelName } from "../../channels/records.js";
import type { MemoryItem, MemoryKind, MemoryPatch, NewMemoryItem } from "../../memory/records.js";
import type { Page, PageRequest } from "../index.js";
import { type Row, type SqliteContext, ms, msOrNull, toDate, toDateOrNull } from "./context.js";
import { keyset, toPage } from "./pagination.js";

/** Confidence of an item added without one. */
const defaultConfidence = 0.7;
/** At most this many distinct terms of a query are searched for. */
const maxQueryTerms = 32;

function toItem(row: Row): MemoryItem {
  return {
    id: asId("memory", row.id as string),
    personId: asId("person", row.person_id as string),
    kind: row.kind as MemoryKind,
    text: row.text as string,
    provenance: {
      messageId: row.provenance_message_id === null ? null : asId("message", row.provenance_message_id as string),
      channel: row.provenance_channel as ChannelName | null,
      note: row.provenance_note as string | null,
    },
    confidence: row.confidence as number,
    expiresAt: toDateOrNull(row.expires_at),
    taint: typeof row.taint_source === "string" ? { source: row.taint_source } : null,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/**
 * Turns any user text into a safe FTS5 query: the words (letters, digits, underscore), each quoted
 * as a string so FTS5 operators and syntax characters lose their meaning, joined with OR. Returns null
 * when the text has no words.
 *
 * @example ftsQuery('green "tea" OR *') // → '"green" OR "tea" OR "or"'
 */
export function ftsQuery(text: string): string | null {
  const terms = [...new Set((text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 4 * maxQueryTerms))].slice(0, maxQueryTerms);
  return terms.length ? terms.map((term) => `"${term}"`).join(" OR ") : null;
}

/** Personal memory with an FTS5 index (external content, kept in sync by triggers) ranked by bm25. */
export class SqliteMemoryRepository implements MemoryRepository {
  constructor(private readonly ctx: SqliteContext) {}

  /** `confidence` defaults to 0.7 and `provenance` to all-null. */
  addMemory(input: NewMemoryItem): Promise<MemoryItem> {
    const now = this.ctx.nowMs();
    return this.ctx.run(
      () =>
        toItem(
          this.ctx
            .stmt(
              `INSERT INTO memory (id, person_id, kind, text, provenance_message_id, provenance_channel, provenance_note, confidence, expires_at, taint_source, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(
              newId("memory"),
              input.personId,
              input.kind,
              input.text,
              input.provenance?.messageId ?? null,
              input.provenance?.channel ?? null,
              input.provenance?.note ?? null,
              input.confidence ?? defaultConfidence,
              msOrNull(input.expiresAt),
              input.taint?.source ?? null,
              now,
              now,
            ) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  getMemory(id: MemoryId): Promise<MemoryItem | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM memory WHERE id = ?").get(id) as Row | undefined;
      return row ? toItem(row) : null;
    });
  }

  updateMemory(personId: PersonId, id: MemoryId, patch: MemoryPatch): Promise<MemoryItem> {
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => {
      sets.push(`${column} = ?`);
      params.push(value);
    };
    if (patch.kind !== undefined) set("kind", patch.kind);
    if (patch.text !== undefined) set("text", patch.text);
    if (patch.confidence !== undefined) set("confidence", patch.confidence);
    if (patch.expiresAt !== undefined) set("expires_at", msOrNull(patch.expiresAt));
    set("updated_at", this.ctx.nowMs());
    return this.ctx.run(() => {
      const row = this.ctx.stmt(`UPDATE memory SET ${sets.join(", ")} WHERE id = ? AND person_id = ? RETURNING *`).get(...params, id, personId) as
        | Row
        | undefined;
      if (!row) throw new NotFoundError("memory item", id);
      return toItem(row);
    });
  }

  deleteMemory(personId: PersonId, id: MemoryId): Promise<boolean> {
    return this.ctx.run(() => this.ctx.stmt("DELETE FROM memory WHERE id = ? AND person_id = ?").run(id, personId).changes === 1);
  }

  listMemory(personId: PersonId, page?: PageRequest): Promise<Page<MemoryItem>> {
    return this.ctx.run(() => {
      const k = keyset(page, "created_at", "desc");
      const rows = this.ctx
        .stmt(`SELECT * FROM memory WHERE person_id = ? ${k.where ? `AND ${k.where}` : ""} ${k.orderBy} LIMIT ?`)
        .all(personId, ...k.params, k.fetch) as Row[];
      return toPage(rows, k.limit, "created_at", toItem);
    });
  }

  /** Query text is reduced to quoted words joined with OR (see `ftsQuery`); text without words finds nothing. */
  searchMemory(personId: PersonId, query: string, options: { limit: number; now: Date }): Promise<MemoryItem[]> {
    const match = ftsQuery(query);
    if (match === null || options.limit < 1) return Promise.resolve([]);
    return this.ctx.run(() =>
      (this.ctx
        .stmt(
          `SELECT m.* FROM memory_fts JOIN memory m ON m.rid = memory_fts.rowid
           WHERE memory_fts MATCH ? AND m.person_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?)
           ORDER BY bm25(memory_fts), m.created_at DESC, m.id DESC LIMIT ?`,
        )
        .all(match, personId, ms(options.now), options.limit) as Row[]).map(toItem),
    );
  }
}
