/**
 * Sender verification from the receiving server's `Authentication-Results` header. Pure.
 *
 * Rules (issue 21 point 4; field case E4, a forged `dkim=pass` below the real header):
 * - Only the FIRST (topmost) Authentication-Results header counts, and only when its authserv-id
 *   is one of the configured receiving server's ids. Every server on the way prepends its headers,
 *   so anything below the receiving server's header may have been written by the sender
 *   (RFC 8601 §5: the receiving server must also delete incoming headers carrying its own id).
 * - Verified: DMARC `pass` (for the From domain when `header.from` is given), or — when DMARC did
 *   not run — DKIM `pass` whose `header.d` (or `header.i`) domain, or SPF `pass` whose
 *   `smtp.mailfrom` (or `smtp.helo`) domain, is aligned with the From domain in DMARC's relaxed
 *   sense (RFC 7489 §3.1: same organisational domain). A `dmarc=fail` is never overridden.
 * - Organisational domain: the registrable domain by the Public Suffix List (`tldts`, private
 *   section included — `a.github.io` and `b.github.io` are different organisations).
 * - Anything else is unverified, with the reason in words. A verified sender is who the From says;
 *   it authorises nothing by itself.
 */
import { domainToASCII } from "node:url";
import { getDomain } from "tldts";
import { parseAuthenticationResults, type AuthResult } from "./auth-results.js";
import { addressesIn, domainOf, headerValues, type HeaderLines } from "./headers.js";

/** Why a sender is not verified. */
export type UnverifiedReason =
  | "no-authentication-results"
  | "untrusted-authserv-id"
  | "malformed-authentication-results"
  | "no-from"
  | "several-from"
  | "dmarc-failed"
  | "not-aligned"
  | "no-pass";

/** The verdict on a sender. `detail` is plain words for the model and cards (no secrets in headers). */
export type SenderVerdict =
  | { verified: true; method: "dmarc" | "dkim" | "spf"; domain: string; detail: string }
  | { verified: false; reason: UnverifiedReason; domain: string | null; detail: string };

/** Which server's verdicts to trust. */
export interface VerifyOptions {
  /** The receiving server's authserv-id(s), e.g. "mx.home.example" (case-insensitive). */
  authservIds: readonly string[];
}

/** The organisational domain of `domain` (ASCII, lowercase): its registrable domain, or itself when it has none. */
export function organizationalDomain(domain: string): string {
  const ascii = (domainToASCII(domain.toLowerCase().replace(/\.$/, "")) || domain).toLowerCase();
  return getDomain(ascii, { allowPrivateDomains: true }) ?? ascii;
}

function aligned(a: string, b: string): boolean {
  return a !== "" && b !== "" && organizationalDomain(a) === organizationalDomain(b);
}

/** The identity domain a passing DKIM or SPF result vouches for. */
function identityDomain(r: AuthResult): string {
  const p = r.properties;
  if (r.method === "dkim") return (p["header.d"] ?? domainOf(p["header.i"] ?? "")).toLowerCase();
  const mailfrom = p["smtp.mailfrom"] ?? "";
  const d = mailfrom.includes("@") ? domainOf(mailfrom) : mailfrom.toLowerCase();
  return d || (p["smtp.helo"] ?? "").toLowerCase();
}

/** Whether the sender of a message (its header lines, topmost first) is verified. */
export function verifySender(headers: HeaderLines, options: VerifyOptions): SenderVerdict {
  const fromValues = headerValues(headers, "from");
  const fromAddresses = fromValues.flatMap(addressesIn);
  const domain = fromAddresses.length === 1 ? domainOf(fromAddresses[0]!) : null;
  const unverified = (reason: UnverifiedReason, detail: string): SenderVerdict => ({ verified: false, reason, domain, detail });
  if (fromAddresses.length === 0) return unverified("no-from", "the mail has no From address");
  if (fromAddresses.length > 1) return unverified("several-from", "the mail names more than one sender in From");
  const first = headerValues(headers, "authentication-results")[0];
  if (first === undefined) return unverified("no-authentication-results", "the receiving server added no Authentication-Results");
  const parsed = parseAuthenticationResults(first);
  if (!parsed) return unverified("malformed-authentication-results", "the receiving server's Authentication-Results could not be read");
  const trusted = options.authservIds.map((id) => id.trim().toLowerCase());
  if (!trusted.includes(parsed.authservId)) {
    return unverified("untrusted-authserv-id", `the topmost Authentication-Results is from "${parsed.authservId.slice(0, 80)}", not the receiving server`);
  }
  const from = domain!;
  const dmarc = parsed.results.filter((r) => r.method === "dmarc");
  const dmarcPass = dmarc.find((r) => r.result === "pass" && (!r.properties["header.from"] || r.properties["header.from"].toLowerCase().replace(/\.$/, "") === from));
  if (dmarcPass) return { verified: true, method: "dmarc", domain: from, detail: `DMARC passed for ${from}` };
  if (dmarc.some((r) => r.result === "fail")) return unverified("dmarc-failed", `DMARC failed for ${from}`);
  let unaligned: string | null = null;
  for (const method of ["dkim", "spf"] as const) {
    for (const r of parsed.results.filter((x) => x.method === method && x.result === "pass")) {
      const id = identityDomain(r);
      if (aligned(id, from)) return { verified: true, method, domain: from, detail: `${method.toUpperCase()} passed for ${id}, aligned with ${from}` };
      unaligned ??= `${method.toUpperCase()} passed for ${id || "an unnamed domain"}, which is not aligned with the From domain ${from}`;
    }
  }
  if (unaligned) return unverified("not-aligned", unaligned);
  const said = parsed.results.map((r) => `${r.method}=${r.result}`).join(", ") || "none";
  return unverified("no-pass", `no authentication method passed for ${from} (${said})`);
}
