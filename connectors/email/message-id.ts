/**
 * Familiar's own Message-IDs: minted in one recognisable pattern, so mail that is ours — or that
 * answers ours (In-Reply-To, References) — is recognised and never answered again (field case E1).
 *
 * Pattern: `<familiar.<time base36>.<16 base32 characters>@<sender's domain>>`, 80 random bits.
 */
import { randomBytes } from "node:crypto";

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const PATTERN = /^<?familiar\.[0-9a-z]{6,12}\.[a-z2-7]{16}@[^\s<>@]+>?$/i;
const ANYWHERE = /<familiar\.[0-9a-z]{6,12}\.[a-z2-7]{16}@[^\s<>@]+>/gi;

function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** A new Message-ID (angle brackets included) for mail sent from `domain` at `now`. */
export function mintMessageId(domain: string, now: Date): string {
  return `<familiar.${now.getTime().toString(36)}.${base32(randomBytes(10))}@${domain.toLowerCase()}>`;
}

/** Whether `id` (with or without angle brackets) is one Familiar minted. */
export function isFamiliarMessageId(id: string): boolean {
  return PATTERN.test(id.trim());
}

/** Familiar's Message-IDs anywhere in a header value (In-Reply-To, References). */
export function familiarIdsIn(value: string): string[] {
  return value.match(ANYWHERE) ?? [];
}
