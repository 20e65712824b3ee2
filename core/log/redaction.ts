/**
 * Secret scrubbing and detection, in every usual encoding, plus the token shapes of the platforms
 * Familiar talks to. One implementation used everywhere a secret could leak: tool results before the
 * model reads them, the outbound check (a vault value going where it is not bound), the logger, the
 * audit log, the store's error fields and the HTTP JSON responses.
 *
 * Encodings of a value `v` that are recognised: plain, URL-encoded (`encodeURIComponent`, `+` for
 * spaces, lower-case escapes), base64 and base64url (aligned, and unaligned inside a longer encoded
 * string such as HTTP Basic `user:v`), hex (lower and upper), JSON-escaped (`\"`, `\\`, `\/`,
 * `\uXXXX`) and HTML-escaped (`&amp;` `&lt;` `&gt;` `&quot;` `&#39;`/`&#x27;`).
 */

/** A secret value to scrub, with the name its replacement shows (`{{secret:NAME}}`), or `[redacted]` without one. */
export interface KnownSecret {
  name?: string;
  value: string;
}

/** Shortest value scrubbed by value (shorter ones would match ordinary text). */
export const MIN_SECRET_CHARS = 6;
/** Shortest unaligned base64 core searched for (shorter cores could match by chance). */
const MIN_CORE_CHARS = 10;

const encodingCache = new Map<string, string[]>();

/**
 * Every encoded form of `value` searched for, longest first. Cached per value (the set of values is
 * small and long-lived).
 */
export function encodingsOf(value: string): string[] {
  const cached = encodingCache.get(value);
  if (cached) return cached;
  const forms = new Set<string>([value]);
  const bytes = Buffer.from(value, "utf8");
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(uri.replace(/%20/g, "+"));
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  // Every character percent-encoded (some clients escape more than encodeURIComponent does).
  forms.add([...bytes].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join(""));
  const b64 = bytes.toString("base64");
  forms.add(b64);
  forms.add(b64.replace(/=+$/, ""));
  const b64url = bytes.toString("base64url");
  forms.add(b64url);
  // Unaligned base64 inside a longer string (e.g. Basic `user:secret`): the characters that depend on
  // the value's bytes only, for each of the three offsets; the first and last groups may mix with
  // neighbouring bytes and are left out.
  for (let offset = 1; offset <= 2; offset++) {
    const shifted = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const core = shifted.slice(4, Math.floor((offset + bytes.length) / 3) * 4);
    if (core.length >= MIN_CORE_CHARS) {
      forms.add(core);
      forms.add(core.replace(/\+/g, "-").replace(/\//g, "_"));
    }
  }
  const alignedCore = b64.slice(0, Math.floor(bytes.length / 3) * 4);
  if (alignedCore.length >= MIN_CORE_CHARS) {
    forms.add(alignedCore);
    forms.add(alignedCore.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  const hex = bytes.toString("hex");
  forms.add(hex);
  forms.add(hex.toUpperCase());
  const json = JSON.stringify(value).slice(1, -1);
  forms.add(json);
  forms.add(json.replace(/\//g, "\\/"));
  forms.add([...value].map((c) => (/[A-Za-z0-9]/.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)).join(""));
  forms.add(htmlEscape(value, "&#39;"));
  forms.add(htmlEscape(value, "&#x27;"));
  forms.add(value.replace(/[^A-Za-z0-9]/g, (c) => `&#${c.charCodeAt(0)};`));
  const out = [...forms].filter((f) => f.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
  if (encodingCache.size > 1000) encodingCache.clear();
  encodingCache.set(value, out);
  return out;
}

function htmlEscape(value: string, apostrophe: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, apostrophe);
}

/**
 * Replaces every known secret value in `text`, in every encoding (see module doc), with
 * `{{secret:NAME}}` (or `[redacted]` for a nameless value). Values shorter than 6 characters are
 * ignored. Hex and base64 forms are matched case-sensitively except hex (both cases).
 */
export function scrubSecrets(text: string, secrets: readonly (KnownSecret | string)[]): string {
  let out = text;
  for (const s of secrets) {
    const secret = typeof s === "string" ? { value: s } : s;
    if (secret.value.length < MIN_SECRET_CHARS) continue;
    const replacement = secret.name ? `{{secret:${secret.name}}}` : "[redacted]";
    for (const form of encodingsOf(secret.value)) if (out.includes(form)) out = out.split(form).join(replacement);
  }
  return out;
}

/**
 * Names (or values, for nameless ones) of the secrets found in `text` in any encoding. The text is
 * also read URL-decoded once, so an escape the URL parser added does not hide a value.
 */
export function secretsIn(text: string, secrets: readonly KnownSecret[]): KnownSecret[] {
  const readings = [text];
  for (const variant of [text, text.replace(/\+/g, " ")]) {
    try {
      const decoded = decodeURIComponent(variant);
      if (!readings.includes(decoded)) readings.push(decoded);
    } catch {
      // not URL-encoded text
    }
  }
  return secrets.filter((s) => s.value.length >= MIN_SECRET_CHARS && encodingsOf(s.value).some((f) => readings.some((r) => r.includes(f))));
}

/** Deep copy of `value` with {@link scrubSecrets} applied to every string (object keys included). */
export function scrubDeep<T>(value: T, scrub: (text: string) => string, depth = 0): T {
  return visit(value, scrub, depth) as T;
}

function visit(value: unknown, scrub: (text: string) => string, depth: number): unknown {
  if (typeof value === "string") return scrub(value);
  if (value === null || typeof value !== "object" || depth > 12) return value;
  if (value instanceof Date || Buffer.isBuffer(value) || value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map((v) => visit(v, scrub, depth + 1));
  if (value instanceof Error) {
    const copy = new Error(scrub(value.message));
    copy.name = value.name;
    if (value.stack) copy.stack = scrub(value.stack);
    return copy;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), visit(v, scrub, depth + 1)]));
}

/**
 * Token shapes of the platforms and services Familiar uses, for error texts that echo one (an
 * upstream error quoting the request URL or an `Authorization` header). Sources: Telegram Bot API
 * token format `<bot id>:<35 characters>` (core.telegram.org/bots/api#authorizing-your-bot), Slack
 * token prefixes (api.slack.com/authentication/token-types), OpenAI `sk-…` keys, GitHub token
 * prefixes (github.blog 2021-04-05), AWS access key ids `AKIA…`, Discord bot tokens (three dot-joined
 * base64url parts), JWTs, and `Bearer`/`Basic`/`Bot` credentials in Authorization headers.
 */
export const TOKEN_PATTERNS: readonly RegExp[] = [
  /(?<![0-9])\d{5,12}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g,
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g,
  /\bxapp-\d-[A-Za-z0-9-]{10,}/g,
  /\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}/g,
  /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\b(Bearer|Basic|Bot|Token)\s+(?=[A-Za-z._~+/=-]*[0-9]|[A-Za-z0-9._~+/=-]{20,})[A-Za-z0-9._~+/=-]{8,}/gi,
];

/** Replaces every token-shaped run in `text` with `[redacted]` (Authorization schemes keep their word). */
export function scrubTokenShapes(text: string): string {
  let out = text;
  for (const pattern of TOKEN_PATTERNS) {
    out = out.replace(pattern, (match, scheme?: string) => (typeof scheme === "string" && scheme.length > 0 && /^(bearer|basic|bot|token)$/i.test(scheme) ? `${scheme} [redacted]` : "[redacted]"));
  }
  return out;
}

/**
 * The process's registry of values that must never leave in clear: configured bot tokens and API
 * keys, and every vault value (of every person). {@link SecretRegistry.scrub} is the one boundary
 * function used by the logger, the audit append, the store's error fields and the HTTP JSON
 * responses: known values in every encoding, then token shapes.
 */
export class SecretRegistry {
  private readonly values = new Map<string, KnownSecret>();

  constructor(initial: readonly string[] = []) {
    for (const v of initial) this.add(v);
  }

  /** Registers a value (ignored when shorter than 6 characters). */
  add(value: string, name?: string): void {
    if (value.length < MIN_SECRET_CHARS) return;
    const existing = this.values.get(value);
    if (existing && (existing.name !== undefined || name === undefined)) return;
    this.values.set(value, name === undefined ? { value } : { name, value });
  }

  /** Unregisters a value (a deleted secret). */
  remove(value: string): void {
    this.values.delete(value);
  }

  /** The registered values. */
  list(): KnownSecret[] {
    return [...this.values.values()];
  }

  /** Known values (every encoding) and token shapes removed from `text`. */
  scrub = (text: string): string => scrubTokenShapes(scrubSecrets(text, this.list()));

  /** {@link scrub} over every string of a value (deep copy). */
  scrubDeep = <T>(value: T): T => scrubDeep(value, this.scrub);
}
