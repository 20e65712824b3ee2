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

/** The WHATWG URL parser's canonical (compressed, lower-case) form of an IPv6 address, or null. */
function canonicalIPv6(address: string): string | null {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}
