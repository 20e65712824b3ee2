/**
 * Header lines of a message, in the order they appear (topmost first) — the shape of mailparser's
 * `ParsedMail.headerLines` — and small readers over them used by the loop rules (automatic.ts)
 * and sender verification (verify.ts). Pure.
 */

/** One header as mailparser gives it: `key` is the lowercase name, `line` the raw (possibly folded) line. */
export interface HeaderLine {
  key: string;
  line: string;
}

/** All header lines of a message, topmost first. */
export type HeaderLines = ReadonlyArray<HeaderLine>;

/** Longest header value read (characters); longer values are cut. */
export const MAX_HEADER_CHARS = 16_384;

/** The unfolded value of one header line (after the first ":"), trimmed and capped. */
export function valueOf(line: HeaderLine): string {
  const colon = line.line.indexOf(":");
  const raw = colon >= 0 ? line.line.slice(colon + 1) : "";
  return raw.slice(0, MAX_HEADER_CHARS).replace(/\r?\n[ \t]+/g, " ").trim();
}

/** Every value of header `name` (case-insensitive), topmost first. */
export function headerValues(headers: HeaderLines, name: string): string[] {
  const key = name.toLowerCase();
  return headers.filter((h) => h.key.toLowerCase() === key).map(valueOf);
}

/** The topmost value of header `name`, or null. */
export function headerValue(headers: HeaderLines, name: string): string | null {
  return headerValues(headers, name)[0] ?? null;
}

/**
 * Splits a raw header section (everything up to the first empty line; the rest is ignored) into
 * header lines, continuation lines joined to their header. For tests and tools; the connector
 * has mailparser's `headerLines`.
 */
export function parseHeaderBlock(raw: string): HeaderLine[] {
  const end = raw.search(/\r?\n\r?\n/);
  const block = end >= 0 ? raw.slice(0, end) : raw;
  const out: HeaderLine[] = [];
  for (const physical of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(physical) && out.length > 0) out[out.length - 1]!.line += `\r\n${physical}`;
    else if (physical.includes(":")) out.push({ key: physical.slice(0, physical.indexOf(":")).trim().toLowerCase(), line: physical });
  }
  return out;
}

/**
 * The addresses (addr-spec, lowercased) in an address header value: those in angle brackets, or
 * else the bare ones; quoted display names and comments are skipped. `"Doe, Jane" <jane@x.example>`
 * → `["jane@x.example"]`.
 */
export function addressesIn(value: string): string[] {
  const text = value.replace(/"(?:[^"\\]|\\.)*"/g, " ").replace(/\((?:[^()\\]|\\.)*\)/g, " ");
  const bracketed = [...text.matchAll(/<([^<>\s]*@[^<>\s]*)>/g)].map((m) => m[1]!);
  const found = bracketed.length > 0 ? bracketed : [...text.matchAll(/[^\s<>,;:]+@[^\s<>,;:]+/g)].map((m) => m[0]);
  return found.map((a) => a.toLowerCase().replace(/^mailto:/, ""));
}

/** The message ids (`<…>`) in a Message-ID, In-Reply-To or References value, in order. */
export function messageIdsIn(value: string): string[] {
  return [...value.matchAll(/<[^<>\s]+>/g)].map((m) => m[0]);
}

/** The domain of an address, lowercased ("" when there is none). */
export function domainOf(address: string): string {
  const at = address.lastIndexOf("@");
  return at >= 0 ? address.slice(at + 1).toLowerCase().replace(/\.$/, "") : "";
}
