/**
 * Whether a shared secret someone chose (a webhook secret token, a signing secret) is too weak to
 * stand between the internet and Familiar. A secret is refused when it is shorter than the minimum,
 * uses fewer than 8 different characters, has one character make up more than a quarter of it,
 * carries less than 3 bits of entropy per character (Shannon entropy of its own characters), or is
 * half or more a run or a sequence (`aaaa`, `abcd`, `1234`, `9876`, `abab`). Random tokens of 16 or more
 * characters from the usual alphabets pass; `aaaaaaaaaaaaaaaa` and `abcdefghijklmnop` do not.
 */

/** Why `value` is too weak, or null when it is acceptable. */
export function weakSecretReason(value: string, minLength = 16): string | null {
  const chars = [...value];
  if (chars.length < minLength) return `it is ${chars.length} characters long; use at least ${minLength} random characters`;
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (counts.size < 8) return `it uses only ${counts.size} different characters; use a random value`;
  const top = Math.max(...counts.values());
  if (top / chars.length > 0.25) return "one character makes up more than a quarter of it; use a random value";
  let entropy = 0;
  for (const n of counts.values()) {
    const p = n / chars.length;
    entropy -= p * Math.log2(p);
  }
  if (entropy < 3) return `it is too predictable (${entropy.toFixed(1)} bits per character); use a random value`;
  if (patterned(chars) / chars.length >= 0.5) return "it is mostly a sequence or a repetition; use a random value";
  return null;
}

/** Characters that belong to a run (3+ neighbours with the same step, |step| ≤ 1) or to an `abab` repetition. */
function patterned(chars: string[]): number {
  const codes = chars.map((c) => c.codePointAt(0)!);
  const marked = new Set<number>();
  for (let i = 2; i < codes.length; i++) {
    const a = codes[i - 2]!;
    const b = codes[i - 1]!;
    const c = codes[i]!;
    const step = b - a;
    if ((Math.abs(step) <= 1 && c - b === step) || c === a) for (const j of [i - 2, i - 1, i]) marked.add(j);
  }
  return marked.size;
}
