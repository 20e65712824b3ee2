/**
 * What a URL in a mail carries, read from the URL alone: the targets wrapped inside it by
 * click-tracking and link-protection redirects, and whether it (or a target) is a reset, sign-in,
 * verification or recovery link by its path and parameters, or carries a token.
 *
 * Unwrapping (at most 4 levels, 8 URLs): a query value that is a URL (percent-encoded once or
 * twice: Google `url?q=`, Outlook Safe Links `?url=`, Facebook `l.php?u=`, most ESPs), a query value
 * that is base64/base64url of a URL, a URL embedded in the path (Amazon SES `awstrack.me/L0/https:%2F%2F…`),
 * Proofpoint URL Defense v2 (`u=https-3A__host_path`) and v3 (`/v3/__URL__;…`).
 * A tracker whose target is not in the URL (SendGrid `upn=`, Mailchimp ids) stays opaque: the link
 * rules then judge it by its anchor text and the text around it.
 */
import type { Purpose } from "./lexicon.js";

/** What `inspectUrl` found in a URL and in every target unwrapped from it. */
export interface UrlFacts {
  /** The URL and the targets unwrapped from it, outermost first. */
  chain: string[];
  /** A path word or parameter says reset/sign-in/verify/recover, together with a token or code: an access link by itself. */
  access: Purpose | null;
  /** Somewhere in the chain: a long random token (≥ 16 characters, letters and digits) in the path or a value. */
  longToken: boolean;
  /** A query or fragment value shaped like a one-time code (4–12 digits, or letters and digits), or a short random path segment. */
  shortCode: boolean;
  /** The outermost URL is a redirector (click tracker) whose target could not be read. */
  opaque: boolean;
  /** A meeting join link (Zoom, Teams, Meet, Webex, …): never an access link (its `pwd` is a meeting passcode). */
  meeting: boolean;
  /** Letters and digits of every value and path segment, uppercased (to find a removed code inside a URL). */
  canonical: string;
}

const MAX_CHAIN = 8;
const MAX_DEPTH = 4;

function decodeOnce(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    return value;
  }
}

/** A value as a URL when it is one (after up to two rounds of percent-decoding, or base64). */
function asUrl(value: string): string | null {
  let v = value.trim();
  for (let round = 0; round < 3; round++) {
    if (/^https?:\/\//i.test(v)) return v;
    if (/^www\.[a-z0-9-]+\./i.test(v)) return `https://${v}`;
    if (/^https?%3a/i.test(v)) v = decodeOnce(v);
    else break;
  }
  if (v.length >= 16 && v.length <= 4096 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) {
    const decoded = Buffer.from(v.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("latin1");
    if (/^https?:\/\/[\x21-\x7e]+$/i.test(decoded)) return decoded;
  }
  return null;
}

function parse(url: string): URL | null {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u : null;
  } catch {
    return null;
  }
}

/** Targets wrapped inside `u` (not recursive). */
function wrappedTargets(u: URL): string[] {
  const out: string[] = [];
  const host = u.hostname.toLowerCase();
  if (host.endsWith("urldefense.proofpoint.com") && u.pathname.startsWith("/v2/")) {
    const raw = u.searchParams.get("u");
    if (raw) out.push(raw.replace(/_/g, "/").replace(/-([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))));
  }
  if (host.endsWith("urldefense.com") && u.pathname.startsWith("/v3/__")) {
    const end = u.href.indexOf("__;", u.href.indexOf("/v3/__") + 6);
    if (end > 0) out.push(u.href.slice(u.href.indexOf("/v3/__") + 6, end));
  }
  for (const value of u.searchParams.values()) {
    const target = asUrl(value);
    if (target) out.push(target);
  }
  const path = decodeOnce(u.pathname);
  const at = path.search(/https?:\/\/?/i);
  if (at > 0) out.push(decodeOnce(path.slice(at).replace(/^(https?:)\/(?!\/)/i, "$1//") + u.search));
  return out;
}

const accessWords = new Map<string, Purpose>([
  ["reset", "reset"], ["forgot", "reset"], ["password", "reset"], ["passwords", "reset"], ["passwort", "reset"], ["kennwort", "reset"],
  ["senha", "reset"], ["contrasena", "reset"], ["motdepasse", "reset"], ["pwreset", "reset"], ["resetpassword", "reset"],
  ["passwordreset", "reset"], ["forgotpassword", "reset"], ["recover", "recovery"], ["recovery", "recovery"], ["unlock", "recovery"],
  ["magic", "sign-in"], ["magiclink", "sign-in"], ["passwordless", "sign-in"], ["signin", "sign-in"], ["login", "sign-in"],
  ["logon", "sign-in"], ["auth", "sign-in"], ["authenticate", "sign-in"], ["authentication", "sign-in"], ["otp", "sign-in"],
  ["2fa", "sign-in"], ["mfa", "sign-in"], ["totp", "sign-in"], ["sso", "sign-in"], ["onetime", "sign-in"], ["verify", "verification"],
  ["verification", "verification"], ["verifyemail", "verification"], ["activate", "verification"], ["activation", "verification"],
  ["confirmemail", "verification"], ["approve", "verification"], ["device", "verification"],
]);

/** Purpose named by a path: its words, hyphen/underscore pairs joined ("sign-in" → "signin"). */
function pathPurpose(path: string): Purpose | null {
  const words = path.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const hit = accessWords.get(words[i]!) ?? (i + 1 < words.length ? accessWords.get(words[i]! + words[i + 1]!) : undefined);
    if (hit) return hit;
    if (/resetpass|passwordreset|forgotpass|magiclink|verifyemail|emailverif|verifyaccount|accountrecovery|onetimelogin|loginlink/.test(words[i]!)) {
      return /verif/.test(words[i]!) ? "verification" : /recover/.test(words[i]!) ? "recovery" : /login|magic/.test(words[i]!) ? "sign-in" : "reset";
    }
  }
  return null;
}

const signInParamWords = new Set(["otp", "oobcode", "magic", "magiclink", "signin", "login", "auth", "authcode", "mfa", "2fa", "passcode", "totp"]);

/**
 * Parameter names that carry an access credential by their name alone (with a token- or
 * code-shaped value). `specific`: the name says which kind ("reset_token", "mode=verifyEmail");
 * otherwise ("token", "otp") the path's word says more.
 */
function paramPurpose(name: string, value: string): { purpose: Purpose; specific: boolean } | null {
  const n = name.toLowerCase();
  if (n === "mode" || n === "action") {
    const v = value.toLowerCase();
    const purpose: Purpose | null = /reset/.test(v) ? "reset" : /verify|confirm/.test(v) ? "verification" : /signin|login/.test(v) ? "sign-in" : /recover/.test(v) ? "recovery" : null;
    return purpose && { purpose, specific: true };
  }
  if (/^(utm_|csrf|xsrf)/.test(n)) return null;
  if (/reset|passw/.test(n)) return { purpose: "reset", specific: true };
  if (/recover/.test(n)) return { purpose: "recovery", specific: true };
  if (/verif|confirm|activat/.test(n)) return { purpose: "verification", specific: true };
  const words = n.split(/[^a-z0-9]+/);
  if (words.some((w) => w.endsWith("token") || signInParamWords.has(w))) return { purpose: "sign-in", specific: false };
  return null;
}

/** A random-looking token: ≥ 16 letters and digits mixed, a long hex or digit run, a UUID or a JWT. */
export function isLongToken(value: string): boolean {
  if (value.length < 16) return false;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return true;
  if (/^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/.test(value)) return true;
  for (const piece of value.split(/[-_.~+=/:,;]+/)) {
    if (piece.length < 16 || !/^[A-Za-z0-9]+$/.test(piece)) continue;
    const digits = piece.replace(/\D/g, "").length;
    const letters = piece.length - digits;
    if (/^[0-9a-f]+$/i.test(piece) || digits === piece.length) return true;
    if (digits >= 2 && letters >= 2) return true;
    if (/[a-z]/.test(piece) && /[A-Z]/.test(piece) && piece.length >= 20) return true;
  }
  return false;
}

/** A short random path segment (8–15 letters and digits, at least two of each): a short magic-link token. */
function isShortToken(segment: string): boolean {
  if (segment.length < 8 || segment.length > 15 || !/^[A-Za-z0-9]+$/.test(segment)) return false;
  const digits = segment.replace(/\D/g, "").length;
  return digits >= 2 && segment.length - digits >= 2;
}

/** Shaped like a one-time code: 4–12 digits, or 4–12 letters and digits with at least one digit. */
export function isShortCode(value: string): boolean {
  const v = value.replace(/[\s-]/g, "");
  return /^[0-9]{4,12}$/.test(v) || (/^[A-Za-z0-9]{4,12}$/.test(v) && /[0-9]/.test(v) && /[A-Za-z]/.test(v));
}

const redirectorHost = /(^|\.)(click|clicks|links?|track|tracking|trk|email|e|t|go|r|l|url\d*|ct|cl)\.|list-manage\.com$|mailchi\.mp$|sendgrid\.net$|hubspotlinks\.com$|awstrack\.me$|rs6\.net$|mandrillapp\.com$|exacttarget\.com$|^t\.co$|^bit\.ly$|^lnkd\.in$|safelinks\.protection\.outlook\.com$|urldefense/;
const redirectorPath = /^\/(ls\/click|wf\/click|track\/click|c|e|l|r|u|ct|cl|click|redirect|redir|out|link|links|go|t|ss\/c|CL0|L0)(\/|$)/i;

function isMeeting(u: URL): boolean {
  const h = u.hostname.toLowerCase();
  const p = u.pathname.toLowerCase();
  return (
    (/(^|\.)zoom\.(us|com)$/.test(h) && /^\/(j|w|my|s|wc)\//.test(p)) ||
    (h === "teams.microsoft.com" && p.includes("meetup-join")) ||
    h === "meet.google.com" ||
    (/(^|\.)webex\.com$/.test(h) && /meet|join|\/j\.php|\/m\//.test(p)) ||
    /(^|\.)gotomeeting\.com$|(^|\.)whereby\.com$|^meet\.jit\.si$/.test(h)
  );
}

/** Facts about one URL (not unwrapped). */
function factsOf(u: URL): Omit<UrlFacts, "chain" | "opaque"> {
  // Path words before host labels ("sso.example/reset" is a reset link).
  let access = pathPurpose(decodeOnce(u.pathname)) ?? pathPurpose(u.hostname.split(".").slice(0, -2).join("."));
  const pathHasAccessWord = access !== null;
  const segments = decodeOnce(u.pathname).split("/");
  let longToken = segments.some(isLongToken);
  let shortCode = segments.some(isShortToken);
  const values: string[] = [...u.pathname.split("/")];
  const params: [string, string][] = [...u.searchParams];
  if (u.hash.length > 1) params.push(...new URLSearchParams(u.hash.slice(1)));
  let specific: Purpose | null = null;
  let generic: Purpose | null = null;
  let credential = false;
  for (const [name, value] of params) {
    values.push(value);
    if (/^utm_/i.test(name)) continue;
    const long = isLongToken(value);
    const short = isShortCode(value);
    longToken ||= long;
    shortCode ||= short;
    const named = paramPurpose(name, value);
    if (!named) continue;
    const mode = name === "mode" || name === "action";
    if (long || short) credential = true;
    if (named.specific && (long || short || mode)) specific ??= named.purpose;
    else if (!named.specific && (long || short)) generic ??= named.purpose;
  }
  if (!(pathHasAccessWord && (longToken || shortCode))) access = null;
  // A specific parameter says most ("/auth/action?mode=verifyEmail&oobCode=…" verifies an address),
  // then the path ("/reset-password?token=…"), then a bare "token=".
  access = (specific && (credential || longToken) ? specific : null) ?? access ?? generic;
  const canonical = values.join(" ").toUpperCase().replace(/[^A-Z0-9]+/g, " ");
  return { access, longToken, shortCode, meeting: isMeeting(u), canonical };
}

/**
 * Everything `UrlFacts` says about `url` (absolute http/https; anything else gives empty facts).
 * Pure and bounded: at most 8 URLs parsed.
 */
export function inspectUrl(url: string): UrlFacts {
  const first = parse(url);
  const facts: UrlFacts = { chain: [url], access: null, longToken: false, shortCode: false, opaque: false, meeting: false, canonical: "" };
  if (!first) return facts;
  const queue: { u: URL; depth: number }[] = [{ u: first, depth: 0 }];
  const seen = new Set<string>([first.href]);
  for (let k = 0; k < queue.length; k++) {
    const { u, depth } = queue[k]!;
    const f = factsOf(u);
    facts.access ??= f.access;
    facts.longToken ||= f.longToken;
    facts.shortCode ||= f.shortCode;
    facts.meeting ||= f.meeting;
    facts.canonical += ` ${f.canonical}`;
    if (depth >= MAX_DEPTH) continue;
    for (const target of wrappedTargets(u)) {
      const t = parse(target);
      if (!t || seen.has(t.href) || seen.size >= MAX_CHAIN) continue;
      seen.add(t.href);
      facts.chain.push(t.href);
      queue.push({ u: t, depth: depth + 1 });
    }
  }
  // A redirector that hides its target carries something that names it ("/t/sourdough/18273" is a forum topic).
  const carries = facts.longToken || facts.shortCode || first.search.length > 1;
  facts.opaque = facts.chain.length === 1 && carries && (redirectorHost.test(first.hostname.toLowerCase()) || redirectorPath.test(first.pathname));
  return facts;
}
