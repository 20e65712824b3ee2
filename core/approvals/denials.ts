/**
 * What a Deny covers, and when denials trip the breaker (issue 18 item 4).
 *
 * A denial covers the **places** its request would have reached and the **kind** of action:
 * - a place is a site — the registrable domain of a host name (`a.evil.example` and
 *   `b.evil.example` are one place, whatever the port), a public IP address whatever the port
 *   (an IPv4 address written inside IPv6, `::ffff:a.b.c.d`, is that IPv4 address), a loopback or
 *   private address with its port (the person's own services on one machine stay distinct) — or
 *   a workspace file, a recipient address, another named target; an action without targets is
 *   placed at its tool;
 * - the kind is the method class: `read` (GET, HEAD, OPTIONS and other reading verbs, or a tool
 *   that only reads) or `write` (everything else). A denied read also covers writes to the place
 *   (if the person would not let Familiar read there, sending there is no better); a denied write
 *   covers writes only, so a later read of the place may still ask.
 *
 * Another path, query, body, header, verb of the same class or tool reaching a denied place is
 * refused without a card for the rest of the task (recurring work, which lives on: for
 * {@link DENIAL_CARRY_MS} of it), and — for activations that read outside content — for
 * {@link DENIAL_CARRY_MS} after the denial whatever the task; the person's own untainted request
 * to that place asks again (they may have changed their mind).
 *
 * The breaker: {@link MAX_DENIALS_PER_TASK} denials in one task (since the person last wrote), or
 * {@link MAX_DENIALS_PER_PERSON} of the person's denials within {@link BREAKER_WINDOW_MS}, pause
 * the task whose request was denied; the person is told once. While the count holds, further asks
 * (of that task; for the person's count, of any activation that read outside content) are refused
 * without a card and their tasks paused too. Counts start again after a paused task is resumed.
 */
import ipaddr from "ipaddr.js";
import { getDomain } from "tldts";
import type { ActionDescriptor, ActionTarget } from "../policy/index.js";

/** How long a denial keeps covering its places beyond its task, for activations that read outside content, ms. */
export const DENIAL_CARRY_MS = 24 * 60 * 60 * 1000;
/** Denials in one task (since the person last wrote) that trip the breaker. */
export const MAX_DENIALS_PER_TASK = 3;
/** Denials of one person within {@link BREAKER_WINDOW_MS} that trip the breaker. */
export const MAX_DENIALS_PER_PERSON = 5;
/** The window of the person's count, ms. */
export const BREAKER_WINDOW_MS = 60 * 60 * 1000;

/** The method class of an action: `read` or `write`. */
export type MethodClass = "read" | "write";

const READ_VERBS = new Set(["GET", "HEAD", "OPTIONS", "READ", "LIST", "FETCH", "SEARCH", "OPEN", "NAVIGATE", "VIEW"]);

/** The method class of `action` (see module doc). */
export function methodClass(action: Pick<ActionDescriptor, "method" | "access">): MethodClass {
  return action.access === "read" || READ_VERBS.has(action.method.toUpperCase()) ? "read" : "write";
}

/** The place one target reaches (see module doc). */
export function placeOf(target: ActionTarget): string {
  switch (target.kind) {
    case "url": {
      const bare = target.host.replace(/^\[|\]$/g, "");
      if (!ipaddr.isValid(bare)) return getDomain(target.host, { allowPrivateDomains: true }) ?? target.host;
      return ipPlace(ipaddr.process(bare), target.port);
    }
    case "file":
      return `the file ${target.path}`;
    case "recipient":
      return target.address;
    case "other":
      return target.value;
    case "blocked":
      return target.value;
    default:
      return "an unknown place";
  }
}

/** The place of an IP address (module doc): public — the address; otherwise the address and port. */
function ipPlace(address: ipaddr.IPv4 | ipaddr.IPv6, port: number): string {
  const shown = address.kind() === "ipv6" ? `[${address.toNormalizedString()}]` : address.toString();
  return address.range() === "unicast" ? shown : `${shown}:${port}`;
}

/** Every place `action` reaches (its tool when it has no targets). */
export function placesOf(action: Pick<ActionDescriptor, "targets" | "tool">): string[] {
  return action.targets.length === 0 ? [`the tool ${action.tool}`] : [...new Set(action.targets.map(placeOf))];
}

/** The place a denial of `denied` covers in `action`, or null when it covers none of it. */
export function coveredPlace(denied: ActionDescriptor, action: ActionDescriptor): string | null {
  const d = methodClass(denied);
  if (d === "write" && methodClass(action) === "read") return null;
  const places = new Set(placesOf(denied));
  return placesOf(action).find((p) => places.has(p)) ?? null;
}

/** "reading from" / "sending to", for the model's and the person's words. */
export function classWords(kind: MethodClass): string {
  return kind === "read" ? "reading from" : "sending to or changing";
}
