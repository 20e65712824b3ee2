/**
 * Cursor pagination (semantics in ports.ts `PageRequest`/`Page`): at most `limit` items (default 50,
 * clamped to 1–500) after the opaque `after` cursor; `next` is present only when more items follow.
 * A cursor is base64url JSON of the last item's position: `{ i: id }` for lists ordered by id, and
 * `{ t: epoch ms, i: id }` for lists ordered by a timestamp (the id breaks ties exactly).
 */
import type { Document } from "mongodb";
import { z } from "zod";
import { ValidationError } from "../../errors.js";
import type { Page, PageRequest } from "../index.js";

export const defaultPageLimit = 50;
export const maxPageLimit = 500;

const cursorSchema = z.object({ t: z.number().int().optional(), i: z.string().min(1) }).strict();
type Position = z.infer<typeof cursorSchema>;

/** The effective page size of a request. */
export function pageLimit(page: PageRequest | undefined): number {
  const limit = page?.limit ?? defaultPageLimit;
  if (!Number.isFinite(limit)) return defaultPageLimit;
  return Math.min(maxPageLimit, Math.max(1, Math.floor(limit)));
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify(position), "utf8").toString("base64url");
}

/** Decodes a cursor made by this adapter; throws ValidationError for anything else. */
function decodeCursor(cursor: string, withTime: boolean): Position {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    raw = undefined;
  }
  const parsed = cursorSchema.safeParse(raw);
  if (!parsed.success || (parsed.data.t !== undefined) !== withTime) {
    throw new ValidationError("invalid page cursor: pass back the `next` value of a previous page unchanged", [
      "after: a `next` value of an earlier page of the same listing",
    ]);
  }
  return parsed.data;
}

/**
 * Builds a page from up to `limit + 1` fetched documents: the extra one only tells that a next
 * page exists. `timeOf` (for timestamp-ordered lists) gives the sort timestamp of a document.
 */
export function toPage<TDoc extends { _id: string }, T>(
  docs: TDoc[],
  limit: number,
  map: (doc: TDoc) => T,
  timeOf?: (doc: TDoc) => Date,
): Page<T> {
  const items = docs.slice(0, limit);
  const last = items[items.length - 1];
  if (docs.length <= limit || last === undefined) return { items: items.map(map) };
  const next = encodeCursor(timeOf === undefined ? { i: last._id } : { t: timeOf(last).getTime(), i: last._id });
  return { items: items.map(map), next };
}

/** Filter for "after the cursor" in ascending (`1`) or descending (`-1`) `_id` order. */
export function idAfter(after: string | undefined, direction: 1 | -1): Document {
  if (after === undefined) return {};
  const { i } = decodeCursor(after, false);
  return { _id: direction === 1 ? { $gt: i } : { $lt: i } };
}

/** Filter for "after the cursor" in a list sorted by `{ [field]: direction, _id: direction }`. */
export function timeAfter(field: string, after: string | undefined, direction: 1 | -1): Document {
  if (after === undefined) return {};
  const { t, i } = decodeCursor(after, true);
  const at = new Date(t ?? 0);
  const op = direction === 1 ? "$gt" : "$lt";
  return { $or: [{ [field]: { [op]: at } }, { [field]: at, _id: { [op]: i } }] };
}
