/**
 * Familiar's own Message-IDs: one builder and one parser. Every message Familiar sends carries
 * `<familiar.{24 lowercase base32 characters}@{domain}>` (RFC 5322 §3.6.4 msg-id; the domain is the
 * sending mailbox's), so a mail that is, or answers, one of ours is recognised in any header chain
 * (field case E1: an agent answering itself thousands of times).
 *
 * The parser accepts the pattern with any domain and any case: a Familiar id relayed or rewritten
 * by another server is still ours, and another Familiar's id is a machine too.
 */
import { randomBytes } from "node:crypto";

const PREFIX = "familiar.";
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const pattern = /^<?familiar\.([a-z2-7]{24})@([^<>@\s]+)>?$/i;

/** The parts of one of our Message-IDs. */
export interface FamiliarMessageId {
  /** The 24-character random part (lowercase). */
  token: string;
  domain: string;
}

function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/**
 * A new Message-ID for a message sent from `domain` (e.g. "home.example"), angle brackets included.
 * `random` (15 bytes) is for tests; by default 15 bytes from `crypto.randomBytes` (120 bits).
 * Throws `RangeError` for an empty domain or one with spaces, "@", "<" or ">".
 */
export function mintMessageId(domain: string, random: Uint8Array = randomBytes(15)): string {
  const d = domain.trim().toLowerCase();
  if (!d || /[\s<>@]/.test(d)) throw new RangeError(`mintMessageId: "${domain}" is not a domain`);
  if (random.length < 15) throw new RangeError("mintMessageId: 15 random bytes are needed");
  return `<${PREFIX}${base32(random.subarray(0, 15))}@${d}>`;
}

/** The parts of `id` when it is one of ours (with or without angle brackets), else null. */
export function parseMessageId(id: string): FamiliarMessageId | null {
  const m = pattern.exec(id.trim());
  return m ? { token: m[1]!.toLowerCase(), domain: m[2]!.toLowerCase() } : null;
}

/** True when `id` is one of Familiar's Message-IDs. */
export function isFamiliarMessageId(id: string): boolean {
  return parseMessageId(id) !== null;
}
