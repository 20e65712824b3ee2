import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Clock } from "../../core/clock.js";

/** Name of the session cookie. */
export const SESSION_COOKIE = "familiar_session";
/** Header that carries the CSRF token on every state-changing request. */
export const CSRF_HEADER = "x-familiar-csrf";
/** How long a session lasts (ms): 30 days. */
export const SESSION_TTL_MS = 30 * 86_400_000;
/** How long a one-time sign-in link is valid (ms): 15 minutes. */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;
/** How long the owner's start-up link is valid (ms): 24 hours (a new one is logged at every start). */
export const OWNER_LINK_TTL_MS = 86_400_000;
/** What an owner link redeems to instead of a person id: the install's owner (see `webAccess`). */
export const OWNER = "owner";

/**
 * Who a browser is. `owner` sessions come from this machine (loopback) or from the setup password
 * and may change the install's setup; `person` sessions come from a one-time link and see only
 * their own person.
 */
export interface WebSession {
  personId: string;
  role: "owner" | "person";
  /** Epoch ms. */
  expiresAt: number;
}

/** How long a file download link is valid (ms): 7 days. */
export const FILE_LINK_TTL_MS = 7 * 86_400_000;

const fileTokenSchema = z.object({ p: z.string().min(1).max(100), a: z.string().min(1).max(100), e: z.number().int() });

const payloadSchema = z.object({ p: z.string().min(1).max(100), r: z.enum(["owner", "person"]), e: z.number().int(), n: z.string() });

/**
 * Signed, stateless session cookies (HMAC-SHA256 with a key kept in `DATA_DIR/web-session.key`,
 * mode 0600, so sessions survive restarts), CSRF tokens derived from the session, and one-time
 * sign-in links (kept in memory: an unused link dies with the process — ask for a new one).
 */
export class WebSessions {
  private readonly links = new Map<string, { personId: string; expiresAt: number }>();

  private constructor(
    private readonly key: Buffer,
    private readonly clock: Clock,
  ) {}

  /** Loads or creates the signing key under `dataDir`. */
  static async open(dataDir: string, clock: Clock): Promise<WebSessions> {
    const file = join(dataDir, "web-session.key");
    let key: Buffer;
    try {
      key = Buffer.from((await readFile(file, "utf8")).trim(), "hex");
      if (key.length !== 32) throw new Error(`${file} must hold 64 hex digits`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      key = randomBytes(32);
      try {
        await writeFile(file, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
        await chmod(file, 0o600);
      } catch (writeErr) {
        if ((writeErr as NodeJS.ErrnoException).code !== "EEXIST") throw writeErr;
        key = Buffer.from((await readFile(file, "utf8")).trim(), "hex");
      }
    }
    return new WebSessions(key, clock);
  }

  /** A signed cookie value for a new session of `personId`. */
  issue(personId: string, role: WebSession["role"]): { value: string; session: WebSession } {
    const session: WebSession = { personId, role, expiresAt: this.clock.now().getTime() + SESSION_TTL_MS };
    const payload = Buffer.from(JSON.stringify({ p: personId, r: role, e: session.expiresAt, n: randomBytes(9).toString("base64url") })).toString("base64url");
    return { value: `${payload}.${this.sign(payload)}`, session };
  }

  /** The session of a cookie value, or null when it is missing, forged or expired. */
  read(value: string | undefined): WebSession | null {
    if (!value) return null;
    const [payload, signature] = value.split(".");
    if (!payload || !signature || !safeEqual(signature, this.sign(payload))) return null;
    let parsed: z.infer<typeof payloadSchema>;
    try {
      parsed = payloadSchema.parse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
    } catch {
      return null;
    }
    if (parsed.e <= this.clock.now().getTime()) return null;
    return { personId: parsed.p, role: parsed.r, expiresAt: parsed.e };
  }

  /** The CSRF token of a session cookie value (the page sends it back in {@link CSRF_HEADER}). */
  csrfToken(cookieValue: string): string {
    return this.sign(`csrf:${cookieValue}`);
  }

  /** Whether `token` is the CSRF token of `cookieValue`. */
  checkCsrf(cookieValue: string, token: string | undefined): boolean {
    return token !== undefined && safeEqual(token, this.csrfToken(cookieValue));
  }

  /** A one-time sign-in token for `personId`, valid for {@link SIGN_IN_LINK_TTL_MS}. */
  createLink(personId: string, ttlMs = SIGN_IN_LINK_TTL_MS): string {
    this.sweep();
    const token = randomBytes(24).toString("base64url");
    this.links.set(token, { personId, expiresAt: this.clock.now().getTime() + ttlMs });
    return token;
  }

  /**
   * A one-time link for the install's owner, logged at start when other machines are served: the
   * way in for a first run where the browser is never loopback (Docker). Redeems to {@link OWNER}.
   */
  createOwnerLink(): string {
    return this.createLink(OWNER, OWNER_LINK_TTL_MS);
  }

  /** Uses up a sign-in token: the person it was made for, or null when unknown, used or expired. */
  redeemLink(token: string): string | null {
    this.sweep();
    const link = this.links.get(token);
    if (!link) return null;
    this.links.delete(token);
    return link.personId;
  }

  /**
   * A signed, stateless token for a download link to one of `personId`'s files, valid for
   * {@link FILE_LINK_TTL_MS} (sent when a messenger refused the file itself; see web/api/file-links.ts).
   */
  fileToken(personId: string, artifactId: string): string {
    const payload = Buffer.from(JSON.stringify({ p: personId, a: artifactId, e: this.clock.now().getTime() + FILE_LINK_TTL_MS })).toString("base64url");
    return `${payload}.${this.sign(`file:${payload}`)}`;
  }

  /** The person and file of a download token, or null when it is forged, malformed or expired. */
  readFileToken(token: string): { personId: string; artifactId: string } | null {
    const [payload, signature] = token.split(".");
    if (!payload || !signature || !safeEqual(signature, this.sign(`file:${payload}`))) return null;
    let json: unknown = null;
    try {
      json = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      return null;
    }
    const parsed = fileTokenSchema.safeParse(json);
    if (!parsed.success || parsed.data.e <= this.clock.now().getTime()) return null;
    return { personId: parsed.data.p, artifactId: parsed.data.a };
  }

  private sweep(): void {
    const now = this.clock.now().getTime();
    for (const [token, link] of this.links) if (link.expiresAt <= now) this.links.delete(token);
  }

  private sign(text: string): string {
    return createHmac("sha256", this.key).update(text).digest("base64url");
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Reads one cookie from a `Cookie` header (no library needed for one name). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}
