/**
 * Action descriptors: what a tool call *does*, derived by Sentinel from the validated arguments and
 * the tool's {@link ToolPolicy} — never from the model's words. A grant is bound to a descriptor (or
 * to an explicit pattern over descriptors, see `patterns.ts`), so approving one action never covers
 * another method, another path, another file or another payload.
 *
 * A descriptor has:
 * - `tool`, `capability`, `access`;
 * - `method`: the verb in capitals — an HTTP method (`GET`, `POST`, …) taken from an argument, or a
 *   fixed verb the tool declares (`WRITE` a file, `SUBMIT` a browser form, `SEND` an email);
 * - `targets`: the normalised destinations, in argument order — a URL as scheme, host (lower case,
 *   IDN as punycode), port (default filled in) and path (dot segments resolved); a workspace file
 *   as its normalised relative path; a recipient address in lower case;
 * - `digest`: SHA-256 (hex) of everything else that shapes the effect: every argument, with URLs in
 *   their normalised form, header names in lower case, object keys sorted. Secret references stay
 *   references (`{{secret:NAME}}`): the digest never sees a secret value.
 *
 * The descriptor is general on purpose: the browser (form submits, clicks that post) and any future
 * connector describe their actions with the same shape by declaring `method`, `destinationArgs`,
 * `fileArgs` and `headerArgs` in their policy.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { EgressDeniedError } from "../egress/index.js";
import type { ToolPolicy } from "../tools/index.js";

/** One normalised destination of an action. */
export type ActionTarget =
  | { kind: "url"; scheme: "http" | "https"; host: string; port: number; path: string; /** full normalised URL (query included), for cards */ href: string }
  | { kind: "file"; path: string }
  | { kind: "recipient"; address: string }
  | { kind: "other"; value: string }
  | { kind: "blocked"; value: string; reason: string; code: string };

/** What one tool call does, as Sentinel judges and grants it. */
export type ActionDescriptor = {
  v: 1;
  tool: string;
  capability: string;
  access: "read" | "write";
  /** Upper-case verb: `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `READ`, `WRITE`, `LIST`, `SUBMIT`, … */
  method: string;
  targets: ActionTarget[];
  /** SHA-256 hex of the canonical effect (all arguments, normalised). */
  digest: string;
};

/** Something that prechecks URLs without DNS (the {@link EgressGuard}). */
export interface UrlPrecheck {
  precheck(raw: string): URL;
}

/**
 * Values at a dot path: `url`, `message.to`, `to[]` (every element), `to[].address`.
 * Missing parts yield nothing.
 */
export function valuesAt(args: unknown, path: string): unknown[] {
  let current: unknown[] = [args];
  for (const part of path.split(".")) {
    const spread = part.endsWith("[]");
    const key = spread ? part.slice(0, -2) : part;
    const next: unknown[] = [];
    for (const value of current) {
      if (value === null || typeof value !== "object") continue;
      const child = (value as Record<string, unknown>)[key];
      if (child === undefined || child === null) continue;
      if (spread) {
        if (Array.isArray(child)) next.push(...(child as unknown[]));
      } else next.push(child);
    }
    current = next;
  }
  return current;
}

/** Default port of a scheme. */
function defaultPort(scheme: "http" | "https"): number {
  return scheme === "https" ? 443 : 80;
}

/** A URL target from a parsed URL (already checked by the egress precheck). */
export function urlTarget(url: URL): Extract<ActionTarget, { kind: "url" }> {
  const scheme = url.protocol === "https:" ? "https" : "http";
  const port = url.port === "" ? defaultPort(scheme) : Number(url.port);
  // WHATWG parsing already resolved dot segments and percent-encoded what needs it; the fragment
  // never reaches the server, so it is no part of the action.
  const href = new URL(url.href);
  href.hash = "";
  return { kind: "url", scheme, host: url.hostname.toLowerCase(), port, path: url.pathname || "/", href: href.href };
}

/** Classifies one destination value: a URL (prechecked), a recipient address, or another value. */
export function classifyTarget(value: string, egress: UrlPrecheck): ActionTarget {
  const trimmed = value.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !/^[^:@\s]+@/.test(trimmed)) {
    try {
      return urlTarget(egress.precheck(trimmed));
    } catch (error) {
      if (error instanceof EgressDeniedError) return { kind: "blocked", value: error.url, reason: error.reason, code: error.code };
      throw error;
    }
  }
  if (trimmed.includes("@")) return { kind: "recipient", address: trimmed.toLowerCase() };
  return { kind: "other", value: trimmed };
}

/**
 * A workspace path in its one spelling: POSIX separators, `.` and `..` resolved, no leading `./`
 * or trailing `/`. (`notes/../a.txt` and `./a.txt` are the same file `a.txt`.) The workspace's own
 * path jail still refuses paths that leave it; this only names the file.
 */
export function normaliseFilePath(path: string): string {
  const unified = path.replace(/\\/g, "/");
  let out = posix.normalize(unified);
  if (out.startsWith("./")) out = out.slice(2);
  if (out.length > 1 && out.endsWith("/")) out = out.slice(0, -1);
  return out === "" ? "." : out;
}

/** The targets of a call, in argument order, duplicates removed. */
export function extractTargets(policy: ToolPolicy, args: unknown, egress: UrlPrecheck): ActionTarget[] {
  const out: ActionTarget[] = [];
  const seen = new Set<string>();
  const add = (target: ActionTarget) => {
    const key = targetKey(target);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(target);
  };
  for (const path of policy.destinationArgs) {
    for (const value of valuesAt(args, path)) if (typeof value === "string" && value.trim() !== "") add(classifyTarget(value, egress));
  }
  for (const path of policy.fileArgs ?? []) {
    for (const value of valuesAt(args, path)) if (typeof value === "string") add({ kind: "file", path: normaliseFilePath(value) });
  }
  return out;
}

/** A stable string for one target (used for equality and de-duplication). */
export function targetKey(target: ActionTarget): string {
  switch (target.kind) {
    case "url":
      return `url:${target.scheme}://${target.host}:${target.port}${target.path}`;
    case "file":
      return `file:${target.path}`;
    case "recipient":
      return `recipient:${target.address}`;
    case "other":
      return `other:${target.value}`;
    case "blocked":
      return `blocked:${target.value}`;
  }
}

/** The verb of a call: the policy's fixed verb, its method argument, or READ / WRITE by access. */
export function methodOf(policy: ToolPolicy, args: unknown): string {
  const m = policy.method;
  if (m !== undefined && "fixed" in m) return m.fixed.toUpperCase();
  if (m !== undefined && "arg" in m) {
    const value = valuesAt(args, m.arg)[0];
    if (typeof value === "string" && value.trim() !== "") return value.trim().toUpperCase();
    return (m.default ?? (policy.access === "read" ? "READ" : "WRITE")).toUpperCase();
  }
  return policy.access === "read" ? "READ" : "WRITE";
}

/**
 * JSON with object keys sorted (arrays keep their order), so equal values always serialise alike.
 * `undefined` members are dropped as JSON does.
 */
export function canonicalJson(value: unknown): string {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object" && !(v instanceof Date)) {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return Object.fromEntries(entries.map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return JSON.stringify(walk(value)) ?? "null";
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Replaces the value at a dot path (no `[]` support needed: used for top-level and nested keys). */
function mapAt(args: unknown, path: string, fn: (value: unknown) => unknown): unknown {
  const parts = path.split(".");
  const visit = (value: unknown, i: number): unknown => {
    if (value === null || typeof value !== "object") return value;
    const part = parts[i]!;
    const spread = part.endsWith("[]");
    const key = spread ? part.slice(0, -2) : part;
    const record = value as Record<string, unknown>;
    if (!(key in record)) return value;
    const child = record[key];
    let next: unknown;
    if (spread) next = Array.isArray(child) ? child.map((c) => (i === parts.length - 1 ? fn(c) : visit(c, i + 1))) : child;
    else next = i === parts.length - 1 ? fn(child) : visit(child, i + 1);
    return Array.isArray(value) ? value : { ...record, [key]: next };
  };
  return visit(args, 0);
}

/**
 * The canonical effect of a call: the arguments with URLs normalised, file paths normalised and
 * header names lower-cased. Its SHA-256 is the descriptor's digest.
 */
export function canonicalEffect(policy: ToolPolicy, args: unknown, egress: UrlPrecheck): unknown {
  let effect = args;
  for (const path of policy.destinationArgs) {
    effect = mapAt(effect, path, (v) => {
      if (typeof v !== "string") return v;
      const t = classifyTarget(v, egress);
      return t.kind === "url" ? t.href : targetKey(t);
    });
  }
  for (const path of policy.fileArgs ?? []) effect = mapAt(effect, path, (v) => (typeof v === "string" ? normaliseFilePath(v) : v));
  for (const path of policy.headerArgs ?? []) {
    effect = mapAt(effect, path, (v) =>
      v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toLowerCase(), x])) : v,
    );
  }
  for (const path of policy.method && "arg" in policy.method ? [policy.method.arg] : []) {
    effect = mapAt(effect, path, (v) => (typeof v === "string" ? v.trim().toUpperCase() : v));
  }
  return effect;
}

/**
 * Derives the descriptor of a call from its validated arguments.
 * Throws nothing for odd arguments: unknown shapes simply become part of the digest.
 */
export function describeAction(tool: { name: string }, policy: ToolPolicy, args: unknown, egress: UrlPrecheck): ActionDescriptor {
  return {
    v: 1,
    tool: tool.name,
    capability: policy.capability,
    access: policy.access,
    method: methodOf(policy, args),
    targets: extractTargets(policy, args, egress),
    digest: sha256(canonicalJson(canonicalEffect(policy, args, egress))),
  };
}

/** A stable key of a whole descriptor (equal keys: the very same action). */
export function descriptorKey(d: ActionDescriptor): string {
  return sha256(canonicalJson({ tool: d.tool, capability: d.capability, access: d.access, method: d.method, targets: d.targets.map(targetKey), digest: d.digest }));
}

/**
 * True when the call can carry data out: it has a destination (a URL's path and query can carry
 * data too) or a non-empty data-carrying argument.
 */
export function carriesData(policy: ToolPolicy, args: unknown, targets: readonly ActionTarget[]): boolean {
  if (targets.some((t) => t.kind !== "file")) return true;
  return policy.exfiltrationArgs.some((path) => valuesAt(args, path).some((v) => (typeof v === "string" ? v.length > 0 : v !== undefined && v !== null)));
}

/** A short label of a target for audit lines: `POST https://api.example.com/notes`, `file notes.txt`. */
export function describeTarget(t: ActionTarget): string {
  switch (t.kind) {
    case "url":
      return t.href;
    case "file":
      return `file ${t.path}`;
    case "recipient":
      return t.address;
    case "other":
      return t.value;
    case "blocked":
      return `${t.value} (blocked: ${t.reason})`;
  }
}

/**
 * The descriptor of a call a describing tool described (ToolPolicy.describe, action.ts): its
 * capability, method and destinations, and the tool's own digest of what shapes the effect (the
 * page, the element, the fields), so "Approve once" covers exactly that action on that page.
 */
export function describedAction(tool: { name: string }, described: { capability: string; access: "read" | "write"; method: string; destinations: string[]; digest: string }, egress: UrlPrecheck): ActionDescriptor {
  const targets: ActionTarget[] = [];
  const seen = new Set<string>();
  for (const value of described.destinations) {
    const t = classifyTarget(value, egress);
    if (seen.has(targetKey(t))) continue;
    seen.add(targetKey(t));
    targets.push(t);
  }
  return { v: 1, tool: tool.name, capability: described.capability, access: described.access, method: described.method.toUpperCase(), targets, digest: described.digest };
}
