/**
 * Recognises secret-looking text a person types into chat — passwords given as such, API keys and
 * tokens of known shapes, private keys, one-time codes described as such, long random-looking
 * tokens — so it is withheld at inbound: replaced by {@link WITHHELD} in what is stored, logged,
 * shown on cards and sent to the model, and the person is offered the vault's one-time link instead.
 *
 * Tuned for few false positives: ordinary words, numbers, dates, prices, URLs, UUIDs, hashes and
 * camel-case words pass; a password needs the word (password, passcode, PIN, …) right before it.
 */
import type { InboundEvent } from "../channels/index.js";
import { TOKEN_PATTERNS } from "../log/index.js";

/** What replaces withheld text. */
export const WITHHELD = "[secret-looking text withheld]";

/** Kinds of secret-looking text. */
export type SecretTextKind = "password" | "api_key" | "private_key" | "one_time_code" | "token";

/** One finding: `[start, end)` character offsets in the text. */
export interface SecretTextFinding {
  kind: SecretTextKind;
  start: number;
  end: number;
}

const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;
/** "my password is X", "password: X", "pw for the bank = X", "PIN is 4821", "passphrase 'X'". */
const PASSWORD_WORD = String.raw`\b(?:pass(?:word|code|phrase)|passwd|pwd|pw|pin|kennwort|passwort|mot de passe|contraseña|пароль)\b`;
const PASSWORD = new RegExp(String.raw`${PASSWORD_WORD}(?:\s+(?:for|to|of|on|at)(?:\s+[^\s:=]{1,40}){1,3})?\s*(?:is now|will be|is|was|=|:|->)\s*["'“‘\x60]?([^\s"'”’\x60]{4,128})["'”’\x60]?`, "giu");
const PASSWORD_BARE = new RegExp(String.raw`${PASSWORD_WORD}\s+["'“‘\x60]?([^\s"'”’\x60]{4,128})["'”’\x60]?`, "giu");
/** "code is 482913", "OTP: 123456", "verification code 8841 22" — qualified codes 4–8 digits, plain "code is" 6–8. */
const QUALIFIED_CODE = /\b(?:one[- ]time (?:code|password|pin)|otp|2fa|mfa|tfa|verification code|security code|login code|sign[- ]?in code|auth(?:entication)? code|confirmation code|sms code|totp)\b[^\d\n]{0,24}?(\d{3,4}[ -]?\d{1,4})\b/gi;
const PLAIN_CODE = /\b(?<!zip |post |postal |area |country |status |error |http |promo |discount |coupon |source |country )code\s*(?:is|:|=)\s*(\d{6,8})\b/gi;
/** `api_key=…`, `token: …`, `secret = …`, `access key …` followed by a value. */
const LABELLED = /\b(?:api[_ -]?key|access[_ -]?key|secret(?:[_ -]?key)?|client[_ -]?secret|auth[_ -]?token|access[_ -]?token|refresh[_ -]?token|bearer|token)\s*(?:is|=|:)\s*["']?([A-Za-z0-9._~+/=-]{12,})/gi;
const CANDIDATE = /[A-Za-z0-9+/=_-]{24,}/g;
const URL_SPAN = /\bhttps?:\/\/[^\s<>"']+|\bwww\.[^\s<>"']+/gi;

/** Words a "password is …" phrase is commonly followed by that are not a password. */
const NOT_A_PASSWORD = new Set(
  [
    "wrong", "incorrect", "invalid", "expired", "correct", "right", "weak", "strong", "long", "short", "reset", "changed", "required",
    "needed", "missing", "blank", "empty", "saved", "stored", "secure", "safe", "fine", "ok", "okay", "same", "different", "manager",
    "protected", "locked", "forgotten", "forgot", "lost", "compromised", "leaked", "please", "again", "field", "prompt", "rules",
    "policy", "change", "update", "there", "here", "this", "that", "what", "which", "something", "nothing", "not", "also", "still",
    "the", "your", "mine", "yours", "too", "very", "really", "always", "never", "from", "with", "without", "when", "after", "before",
    "into", "entered", "typed", "sent", "working", "broken", "case", "sensitive", "hint", "requirements", "protection", "manager.",
  ],
);

/**
 * Finds secret-looking spans in `text` (non-overlapping, sorted). See the module doc for what counts.
 */
export function findSecretText(text: string): SecretTextFinding[] {
  const found: SecretTextFinding[] = [];
  const add = (kind: SecretTextKind, start: number, end: number) => {
    if (end > start && !found.some((f) => start < f.end && end > f.start)) found.push({ kind, start, end });
  };
  for (const m of text.matchAll(PRIVATE_KEY)) add("private_key", m.index, m.index + m[0].length);
  for (const pattern of TOKEN_PATTERNS) {
    for (const m of text.matchAll(new RegExp(pattern.source, pattern.flags))) {
      // "Bearer word" in prose is not a token unless the rest looks random.
      if (/^(bearer|basic|bot|token)\s/i.test(m[0]) && !looksRandom(m[0].replace(/^\S+\s+/, ""), 16)) continue;
      add("api_key", m.index, m.index + m[0].length);
    }
  }
  for (const m of text.matchAll(LABELLED)) {
    const value = m[1]!;
    if (!/\d/.test(value) && !looksRandom(value, 12)) continue;
    const start = m.index + m[0].length - value.length;
    add("api_key", start, start + value.length);
  }
  for (const m of [...text.matchAll(PASSWORD), ...text.matchAll(PASSWORD_BARE)]) {
    const value = m[1]!;
    const bare = value.replace(/[.,;!?)]+$/, "");
    if (bare.length < 4 || NOT_A_PASSWORD.has(bare.toLowerCase())) continue;
    const prefix = m[0].slice(0, m[0].lastIndexOf(value));
    const separated = /[:=]|->|\bis\b|\bwas\b/i.test(prefix);
    const quoted = /["'“‘`]$/.test(prefix);
    const strong = /\d/.test(bare) || /[^\p{L}\p{N}]/u.test(bare) || (/\p{Lu}/u.test(bare) && /\p{Ll}/u.test(bare.slice(1)));
    const isPin = /^pin$/i.test(m[0].trim().split(/\s/)[0]!);
    if (isPin && !/^\d{4,8}$/.test(bare)) continue;
    if (!(strong || quoted || (separated && bare.length >= 6) || bare.length >= 14)) continue;
    const start = m.index + m[0].lastIndexOf(value);
    add("password", start, start + bare.length);
  }
  for (const m of text.matchAll(QUALIFIED_CODE)) {
    const start = m.index + m[0].length - m[1]!.length;
    add("one_time_code", start, start + m[1]!.length);
  }
  for (const m of text.matchAll(PLAIN_CODE)) {
    const start = m.index + m[0].length - m[1]!.length;
    add("one_time_code", start, start + m[1]!.length);
  }
  const urls = [...text.matchAll(URL_SPAN)].map((m) => [m.index, m.index + m[0].length] as const);
  for (const m of text.matchAll(CANDIDATE)) {
    const start = m.index;
    const end = start + m[0].length;
    if (urls.some(([a, b]) => start >= a && end <= b)) continue;
    if (looksRandom(m[0], 24)) add("token", start, end);
  }
  return found.sort((a, b) => a.start - b.start);
}

/**
 * `text` with every secret-looking span replaced by {@link WITHHELD}, and the kinds found (empty when
 * nothing was withheld; the text is then returned unchanged).
 */
export function withholdSecretText(text: string): { text: string; kinds: SecretTextKind[] } {
  const found = findSecretText(text);
  if (found.length === 0) return { text, kinds: [] };
  let out = "";
  let at = 0;
  for (const f of found) {
    out += text.slice(at, f.start) + WITHHELD;
    at = f.end;
  }
  return { text: out + text.slice(at), kinds: [...new Set(found.map((f) => f.kind))] };
}

/**
 * Whether a run of characters looks like a random token rather than a word, number, hash or
 * identifier: at least `minLength` characters, letters and digits mixed in both cases (or base64
 * symbols), frequent switches between character classes (camel-case words switch rarely) and high
 * Shannon entropy. Pure hex (hashes, UUIDs) and single-class runs are not tokens.
 */
export function looksRandom(run: string, minLength: number): boolean {
  if (run.length < minLength) return false;
  if (/^[0-9a-fA-F-]+$/.test(run)) return false;
  const upper = /[A-Z]/.test(run);
  const lower = /[a-z]/.test(run);
  const digit = /[0-9]/.test(run);
  const symbol = /[+/=_-]/.test(run);
  const classes = [upper, lower, digit, symbol].filter(Boolean).length;
  if (classes < 3 || !digit) return false;
  const classOf = (c: string) => (/[A-Z]/.test(c) ? 0 : /[a-z]/.test(c) ? 1 : /[0-9]/.test(c) ? 2 : 3);
  let switches = 0;
  for (let i = 1; i < run.length; i++) if (classOf(run[i]!) !== classOf(run[i - 1]!)) switches++;
  if (switches / run.length < 0.3) return false;
  const counts = new Map<string, number>();
  for (const c of run) counts.set(c, (counts.get(c) ?? 0) + 1);
  let entropy = 0;
  for (const n of counts.values()) entropy -= (n / run.length) * Math.log2(n / run.length);
  return entropy >= 3.5;
}

/**
 * An inbound event with secret-looking text withheld from its text (messages only; presses pass),
 * and the kinds withheld. Applied before the event is recorded, logged or read by the model.
 */
export function screenInbound<E extends InboundEvent>(event: E): { event: E; kinds: SecretTextKind[] } {
  if (event.kind !== "message") return { event, kinds: [] };
  const { text, kinds } = withholdSecretText(event.text);
  return kinds.length === 0 ? { event, kinds } : { event: { ...event, text }, kinds };
}
