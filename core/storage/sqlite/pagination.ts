import { z } from "zod";
import { ValidationError } from "../../errors.js";
import type { Page, PageRequest } from "../index.js";
import type { Row } from "./context.js";

/** Page size when the caller gives none. */
export const defaultPageLimit = 50;
/** Largest page; bigger requests are cut down to it. */
export const maxPageLimit = 500;

const cursorSchema = z.object({ k: z.union([z.number(), z.string()]), i: z.string().min(1) });

/** The last row's sort key and id, from which the next page continues. */
export interface CursorKey {
  key: number | string;
  id: string;
}

/** Encodes a keyset position as an opaque cursor (base64url of a small JSON object). */
export function encodeCursor(position: CursorKey): string {
  return Buffer.from(JSON.stringify({ k: position.key, i: position.id }), "utf8").toString("base64url");
}

/** Decodes a cursor made by `encodeCursor`; throws ValidationError for anything else. */
export function decodeCursor(cursor: string): CursorKey {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    raw = undefined;
  }
  const parsed = cursorSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError("invalid page cursor: pass back the `next` value of a previous page unchanged");
  return { key: parsed.data.k, id: parsed.data.i };
}

/** The effective page size: default 50, at most 500; a non-positive or fractional limit is a ValidationError. */
export function pageLimit(request: PageRequest | undefined): number {
  const limit = request?.limit;
  if (limit === undefined) return defaultPageLimit;
  if (!Number.isInteger(limit) || limit < 1) throw new ValidationError(`page limit must be a positive integer, got ${limit}`);
  return Math.min(limit, maxPageLimit);
}

/**
 * SQL for a keyset page ordered by (`keyColumn`, `id`), ascending or descending: the WHERE fragment
 * continuing after the cursor (empty on the first page), the ORDER BY, and the row limit (one more than
 * the page, to tell whether a next page exists).
 */
export function keyset(
  request: PageRequest | undefined,
  keyColumn: string,
  direction: "asc" | "desc",
  idColumn = "id",
): { where: string; params: unknown[]; orderBy: string; fetch: number; limit: number } {
  const limit = pageLimit(request);
  const op = direction === "asc" ? ">" : "<";
  const orderBy = `ORDER BY ${keyColumn} ${direction}, ${idColumn} ${direction}`;
  if (request?.after === undefined) return { where: "", params: [], orderBy, fetch: limit + 1, limit };
  const { key, id } = decodeCursor(request.after);
  return {
    where: `(${keyColumn} ${op} ? OR (${keyColumn} = ? AND ${idColumn} ${op} ?))`,
    params: [key, key, id],
    orderBy,
    fetch: limit + 1,
    limit,
  };
}

/** Turns the fetched rows (up to limit + 1) into a page with a `next` cursor when more exist. */
export function toPage<T>(rows: Row[], limit: number, keyColumn: string, map: (row: Row) => T, idColumn = "id"): Page<T> {
  const more = rows.length > limit;
  const slice = more ? rows.slice(0, limit) : rows;
  const page: Page<T> = { items: slice.map(map) };
  const last = slice[slice.length - 1];
  if (more && last) page.next = encodeCursor({ key: last[keyColumn] as number | string, id: last[idColumn] as string });
  return page;
}
