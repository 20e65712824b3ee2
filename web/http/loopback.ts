import { isIPv4, isIPv6 } from "node:net";

/** The setting that opens the local web chat to non-loopback clients. */
export const ALLOW_REMOTE_SETTING = "LOCAL_CHAT_ALLOW_REMOTE";

/**
 * Whether `address` (a socket's remote address as Node reports it) is a loopback address:
 * IPv4 127.0.0.0/8, IPv6 `::1`, or an IPv4-mapped IPv6 address of 127.0.0.0/8 (`::ffff:127.0.0.1`,
 * which is what a dual-stack listener reports for IPv4 clients). Anything unparsable is not loopback.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  if (isIPv4(address)) return address.split(".")[0] === "127";
  if (!isIPv6(address) || address.includes("%")) return false;
  const canonical = canonicalIPv6(address);
  if (canonical === null) return false;
  if (canonical === "::1") return true;
  // IPv4-mapped: the URL parser canonicalizes `::ffff:127.0.0.1` to `::ffff:7f00:1`.
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(canonical);
  return mapped !== null && Number.parseInt(mapped[1] ?? "0", 16) >> 8 === 127;
}

/**
 * Whether a client at `remoteAddress` may use the local chat page and API: loopback clients always,
 * others only when `allowRemote` (the `LOCAL_CHAT_ALLOW_REMOTE` setting) is on. Pass the socket's
 * remote address, never a header a client controls (X-Forwarded-For).
 */
export function isClientAllowed(remoteAddress: string | undefined, allowRemote: boolean): boolean {
  return allowRemote || isLoopbackAddress(remoteAddress);
}

/** True for a host name that can only mean this machine: `localhost`, 127.0.0.0/8 or `[::1]` (port ignored). */
export function isLoopbackHostName(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${hostHeader}/`).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (hostname === "localhost") return true;
  if (hostname.startsWith("[") && hostname.endsWith("]")) return isLoopbackAddress(hostname.slice(1, -1));
  return isLoopbackAddress(hostname);
}

/** What the local page and APIs need to know about a request. */
export interface RequestFacts {
  /** The socket's remote address (never X-Forwarded-For). */
  remoteAddress: string | undefined;
  /** The `Host` header. */
  host: string | undefined;
  /** The `Origin` header, if the browser sent one. */
  origin: string | undefined;
}

/**
 * Whether a request may use the local page and APIs. Unless `allowRemote`, all three must point at
 * this machine: the client address is loopback, the `Host` header names a loopback host (a page that
 * rebinds its own domain to 127.0.0.1 — DNS rebinding — still sends its own name), and an `Origin`,
 * when present, is a loopback origin (a cross-site page cannot post to the API). Returns the reason
 * when refused.
 */
export function checkLocalRequest(facts: RequestFacts, allowRemote: boolean): { ok: true } | { ok: false; reason: string } {
  if (allowRemote) return { ok: true };
  if (!isLoopbackAddress(facts.remoteAddress)) return { ok: false, reason: `only loopback clients may use this; set ${ALLOW_REMOTE_SETTING}=true to allow others` };
  if (!isLoopbackHostName(facts.host)) return { ok: false, reason: "the Host header must name this machine (localhost or 127.0.0.1)" };
  if (facts.origin !== undefined) {
    let originHost: string | null = null;
    try {
      originHost = facts.origin === "null" ? null : new URL(facts.origin).host;
    } catch {
      originHost = null;
    }
    if (!originHost || !isLoopbackHostName(originHost)) return { ok: false, reason: "requests from other sites are refused" };
  }
  return { ok: true };
}

/** `checkLocalRequest` for an express request. */
export function checkExpressRequest(req: { socket: { remoteAddress?: string | undefined }; headers: Record<string, string | string[] | undefined> }, allowRemote: boolean) {
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  return checkLocalRequest({ remoteAddress: req.socket.remoteAddress, host: header("host"), origin: header("origin") }, allowRemote);
}

/** The WHATWG URL parser's canonical (compressed, lower-case) form of an IPv6 address, or null. */
function canonicalIPv6(address: string): string | null {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}
