/**
 * Translation of Agenda's database-agnostic filters (`data` matches, `unique` queries,
 * `RemoveJobsOptions`, sort options) into SQLite WHERE / ORDER BY fragments with bound parameters.
 * Semantics follow `@agendajs/mongo-backend`: a `data` object is flattened into dot paths matched
 * by equality; a `null` matches null or missing; NULLs sort first ascending.
 */
import type { JobsSort, RemoveJobsOptions, SortDirection } from "agenda";
import { ValidationError } from "../../../core/errors.js";
import { DATE_COLUMNS, FIELD_TO_COLUMN, dataToJson, toMs } from "./rows.js";

/** SQL condition plus its positional parameters. */
export interface Condition {
  sql: string;
  params: unknown[];
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `{ a: 1, b: { c: 2 } }` → `{ "a": 1, "b.c": 2 }` (MongoBackend's flattenDataFilter). */
function flatten(data: Record<string, unknown>, prefix = ""): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [key, value] of Object.entries(data)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isPlainObject(value)) out.push(...flatten(value, path));
    else out.push([path, value]);
  }
  return out;
}

/** `a.b` → `$."a"."b"` (quoted labels, so keys with spaces or dashes work). */
function jsonPath(dotPath: string): string {
  const segments = dotPath.split(".");
  for (const segment of segments) {
    if (segment === "" || segment.includes('"') || segment.startsWith("$")) {
      throw new ValidationError(`job data path "${dotPath}" cannot be matched: use plain field names without '"' or a leading '$'`);
    }
  }
  return "$" + segments.map((s) => `."${s}"`).join("");
}

/**
 * Equality of the JSON value at `dotPath` inside the `data` column with a JavaScript value.
 * JSON types are checked, so the string "1", the number 1 and `true` never match each other.
 */
export function dataPathEquals(dotPath: string, value: unknown): Condition {
  // The path is inlined as a SQL literal (validated above, quotes escaped), not bound: SQLite can
  // use an expression index such as the one on json_extract(data, '$."key"') only for a literal path.
  const path = `'${jsonPath(dotPath).replace(/'/g, "''")}'`;
  const extract = `json_extract(data, ${path})`;
  const type = `json_type(data, ${path})`;
  if (value === null || value === undefined) return { sql: `${extract} IS NULL`, params: [] };
  if (typeof value === "boolean") return { sql: `${type} = ?`, params: [value ? "true" : "false"] };
  if (typeof value === "number" || typeof value === "bigint") {
    return { sql: `(${extract} = ? AND ${type} IN ('integer', 'real'))`, params: [value] };
  }
  if (typeof value === "string" || value instanceof Date) {
    const text = typeof value === "string" ? value : value.toISOString();
    return { sql: `(${extract} = ? AND ${type} = 'text')`, params: [text] };
  }
  if (Array.isArray(value)) {
    return { sql: `(${type} = 'array' AND ${extract} = json(?))`, params: [JSON.stringify(value)] };
  }
  throw new ValidationError(`job data path "${dotPath}" cannot be matched against a ${typeof value}: use a string, number, boolean, null or array`);
}

/** The `data` option of queryJobs / removeJobs: an object is a partial match, anything else an exact one. */
export function dataFilter(data: unknown): Condition[] {
  if (isPlainObject(data)) return flatten(data).map(([path, value]) => dataPathEquals(path, value));
  if (data === null) return [{ sql: "data IS NULL OR data = 'null'", params: [] }];
  return [{ sql: "data = ?", params: [dataToJson(data)] }];
}

function isOperatorObject(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).some((k) => k.startsWith("$"));
}

/**
 * A `unique()` query as SQL. Supported: equality on `data.*` paths with scalar values, on the whole
 * `data`, and on top-level job fields (`name`, `type`, `priority`, …). Query operators are rejected:
 * keep uniqueness keys to plain equality (see platform-facts.md, "Agenda 6 and storage").
 */
export function uniqueFilter(unique: Record<string, unknown>): Condition[] {
  const out: Condition[] = [];
  for (const [key, value] of Object.entries(unique)) {
    if (key.startsWith("$") || isOperatorObject(value)) {
      throw new ValidationError(`unique() key "${key}" uses a query operator; the SQLite backend supports equality only`);
    }
    if (key === "data") {
      out.push(...dataFilter(value));
      continue;
    }
    if (key.startsWith("data.")) {
      if (isPlainObject(value)) {
        throw new ValidationError(`unique() key "${key}" must compare a scalar value, got an object; name the nested path instead`);
      }
      out.push(dataPathEquals(key.slice("data.".length), value));
      continue;
    }
    const column = FIELD_TO_COLUMN[key];
    if (!column) throw new ValidationError(`unique() key "${key}" is not a job field or a data.* path`);
    let bound: unknown = value;
    if (DATE_COLUMNS.has(column)) bound = toMs(value);
    else if (typeof value === "boolean") bound = value ? 1 : 0;
    else if (value !== null && value !== undefined && typeof value === "object") {
      throw new ValidationError(`unique() key "${key}" must compare a scalar value`);
    }
    out.push({ sql: `"${column}" IS ?`, params: [bound ?? null] });
  }
  return out;
}

/**
 * Filter of `removeJobs` / `disableJobs` / `enableJobs`, or null when the options name nothing
 * (MongoBackend then touches no job rather than all of them).
 */
export function removeFilter(options: RemoveJobsOptions): Condition[] | null {
  const out: Condition[] = [];
  if (options.id) out.push({ sql: "id = ?", params: [String(options.id)] });
  else if (Array.isArray(options.ids) && options.ids.length > 0) out.push(inList("id", options.ids.map(String)));

  if (options.name && typeof options.name === "string") out.push({ sql: "name = ?", params: [options.name] });
  else if (Array.isArray(options.names) && options.names.some((n) => typeof n === "string")) {
    out.push(inList("name", options.names.filter((n) => typeof n === "string")));
  } else if (Array.isArray(options.notNames) && options.notNames.some((n) => typeof n === "string")) {
    const list = inList("name", options.notNames.filter((n) => typeof n === "string"));
    out.push({ sql: `NOT (${list.sql})`, params: list.params });
  }
  if (options.data !== undefined) out.push(...dataFilter(options.data));
  return out.length > 0 ? out : null;
}

/** `column IN (…)` with one JSON-array parameter, whatever the list length. */
export function inList(column: string, values: readonly string[]): Condition {
  return { sql: `"${column}" IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] };
}

export function where(conditions: readonly Condition[]): Condition {
  if (conditions.length === 0) return { sql: "", params: [] };
  return { sql: "WHERE " + conditions.map((c) => `(${c.sql})`).join(" AND "), params: conditions.flatMap((c) => c.params) };
}

const dir = (d: SortDirection): string => (d === "asc" ? "ASC" : "DESC");

/** ORDER BY of queryJobs; MongoBackend's default is newest `nextRunAt`, then newest `lastRunAt`. */
export function orderBy(sort: JobsSort | undefined): string {
  const parts: string[] = [];
  if (sort?.nextRunAt) parts.push(`next_run_at ${dir(sort.nextRunAt)}`);
  if (sort?.lastRunAt) parts.push(`last_run_at ${dir(sort.lastRunAt)}`);
  if (sort?.lastFinishedAt) parts.push(`last_finished_at ${dir(sort.lastFinishedAt)}`);
  if (sort?.priority) parts.push(`priority ${dir(sort.priority)}`);
  if (sort?.name) parts.push(`name ${dir(sort.name)}`);
  if (sort?.data) parts.push(`data ${dir(sort.data)}`);
  if (parts.length === 0) parts.push("next_run_at DESC", "last_run_at DESC");
  // Insertion order breaks ties, like MongoDB's natural order.
  parts.push("rowid ASC");
  return "ORDER BY " + parts.join(", ");
}
