/**
 * Shape checks and evaluation helpers of the mingo-backed MongoDB fake (mingo-db.ts). Each check
 * mirrors a rule of the real server or driver, so a filter or update the server would reject (or
 * silently misread) fails here loudly instead of passing offline:
 *
 * - stored values: BSON-representable only (no `undefined` — the driver would write null —, no
 *   functions, symbols, bigints or class instances other than Date); field names without `$`, `.`
 *   or NUL;
 * - filters: operators mingo knows (mingo throws on unknown ones), no `undefined`, `$text` only at
 *   the top level, and no equality on a whole embedded document (the server compares those
 *   field-order-sensitively; mingo does not, so such a filter could pass here and fail there);
 * - updates: operator documents only (no replacement, no pipeline), a closed set of operators, no
 *   two operators touching the same path (the server's "would create a conflict"), `_id` immutable.
 */
import { update as mingoUpdate, type Modifier } from "mingo/updater";
import type { Document } from "mongodb";

/** Update operators the fake models (each evaluated by mingo's updater, `$setOnInsert` by the fake). */
export const supportedUpdateOperators = ["$set", "$unset", "$inc", "$setOnInsert", "$push", "$pull", "$addToSet", "$min", "$max", "$mul"] as const;

/** Thrown for a shape the real server would reject or the fake does not model. */
export class FakeShapeError extends Error {
  override readonly name = "FakeShapeError";
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Throws unless `value` is storable as BSON the way the adapter means it. */
export function checkStorable(value: unknown, path: string): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") return;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new FakeShapeError(`${path}: invalid Date`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkStorable(v, `${path}.${i}`));
    return;
  }
  if (isPlainObject(value)) {
    for (const [key, v] of Object.entries(value)) {
      if (key.startsWith("$") || key.includes(".") || key.includes("\0")) {
        throw new FakeShapeError(`${path}: field name ${JSON.stringify(key)} cannot be stored (starts with $, or has . or NUL)`);
      }
      checkStorable(v, path === "" ? key : `${path}.${key}`);
    }
    return;
  }
  if (value === undefined) throw new FakeShapeError(`${path}: undefined (the driver writes it as null; say null or leave the field out)`);
  throw new FakeShapeError(`${path}: ${typeof value} ${Object.prototype.toString.call(value)} is not a BSON value`);
}

/** Throws for filter shapes the server would reject or read differently than mingo. */
export function checkFilter(filter: unknown, path = "", topLevel = true): void {
  if (!isPlainObject(filter)) throw new FakeShapeError(`filter${path}: must be a plain object`);
  for (const [key, value] of Object.entries(filter)) {
    const here = `${path}.${key}`;
    if (value === undefined) throw new FakeShapeError(`filter${here}: undefined (the driver sends null, which also matches missing fields)`);
    if (key === "$text") {
      if (!topLevel) throw new FakeShapeError(`filter${here}: $text is only allowed at the top level of a query`);
      if (!isPlainObject(value) || typeof value.$search !== "string") throw new FakeShapeError(`filter${here}: $text needs { $search: string }`);
      const extra = Object.keys(value).filter((k) => k !== "$search");
      if (extra.length > 0) throw new FakeShapeError(`filter${here}: the fake does not model ${extra.join(", ")}`);
      continue;
    }
    if (key === "$and" || key === "$or" || key === "$nor") {
      if (!Array.isArray(value) || value.length === 0) throw new FakeShapeError(`filter${here}: must be a non-empty array`);
      value.forEach((clause, i) => checkFilter(clause, `${here}.${i}`, false));
      continue;
    }
    if (key.startsWith("$")) continue; // mingo validates (and rejects unknown) top-level operators.
    checkFieldCondition(value, here);
  }
}

function checkFieldCondition(value: unknown, path: string): void {
  if (!isPlainObject(value)) {
    if (Array.isArray(value)) throw new FakeShapeError(`filter${path}: equality on a whole array; the adapter never means that`);
    return;
  }
  const keys = Object.keys(value);
  const operators = keys.filter((k) => k.startsWith("$"));
  if (operators.length === 0) {
    throw new FakeShapeError(`filter${path}: equality on an embedded document is field-order-sensitive on the server; match dotted paths instead`);
  }
  if (operators.length !== keys.length) throw new FakeShapeError(`filter${path}: mixes operators and field names`);
  for (const op of operators) {
    const operand = value[op];
    if (operand === undefined) throw new FakeShapeError(`filter${path}.${op}: undefined operand`);
    if ((op === "$in" || op === "$nin") && !Array.isArray(operand)) throw new FakeShapeError(`filter${path}.${op}: needs an array`);
    if (op === "$not" || op === "$elemMatch") checkFieldCondition(operand, `${path}.${op}`);
  }
}

const pathsConflict = (a: string, b: string) => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);

/**
 * Applies an update document to `doc` in place (`isInsert`: the document is being created by an
 * upsert, so `$setOnInsert` applies). Throws for shapes the server rejects.
 */
export function applyUpdate(doc: Document, update: unknown, isInsert: boolean): void {
  if (Array.isArray(update)) throw new FakeShapeError("update: aggregation pipeline updates are not modelled by the fake");
  if (!isPlainObject(update) || Object.keys(update).length === 0) throw new FakeShapeError("update: must be a non-empty operator document");
  const seen: string[] = [];
  const modifier: Record<string, Record<string, unknown>> = {};
  for (const [op, fields] of Object.entries(update)) {
    if (!op.startsWith("$")) throw new FakeShapeError(`update: ${op} is a field, not an operator (replacement documents are not allowed here)`);
    if (!(supportedUpdateOperators as readonly string[]).includes(op)) throw new FakeShapeError(`update: ${op} is not modelled by the fake`);
    if (!isPlainObject(fields) || Object.keys(fields).length === 0) throw new FakeShapeError(`update.${op}: must be a non-empty object`);
    for (const [path, value] of Object.entries(fields)) {
      if (path === "" || path.split(".").some((part) => part === "" || part.startsWith("$"))) {
        throw new FakeShapeError(`update.${op}: path ${JSON.stringify(path)} is empty or positional (not modelled)`);
      }
      const clash = seen.find((other) => pathsConflict(other, path));
      if (clash !== undefined) throw new FakeShapeError(`update: updating the path '${path}' would create a conflict at '${clash}'`);
      seen.push(path);
      if (op === "$unset") continue;
      if ((op === "$inc" || op === "$mul") && typeof value !== "number") throw new FakeShapeError(`update.${op}.${path}: needs a number`);
      checkStorable(value, `update.${op}.${path}`);
    }
    if (op === "$setOnInsert") {
      if (isInsert) modifier.$set = { ...(modifier.$set ?? {}), ...structuredClone(fields) };
      continue;
    }
    modifier[op] = { ...(modifier[op] ?? {}), ...structuredClone(fields) };
  }
  // mingo refuses any write to _id; the server allows setting it on insert and re-setting the same value.
  const set = modifier.$set;
  if (set !== undefined && "_id" in set) {
    const { _id: id, ...others } = set;
    if (doc._id === undefined && isInsert) doc._id = id;
    else if (!sameValue(doc._id, id)) throw new FakeShapeError("update: _id is immutable");
    if (Object.keys(others).length > 0) modifier.$set = others;
    else delete modifier.$set;
  }
  if (Object.keys(modifier).length > 0) mingoUpdate(doc, modifier as Modifier<Document>);
}

/**
 * Seed of an upserted document: the filter's equality conditions (top level, `$eq`, and inside
 * `$and`), as the server does before applying the update.
 */
export function upsertSeed(filter: Document): Document {
  const seed: Document = {};
  const visit = (f: Document) => {
    for (const [key, value] of Object.entries(f)) {
      if (key === "$and" && Array.isArray(value)) value.forEach((clause) => visit(clause as Document));
      if (key.startsWith("$")) continue;
      if (isPlainObject(value)) {
        if ("$eq" in value) setPath(seed, key, structuredClone(value.$eq));
        continue;
      }
      setPath(seed, key, structuredClone(value));
    }
  };
  visit(filter);
  return seed;
}

/** Writes a dotted path, creating embedded documents on the way. */
function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split(".");
  let current: Record<string, unknown> = doc;
  for (const part of parts.slice(0, -1)) {
    const next = current[part];
    if (!isPlainObject(next)) current[part] = {};
    current = current[part] as Record<string, unknown>;
  }
  current[parts[parts.length - 1]!] = value;
}

/** Reads a dotted path (missing → undefined). */
export function getPath(doc: Document, path: string): unknown {
  let current: unknown = doc;
  for (const part of path.split(".")) {
    if (!isPlainObject(current)) return undefined;
    current = current[part];
  }
  return current;
}

/** BSON-ish equality for unique index keys: Dates by instant, objects and arrays structurally. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameValue(a[k], b[k]));
  }
  return a === b;
}

/** Lower-cased words, as the fake's `$text` sees them. */
export function textTokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
}

/** A crude English stem (plural and common suffixes), standing in for the server's Snowball stemmer. */
function stem(word: string): string {
  for (const suffix of ["ing", "es", "ed", "s"]) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return word;
}

/**
 * APPROXIMATION of MongoDB's `$text` relevance: the server tokenizes with language rules, drops stop
 * words, stems with Snowball and weighs term frequency against field length; the fake counts how
 * often the query's (crudely stemmed) words occur in the indexed fields, scaled down slightly for
 * longer texts. Good enough to check that the adapter filters, ranks and limits by `textScore`; not a
 * check of real relevance ordering between close candidates. Returns 0 for no match.
 */
export function textScore(search: string, texts: string[]): number {
  const terms = new Set(textTokens(search).filter((t) => !["a", "an", "and", "or", "not", "the", "to", "of"].includes(t)));
  if (terms.size === 0) return 0;
  const tokens = texts.flatMap(textTokens);
  const hits = tokens.filter((t) => terms.has(t)).length;
  return hits === 0 ? 0 : hits * (1 / (1 + tokens.length / 100));
}
