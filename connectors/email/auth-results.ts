/**
 * A parser for one `Authentication-Results` header value (RFC 8601 §2.2), written here because
 * mailauth 7 crashes on Node 20. Comments (nested, with escapes) and folding whitespace are
 * skipped anywhere CFWS may stand; values may be tokens or quoted strings. Linear in the input,
 * which is capped at 16,384 characters (headers.ts).
 *
 *     authres-payload = [CFWS] authserv-id [ CFWS authres-version ] ( no-result / 1*resinfo ) [CFWS]
 *     resinfo         = [CFWS] ";" methodspec [ CFWS reasonspec ] [ CFWS 1*propspec ]
 *     methodspec      = [CFWS] method [CFWS] "=" [CFWS] result
 *     propspec        = ptype [CFWS] "." [CFWS] property [CFWS] "=" pvalue
 */

/** One method's verdict, e.g. `dkim=pass header.d=example.com` → `{ method: "dkim", result: "pass", properties: { "header.d": "example.com" } }`. */
export interface AuthResult {
  /** Lowercase method name without version ("dmarc", "dkim", "spf", "arc", "iprev", …). */
  method: string;
  /** Lowercase result ("pass", "fail", "none", "neutral", "softfail", "temperror", "permerror", "policy"). */
  result: string;
  reason: string | null;
  /** Properties by lowercase `ptype.property` ("header.from", "header.d", "header.i", "smtp.mailfrom", "smtp.helo"). */
  properties: Record<string, string>;
}

/** A parsed header: who wrote it and what it says. `results` is empty for `none`. */
export interface AuthenticationResults {
  authservId: string;
  results: AuthResult[];
}

class Cursor {
  i = 0;
  constructor(readonly s: string) {}
  get done(): boolean {
    return this.i >= this.s.length;
  }
  peek(): string {
    return this.s[this.i] ?? "";
  }
  /** Skips whitespace and (nested) comments. Returns false on an unclosed comment. */
  skipCfws(): boolean {
    while (!this.done) {
      const c = this.peek();
      if (c === " " || c === "\t" || c === "\r" || c === "\n") this.i++;
      else if (c === "(") {
        let depth = 0;
        while (!this.done) {
          const d = this.s[this.i++];
          if (d === "\\") this.i++;
          else if (d === "(") depth++;
          else if (d === ")" && --depth === 0) break;
        }
        if (depth !== 0) return false;
      } else break;
    }
    return true;
  }
  /** A quoted string (unescaped) at the cursor, or null. */
  quoted(): string | null {
    if (this.peek() !== '"') return null;
    let out = "";
    this.i++;
    while (!this.done) {
      const c = this.s[this.i++]!;
      if (c === "\\") out += this.s[this.i++] ?? "";
      else if (c === '"') return out;
      else out += c;
    }
    return null;
  }
  /** Characters while `ok` holds. */
  run(ok: (c: string) => boolean): string {
    const start = this.i;
    while (!this.done && ok(this.peek())) this.i++;
    return this.s.slice(start, this.i);
  }
}

const isKeyword = (c: string) => /[A-Za-z0-9_-]/.test(c);
// RFC 2045 token: no space, controls or tspecials.
const isToken = (c: string) => c > " " && c < "\x7f" && !'()<>@,;:\\"/[]?='.includes(c);
const isPvalue = (c: string) => c > " " && c !== ";" && c !== "(" && c !== ")" && c !== '"';

function value(cur: Cursor): string | null {
  const q = cur.quoted();
  if (q !== null) return q;
  const t = cur.run(isToken);
  return t || null;
}

/** One resinfo after its ";" (null when malformed). */
function resinfo(cur: Cursor): AuthResult | "none" | null {
  if (!cur.skipCfws()) return null;
  const method = cur.run(isKeyword).toLowerCase();
  if (!method || !cur.skipCfws()) return null;
  if (cur.peek() === "/") {
    cur.i++;
    cur.skipCfws();
    if (!cur.run(isKeyword)) return null;
    cur.skipCfws();
  }
  if (cur.peek() !== "=") return method === "none" ? "none" : null;
  cur.i++;
  cur.skipCfws();
  const result = cur.run(isKeyword).toLowerCase();
  if (!result) return null;
  const out: AuthResult = { method, result, reason: null, properties: {} };
  for (;;) {
    if (!cur.skipCfws()) return null;
    if (cur.done || cur.peek() === ";") return out;
    const word = cur.run(isKeyword).toLowerCase();
    if (!word || !cur.skipCfws()) return null;
    if (word === "reason" && cur.peek() === "=") {
      cur.i++;
      cur.skipCfws();
      out.reason = value(cur);
      if (out.reason === null) return null;
      continue;
    }
    if (cur.peek() !== ".") return null;
    cur.i++;
    cur.skipCfws();
    const property = cur.run(isKeyword).toLowerCase();
    cur.skipCfws();
    if (!property || cur.peek() !== "=") return null;
    cur.i++;
    cur.skipCfws();
    const pvalue = cur.quoted() ?? cur.run(isPvalue);
    if (!pvalue) return null;
    out.properties[`${word}.${property}`] = pvalue;
  }
}

/**
 * Parses an Authentication-Results value (without the field name). Returns null when it does not
 * follow RFC 8601 (an unknown method or property is fine; a broken structure is not).
 */
export function parseAuthenticationResults(text: string): AuthenticationResults | null {
  const cur = new Cursor(text.slice(0, 16_384));
  if (!cur.skipCfws()) return null;
  const authservId = value(cur);
  if (!authservId || !cur.skipCfws()) return null;
  // Optional authres-version (digits) before the first ";".
  if (/[0-9]/.test(cur.peek())) {
    cur.run((c) => /[0-9]/.test(c));
    if (!cur.skipCfws()) return null;
  }
  const results: AuthResult[] = [];
  while (!cur.done) {
    if (cur.peek() !== ";") return null;
    cur.i++;
    const r = resinfo(cur);
    if (r === null) return null;
    if (r !== "none") results.push(r);
    if (!cur.skipCfws()) return null;
  }
  return { authservId: authservId.toLowerCase(), results };
}
