/**
 * Pulls a call's destinations and data-carrying arguments out of its validated arguments, following
 * the tool's {@link ToolPolicy}. URLs are normalized to origins and prechecked by the egress guard
 * (no DNS), so a `file://` or `http://169.254.169.254/` destination is already `blocked` when
 * Sentinel decides — before anything is attempted.
 */
import { EgressDeniedError } from "./errors.js";
import type { Destination, ToolPolicy } from "./types.js";

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
        if (Array.isArray(child)) next.push(...child);
      } else next.push(child);
    }
    current = next;
  }
  return current;
}

/** Classifies one destination value. */
export function classifyDestination(value: string, egress: UrlPrecheck): Destination {
  const trimmed = value.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !/^[^:@\s]+@/.test(trimmed)) {
    try {
      const url = egress.precheck(trimmed);
      return { kind: "url", origin: url.origin, host: url.hostname.toLowerCase(), url: url.href };
    } catch (error) {
      if (error instanceof EgressDeniedError) return { kind: "blocked", value: error.url, reason: error.reason, code: error.code };
      throw error;
    }
  }
  if (trimmed.includes("@")) return { kind: "recipient", value: trimmed.toLowerCase() };
  return { kind: "other", value: trimmed };
}

/** The call's destinations, in argument order, duplicates removed. */
export function extractDestinations(policy: ToolPolicy, args: unknown, egress: UrlPrecheck): Destination[] {
  const out: Destination[] = [];
  const seen = new Set<string>();
  for (const path of policy.destinationArgs) {
    for (const value of valuesAt(args, path)) {
      if (typeof value !== "string" || value.trim() === "") continue;
      const destination = classifyDestination(value, egress);
      const key = JSON.stringify(destination);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(destination);
      }
    }
  }
  return out;
}

/**
 * True when the call can carry data out: it has a destination (a URL's path and query can carry
 * data too) or a non-empty data-carrying argument.
 */
export function carriesData(policy: ToolPolicy, args: unknown, destinations: readonly Destination[]): boolean {
  if (destinations.length > 0) return true;
  return policy.exfiltrationArgs.some((path) =>
    valuesAt(args, path).some((v) => (typeof v === "string" ? v.length > 0 : v !== undefined && v !== null)),
  );
}

/** A short label of a destination for cards and audit lines. */
export function describeDestination(d: Destination): string {
  switch (d.kind) {
    case "url":
      return d.origin;
    case "blocked":
      return `${d.value} (blocked: ${d.reason})`;
    default:
      return d.value;
  }
}
