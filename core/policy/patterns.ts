/**
 * Grant patterns: the explicit set of actions a grant covers, stated on the card in words.
 *
 * - *Approve once* grants the exact descriptor: same tool, capability, method, targets and digest
 *   (so the same body, headers, query, file content), for one execution.
 * - Wider scopes (this task, this session, 24 h, always) grant a pattern that keeps tool,
 *   capability and method fixed and keeps each target fixed, leaving only the payload open:
 *   - a write to a URL: that scheme, host, port and **exact path**, any body or query
 *     ("POST requests to api.example.com/notes");
 *   - a read of a URL: that scheme, host and port, any path ("GET anything on news.example");
 *   - a file: that very file, any content ("WRITE to the file notes.txt");
 *   - recipients: exactly those recipients.
 *   A pattern never widens the method, never widens a write's path, never names another file.
 *
 * `patternCovers` is the only matcher; `test/core/policy/patterns.property.test.ts` checks it
 * against random descriptors and random grants.
 */
import { z } from "zod";
import { targetKey, type ActionDescriptor, type ActionTarget } from "./descriptor.js";

/** One target a pattern allows. `paths: "any"` (reads only) allows every path on that origin. */
export type TargetPattern =
  | { kind: "url"; scheme: "http" | "https"; host: string; port: number; path: string; paths: "exact" | "any" }
  | { kind: "file"; path: string }
  | { kind: "recipient"; address: string }
  | { kind: "other"; value: string };

/** What a grant covers. `digest: null` leaves the payload open (wider scopes only). */
export type GrantPattern = {
  v: 1;
  tool: string;
  capability: string;
  method: string;
  /** Every target of a covered action must match one of these; an action without targets needs `[]`. */
  targets: TargetPattern[];
  digest: string | null;
};

/** How wide a pattern is: exactly one action, or the action with any payload (see module doc). */
export type Breadth = "exact" | "payload";

const targetPatternSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("url"), scheme: z.enum(["http", "https"]), host: z.string().min(1), port: z.number().int().min(1).max(65535), path: z.string().startsWith("/"), paths: z.enum(["exact", "any"]) }).strict(),
  z.object({ kind: z.literal("file"), path: z.string().min(1) }).strict(),
  z.object({ kind: z.literal("recipient"), address: z.string().min(1) }).strict(),
  z.object({ kind: z.literal("other"), value: z.string() }).strict(),
]);

/** Parses a stored pattern; anything else (a legacy grant without one) is `null` and covers nothing. */
export const grantPatternSchema = z
  .object({
    v: z.literal(1),
    tool: z.string().min(1),
    capability: z.string().min(1),
    method: z.string().min(1),
    targets: z.array(targetPatternSchema),
    digest: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
  })
  .strict();

/** Reads a stored pattern (JSON); null when missing or malformed (fail closed: covers nothing). */
export function parseGrantPattern(value: unknown): GrantPattern | null {
  const parsed = grantPatternSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

function targetPatternOf(target: ActionTarget, access: "read" | "write", breadth: Breadth): TargetPattern | null {
  switch (target.kind) {
    case "url":
      return { kind: "url", scheme: target.scheme, host: target.host, port: target.port, path: target.path, paths: breadth === "payload" && access === "read" ? "any" : "exact" };
    case "file":
      return { kind: "file", path: target.path };
    case "recipient":
      return { kind: "recipient", address: target.address };
    case "other":
      return { kind: "other", value: target.value };
    case "blocked":
      return null;
  }
}

/**
 * The pattern a card offers for `descriptor`: `exact` for *Approve once*, `payload` for the wider
 * scopes. Returns null when the action cannot be granted at all (a blocked target).
 */
export function patternFor(descriptor: ActionDescriptor, breadth: Breadth): GrantPattern | null {
  const targets: TargetPattern[] = [];
  for (const t of descriptor.targets) {
    const p = targetPatternOf(t, descriptor.access, breadth);
    if (p === null) return null;
    targets.push(p);
  }
  return { v: 1, tool: descriptor.tool, capability: descriptor.capability, method: descriptor.method, targets, digest: breadth === "exact" ? descriptor.digest : null };
}

function targetCovered(p: TargetPattern, t: ActionTarget): boolean {
  switch (t.kind) {
    case "url":
      return p.kind === "url" && p.scheme === t.scheme && p.host === t.host && p.port === t.port && (p.paths === "any" || p.path === t.path);
    case "file":
      return p.kind === "file" && p.path === t.path;
    case "recipient":
      return p.kind === "recipient" && p.address === t.address;
    case "other":
      return p.kind === "other" && p.value === t.value;
    case "blocked":
      return false;
  }
}

/**
 * True when `pattern` covers the action `d`. Tool, capability and method must be equal; a pattern
 * with a digest needs the same digest *and* exactly the same targets; an open pattern needs every
 * target of `d` covered by one of its targets, and `d` to have at least one target when the
 * pattern has any (an action without targets is covered only by a target-less pattern).
 */
export function patternCovers(pattern: GrantPattern, d: ActionDescriptor): boolean {
  if (pattern.tool !== d.tool || pattern.capability !== d.capability || pattern.method !== d.method) return false;
  if (d.targets.some((t) => t.kind === "blocked")) return false;
  if (pattern.digest !== null) {
    if (pattern.digest !== d.digest) return false;
    if (pattern.targets.length !== d.targets.length) return false;
    return d.targets.every((t, i) => {
      const p = pattern.targets[i]!;
      return targetCovered(p, t) && (p.kind !== "url" || p.paths === "exact");
    });
  }
  if (d.targets.length === 0) return pattern.targets.length === 0;
  if (pattern.targets.length === 0) return false;
  return d.targets.every((t) => pattern.targets.some((p) => targetCovered(p, t)));
}

/** Upper-case method → the verb a person reads on the card. */
const VERBS: Record<string, string> = {
  GET: "read",
  HEAD: "check",
  POST: "send data to",
  PUT: "replace data at",
  PATCH: "change data at",
  DELETE: "delete",
  READ: "read",
  LIST: "list",
  WRITE: "write",
  SEND: "send",
  SUBMIT: "submit a form to",
  CLICK: "click on",
};

/** The -ing form of each verb of {@link VERBS} ("sending data to"), for "Always allow sending data to …". */
const GERUNDS: Record<string, string> = { read: "reading", check: "checking", send: "sending", replace: "replacing", change: "changing", delete: "deleting", list: "listing", write: "writing", submit: "submitting", click: "clicking" };

/**
 * A method as an -ing phrase with its destination: `methodGerund("POST", "shop.example")` →
 * "sending data to shop.example"; an unknown method as "using METHOD on …".
 */
export function methodGerund(method: string, where = ""): string {
  const verb = VERBS[method];
  if (verb === undefined) return `using ${method}${where ? ` on ${where}` : ""}`;
  const [first = "", ...rest] = verb.split(" ");
  return [GERUNDS[first] ?? first, ...rest, ...(where ? [where] : [])].join(" ");
}

/** The method in words: `send data to (POST)`. Unknown methods are shown as they are. */
export function methodInWords(method: string): string {
  const verb = VERBS[method];
  return verb === undefined ? method : `${verb} (${method})`;
}

/**
 * A method as words a person reads, capitalised, with the destination after its preposition:
 * `("POST", "api.example.com/notes")` → "Send data (POST) to api.example.com/notes"; without a
 * destination the preposition is left out ("Send data (POST)"). Unknown methods are kept as they are.
 */
export function methodPhrase(method: string, where = ""): string {
  const verb = VERBS[method];
  if (verb === undefined) return `${method}${where ? ` ${where}` : ""}`;
  const [, base = verb, prep = ""] = /^(.*?)(?: (to|at|on))?$/.exec(verb) ?? [];
  const phrase = `${base} (${method})${where ? `${prep ? ` ${prep}` : ""} ${where}` : ""}`;
  return phrase.charAt(0).toUpperCase() + phrase.slice(1);
}

/**
 * `api.example.com/notes`: host, `:port` only when it is not the scheme's default, path; plain
 * (unencrypted) http is said in words, since a grant for https does not cover it.
 */
export function hostPath(t: { scheme: "http" | "https"; host: string; port: number; path: string }, withPath = true): string {
  const port = (t.scheme === "https" && t.port === 443) || (t.scheme === "http" && t.port === 80) ? "" : `:${t.port}`;
  return `${t.host}${port}${withPath ? t.path : ""}${t.scheme === "http" ? " (plain http)" : ""}`;
}

function targetPatternWords(p: TargetPattern): string {
  switch (p.kind) {
    case "url":
      return p.paths === "any" ? `anything on ${hostPath(p, false)}` : hostPath(p);
    case "file":
      return `the file ${p.path}`;
    case "recipient":
      return p.address;
    case "other":
      return p.value;
  }
}

/**
 * The pattern in words, as the card states it: "POST requests to api.example.com/notes (any
 * body)", "GET anything on news.example", "WRITE to the file notes.txt (any content)",
 * "exactly this http_request". Hosts appear in their ASCII (punycode) form.
 */
export function describePattern(p: GrantPattern): string {
  if (p.digest !== null) return `exactly this ${p.method} (${p.tool}), once`;
  const where = p.targets.map(targetPatternWords);
  const list = where.length === 0 ? "" : where.length === 1 ? where[0]! : `${where.slice(0, -1).join(", ")} and ${where.at(-1)!}`;
  const url = p.targets.find((t) => t.kind === "url");
  if (url?.kind === "url") {
    return url.paths === "any" ? `${p.method} ${list}` : `${p.method} requests to ${list} (any body or query)`;
  }
  if (p.targets.some((t) => t.kind === "file")) return `${p.method} to ${list} (any content)`;
  if (p.targets.length === 0) return `${p.tool} (${p.method}) with any arguments`;
  return `${p.method} to ${list} (any content)`;
}

/** True when two descriptors describe the very same action. */
export function sameAction(a: ActionDescriptor, b: ActionDescriptor): boolean {
  return (
    a.tool === b.tool &&
    a.capability === b.capability &&
    a.method === b.method &&
    a.digest === b.digest &&
    a.targets.length === b.targets.length &&
    a.targets.every((t, i) => targetKey(t) === targetKey(b.targets[i]!))
  );
}
