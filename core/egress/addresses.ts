/**
 * Classifies IP addresses for the egress guard with `ipaddr.js` (its special-range tables follow
 * the IANA IPv4/IPv6 special-purpose address registries). Only ordinary public unicast addresses
 * pass; everything else — loopback, RFC 1918 private, ULA fc00::/7, link-local, CGNAT 100.64/10,
 * multicast, unspecified, broadcast, reserved, documentation and benchmarking ranges, 6to4, Teredo —
 * is refused, and so are IPv6 forms that embed an IPv4 address which is itself not public
 * (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`).
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** Cloud instance-metadata endpoints (AWS/GCP/Azure/OpenStack, AWS IPv6, Alibaba Cloud). Never reachable. */
export const METADATA_ADDRESSES: readonly string[] = ["169.254.169.254", "fd00:ec2::254", "100.100.100.200"];

/** Verdict on one address: `public`, or refused with the range it falls in. */
export type AddressVerdict =
  | { public: true; address: string }
  | { public: false; address: string; code: "private_address" | "metadata_address"; range: string };

const metadata = new Set(METADATA_ADDRESSES.map((a) => ipaddr.parse(a).toNormalizedString()));

/** True when `host` is an IP literal (IPv6 with or without brackets). */
export function isIpLiteral(host: string): boolean {
  return isIP(stripBrackets(host)) !== 0;
}

/**
 * Classifies one IP address (IPv6 may be in brackets, may carry a zone id).
 * An unparseable string is refused as `private_address` with range `invalid`: fail closed.
 */
export function classifyAddress(text: string): AddressVerdict {
  const raw = stripBrackets(text);
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(raw);
  } catch {
    return { public: false, address: text, code: "private_address", range: "invalid" };
  }
  if (parsed.kind() === "ipv4") return classifyV4(parsed as ipaddr.IPv4, raw);
  return classifyV6(parsed as ipaddr.IPv6, raw);
}

function classifyV4(v4: ipaddr.IPv4, shown: string, via = ""): AddressVerdict {
  if (metadata.has(v4.toNormalizedString())) {
    return { public: false, address: shown, code: "metadata_address", range: `${via}cloud metadata` };
  }
  const range = v4.range();
  if (range === "unicast") return { public: true, address: shown };
  return { public: false, address: shown, code: "private_address", range: via + range };
}

function classifyV6(v6: ipaddr.IPv6, shown: string): AddressVerdict {
  if (metadata.has(v6.toNormalizedString())) {
    return { public: false, address: shown, code: "metadata_address", range: "cloud metadata" };
  }
  const parts = v6.parts;
  const range = v6.range();
  if (range === "ipv4Mapped") return classifyV4(embeddedV4(v6), shown, "IPv4-mapped ");
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052) — the local-use /48 of RFC 8215 is refused below.
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((p) => p === 0)) {
    return classifyV4(embeddedV4(v6), shown, "NAT64 ");
  }
  // Deprecated IPv4-compatible ::a.b.c.d (RFC 4291 §2.5.5.1): first 96 bits zero, not :: or ::1.
  if (parts.slice(0, 6).every((p) => p === 0) && range !== "unspecified" && range !== "loopback") {
    return { public: false, address: shown, code: "private_address", range: "IPv4-compatible" };
  }
  if (range === "unicast") return { public: true, address: shown };
  return { public: false, address: shown, code: "private_address", range };
}

function embeddedV4(v6: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = v6.toByteArray().slice(12);
  return new ipaddr.IPv4(bytes);
}

function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
