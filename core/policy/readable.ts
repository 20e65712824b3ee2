/**
 * Text a person can trust on a card: what an action will really send, made visible.
 *
 * - {@link neutralise} replaces characters that hide or reorder text — bidi controls (U+202A–202E,
 *   U+2066–2069, U+200E/200F, U+061C), zero-width and other format characters (Unicode category
 *   Cf: U+200B–200D, U+2060, U+FEFF, tags U+E0000–E007F, soft hyphen …), control characters other
 *   than newline and tab, variation selectors and blank fillers — with a visible `⟦U+202E⟧`.
 * - {@link collapseRuns} shows padding for what it is: a run of 16 or more equal characters becomes
 *   one of them plus `⟨×N⟩` (whitespace: `⟨N spaces⟩`), so padding cannot push the real content
 *   out of view.
 * - {@link decodeBody} shows a payload decoded: JSON pretty-printed, form fields one per line, and
 *   base64 or hex that decodes to text shown as that text (up to three layers), for the whole body
 *   and for each JSON string or form value.
 * - {@link decodeAddress} does the same for what a destination URL carries: its query names and
 *   values and its path segments (percent-encoding that hides letters counts as a layer), and
 *   flags a long value that decodes to nothing.
 */

/** Characters that hide, reorder or disguise text. `\n` and `\t` are excluded by the replacer. */
const HIDDEN = /[\p{Cf}\p{Cc}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;

/** Text with hidden characters made visible, and how many there were. */
export interface Neutralised {
  text: string;
  hidden: number;
}

/** Replaces hidden and direction-changing characters with `⟦U+XXXX⟧` (see module doc). */
export function neutralise(text: string): Neutralised {
  let hidden = 0;
  const out = text.replace(HIDDEN, (ch) => {
    if (ch === "\n" || ch === "\t") return ch;
    if (ch === "\r") return "";
    hidden++;
    return `⟦U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟧`;
  });
  return { text: out, hidden };
}

/** Shows runs of 16+ equal characters as one plus a count, so padding is visible as padding. */
export function collapseRuns(text: string): string {
  return text.replace(/(.)\1{15,}/gsu, (run, ch: string) => {
    const n = [...run].length;
    if (ch === " ") return `⟨${n} spaces⟩`;
    if (ch === "\n") return `\n⟨${n} line breaks⟩\n`;
    if (ch === "\t") return `⟨${n} tabs⟩`;
    return `${ch}⟨×${n}⟩`;
  });
}

/** Neutralised and collapsed: the form every piece of request content takes on a card. */
export function visible(text: string): Neutralised {
  const n = neutralise(text);
  return { text: collapseRuns(n.text), hidden: n.hidden };
}

/** The decoded text when `bytes` is valid UTF-8 and mostly printable, else null. */
function asText(bytes: Buffer): string | null {
  if (bytes.length === 0) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  const chars = [...text];
  const printable = chars.filter((c) => /[\p{L}\p{N}\p{P}\p{S}\p{Zs}\n\t]/u.test(c)).length;
  return printable / chars.length >= 0.9 ? text : null;
}

/** One decoding step of a string that is wholly base64 or hex text; null when it is neither. */
export function decodeOnce(value: string): { encoding: "base64" | "hex"; text: string } | null {
  const s = value.trim();
  if (s.length >= 8 && /^(?:[0-9a-fA-F]{2})+$/.test(s)) {
    const text = asText(Buffer.from(s, "hex"));
    if (text !== null) return { encoding: "hex", text };
  }
  const compact = s.replace(/\s+/g, "");
  if (compact.length >= 8 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(compact) && !/^[A-Za-z]+$/.test(compact)) {
    const bytes = Buffer.from(compact.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    const text = asText(bytes);
    if (text !== null) return { encoding: "base64", text };
  }
  return null;
}

/** Decodes up to three layers (`base64 → hex → text`); null when the value is not encoded. */
export function decodeLayers(value: string): { encodings: string[]; text: string } | null {
  const encodings: string[] = [];
  let text = value;
  for (let i = 0; i < 3; i++) {
    const step = decodeOnce(text);
    if (step === null) break;
    encodings.push(step.encoding);
    text = step.text;
  }
  return encodings.length === 0 ? null : { encodings, text };
}

/** How a payload was shown. */
export type BodyFormat = "json" | "form" | "encoded" | "text";

/** A payload as the card shows it. `text` is complete (the card decides how much fits). */
export interface DecodedBody {
  format: BodyFormat;
  /** Human words for the format: "JSON", "form fields", "base64 → text", "text". */
  label: string;
  text: string;
  /** Values inside the payload that decode to text: `path: base64 → "…"`. */
  decoded: string[];
  /** Characters in the payload (before decoding). */
  length: number;
}

function isForm(body: string, contentType: string | undefined): boolean {
  if (contentType !== undefined && /application\/x-www-form-urlencoded/i.test(contentType)) return true;
  return contentType === undefined && /^[^=&\s{}[\]"]+=[^&\s]*(?:&[^=&\s]+=[^&\s]*)*$/.test(body.trim());
}

function collectDecoded(value: unknown, path: string, out: string[]): void {
  if (out.length >= 50) return;
  if (typeof value === "string") {
    const d = decodeLayers(value);
    if (d !== null) out.push(`${path || "(value)"}: ${d.encodings.join(" → ")} → ${JSON.stringify(d.text)}`);
  } else if (Array.isArray(value)) value.forEach((v, i) => collectDecoded(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) collectDecoded(v, path ? `${path}.${k}` : k, out);
  }
}

/**
 * Decodes a payload for the card: JSON pretty-printed (with decodable string values listed), form
 * fields one per line, a wholly base64/hex body decoded, otherwise the text as is.
 */
export function decodeBody(body: string, contentType?: string): DecodedBody {
  const trimmed = body.trim();
  if (/^[[{"]/.test(trimmed) || (contentType !== undefined && /json/i.test(contentType))) {
    try {
      const value: unknown = JSON.parse(trimmed);
      const decoded: string[] = [];
      collectDecoded(value, "", decoded);
      return { format: "json", label: "JSON", text: JSON.stringify(value, null, 2), decoded, length: body.length };
    } catch {
      // not JSON after all: fall through
    }
  }
  if (isForm(body, contentType)) {
    const params = new URLSearchParams(trimmed);
    const lines: string[] = [];
    const decoded: string[] = [];
    for (const [k, v] of params) {
      lines.push(`${k}: ${v}`);
      const d = decodeLayers(v);
      if (d !== null) decoded.push(`${k}: ${d.encodings.join(" → ")} → ${JSON.stringify(d.text)}`);
    }
    return { format: "form", label: "form fields", text: lines.join("\n"), decoded, length: body.length };
  }
  const layers = decodeLayers(trimmed);
  if (layers !== null) return { format: "encoded", label: `${layers.encodings.join(" → ")} → text`, text: layers.text, decoded: [], length: body.length };
  return { format: "text", label: "text", text: body, decoded: [], length: body.length };
}

/**
 * A host for display: the ASCII form (WHATWG URL parsing already turned IDN into punycode) and
 * whether it is an internationalised name that could imitate another site.
 */
export function hostForDisplay(host: string): { host: string; lookalike: boolean } {
  return { host, lookalike: host.split(".").some((label) => label.startsWith("xn--")) };
}

/** Longest value in an address that may stay undecoded without a flag, characters. */
const OPAQUE_CHARS = 64;

/** Percent-decoding that fails softly: a malformed run of escapes stays as it is. */
function percentDecode(value: string): string {
  return value.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** True when `value` percent-escapes characters that never need it (letters, digits, `-._~`): hiding, not quoting. */
function escapesPlainText(value: string): boolean {
  return [...value.matchAll(/%([0-9a-fA-F]{2})/g)].some((m) => /[A-Za-z0-9\-._~]/.test(String.fromCharCode(parseInt(m[1]!, 16))));
}

/**
 * Decodes one value of an address (a query name or value, a path segment): percent-encoding, then
 * up to three layers of base64/base64url/hex. Percent-encoding is listed as a layer only when it hid
 * plain letters or digits (ordinary quoting such as `%20` is not). Null when nothing was encoded.
 */
export function decodeAddressValue(raw: string): { encodings: string[]; text: string } | null {
  const encodings: string[] = [];
  let text = raw;
  for (let i = 0; i < 4 && /%[0-9a-fA-F]{2}/.test(text); i++) {
    const next = percentDecode(text);
    if (next === text) break;
    if (escapesPlainText(text)) encodings.push("percent");
    text = next;
  }
  const layers = decodeLayers(text);
  if (layers !== null) return { encodings: [...encodings, ...layers.encodings], text: layers.text };
  return encodings.length > 0 ? { encodings, text } : null;
}

/** One address value as a card line (`query d: base64 → "…"`), or null when it needs none. */
function addressLine(label: string, raw: string): string | null {
  const decoded = decodeAddressValue(raw);
  if (decoded !== null) return `${label}: ${decoded.encodings.join(" → ")} → ${JSON.stringify(decoded.text)}`;
  const plain = percentDecode(raw);
  return plain.length >= OPAQUE_CHARS ? `${label}: ${plain.length} characters that do not decode to text` : null;
}

/**
 * Data an address carries, for the card: every query parameter (name and value) and every path
 * segment (whole, and its pieces between `;`, `,`, `=` and `.`) that decodes to text — percent,
 * base64, base64url, hex, several layers — or is a long value that decodes to nothing. Each line
 * says where it is (`query d`, `path segment 2`). At most 20 lines.
 */
export function decodeAddress(href: string): string[] {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return [];
  }
  const lines: string[] = [];
  const add = (line: string | null) => {
    if (line !== null && lines.length < 20 && !lines.includes(line)) lines.push(line);
  };
  url.pathname.split("/").filter((s) => s !== "").forEach((segment, i) => {
    const label = `path segment ${i + 1}`;
    const whole = addressLine(label, segment);
    if (whole !== null) return add(whole);
    for (const piece of segment.split(/[;,=.]/)) if (piece !== segment) add(decodeAddressValue(piece) ? addressLine(label, piece) : null);
  });
  for (const pair of url.search.replace(/^\?/, "").split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = eq < 0 ? pair : pair.slice(0, eq);
    const value = eq < 0 ? "" : pair.slice(eq + 1);
    const shownName = percentDecode(name);
    const nameLine = decodeAddressValue(name);
    if (nameLine !== null) add(`query name: ${nameLine.encodings.join(" → ")} → ${JSON.stringify(nameLine.text)}`);
    if (value !== "") add(addressLine(`query ${shownName.length > 40 ? `${shownName.slice(0, 40)}…` : shownName}`, value));
  }
  return lines;
}
