import { boundedJson, checkExpressRequest } from "../http/index.js";
import { plainErrors } from "./plain-errors.js";
import { MESSAGE_BODY_MAX_BYTES } from "../shared/index.js";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { z } from "zod";
import type { Clock } from "../../core/clock.js";
import { DuplicateKeyError } from "../../core/errors.js";
import { asId, type PersonId } from "../../core/ids.js";
import type { Logger } from "../../core/log/index.js";
import type { Store } from "../../core/storage/index.js";
import type { Person } from "../../core/persons/index.js";
import type { SetupStore } from "./setup-store.js";
import { findByName } from "./sign-in-names.js";
import { resolveTimeZone } from "../../core/time/index.js";
import {
  CSRF_HEADER,
  OWNER,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  cookieValue,
  type WebSession,
  type WebSessions,
} from "./sessions.js";

/** What every authenticated web API handler knows about its request. */
export interface WebContext {
  session: WebSession;
  person: Person;
  /** The request came from this machine (loopback address and Host). */
  loopback: boolean;
}

const contexts = new WeakMap<Request, WebContext>();

/** The context `requireSession` attached; throws when a route forgot the middleware (a programming error). */
export function webContext(req: Request): WebContext {
  const ctx = contexts.get(req);
  if (!ctx) throw new Error("web API route without requireSession");
  return ctx;
}

/** Options of the access layer. */
export interface WebAccessOptions {
  store: Pick<Store, "persons">;
  sessions: WebSessions;
  setup: SetupStore;
  clock: Clock;
  logger: Logger;
  /** Serve other machines too (LOCAL_CHAT_ALLOW_REMOTE); they must sign in. */
  allowRemote: boolean;
  /** Mark cookies `Secure` (PUBLIC_URL is https). */
  secureCookies: boolean;
}

/** Longest name for signing in by name, in characters (code points). */
export const LOCAL_NAME_MAX = 64;
/**
 * A name to sign in with on this machine: Unicode letters (with their accents), digits, spaces and
 * `. _ @ -`, 1–64 characters after trimming (inner runs of spaces become one). Too long is refused
 * with a sentence, never shortened.
 */
export const localNameSchema = z
  .string()
  .transform((name) => name.trim().replace(/\s+/g, " ").normalize("NFC"))
  .superRefine((name, ctx) => {
    const length = [...name].length;
    if (length === 0) ctx.addIssue({ code: "custom", message: "Please enter your name." });
    else if (length > LOCAL_NAME_MAX) ctx.addIssue({ code: "custom", message: `A name can be at most ${LOCAL_NAME_MAX} characters; this one has ${length}.` });
    else if (!/^[\p{L}\p{M}\p{N} ._@-]+$/u.test(name)) ctx.addIssue({ code: "custom", message: "A name can have letters, digits, spaces and . _ @ - only." });
  });
const localName = z
  .object({
    name: localNameSchema,
    /** Yes, make a new person when no one here has this name (the page asked first). */
    create: z.boolean().optional(),
    /** The one chosen when several persons answer to the name. */
    personId: z.string().min(1).max(100).optional(),
    /** The browser's zone, proposed on the first screen; a new person starts in it. */
    timeZone: z.string().max(64).optional(),
  })
  .strict();
const linkBody = z.object({ token: z.string().min(10).max(200) }).strict();
const passwordBody = z.object({ password: z.string().min(1).max(500) }).strict();

/** The request's signed-in session and person, or null. */
function sessionOf(options: Pick<WebAccessOptions, "sessions" | "store">) {
  return async (req: Request) => {
    const cookie = cookieValue(req.headers.cookie, SESSION_COOKIE);
    const session = options.sessions.read(cookie);
    const person = session ? await options.store.persons.getPerson(asId("person", session.personId)) : null;
    return session && person && cookie ? { cookie, session, person } : null;
  };
}

/** For pages (GET only): attaches the signed-in person, or sends the browser to the sign-in page. */
function pageSession(signedIn: ReturnType<typeof sessionOf>, isLoopback: (req: Request) => boolean) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const found = await signedIn(req);
    if (!found) return void res.redirect(302, "/signin");
    contexts.set(req, { session: found.session, person: found.person, loopback: isLoopback(req) });
    next();
  };
}

/**
 * Access to the web app (pages and `/api/web/*`):
 * - by default only this machine is served (loopback address, loopback Host, same-site Origin), as
 *   before; there a person signs in by name (like the old local chat) and gets an owner session;
 * - with `allowRemote`, other machines are served too but must sign in: a one-time link (the person
 *   sends `/web` to Familiar on a linked messenger) or the password set on the setup page;
 * - sessions are signed cookies, `HttpOnly; SameSite=Strict`; every state-changing request must
 *   carry the session's CSRF token in `X-Familiar-CSRF` and, when the browser sends one, an Origin
 *   of this very host;
 * - every handler sees only `webContext(req).person`: one person never reaches another's data.
 */
export function webAccess(options: WebAccessOptions) {
  const { sessions, store, logger } = options;
  const failures = new Map<string, { count: number; since: number }>();

  /** Refuses requests this install does not serve at all (foreign machines without allowRemote, cross-site). */
  const gate = (req: Request, res: Response, next: NextFunction): void => {
    const local = checkExpressRequest(req, false);
    if (local.ok) return next();
    if (!options.allowRemote) {
      res.status(403).json({ error: `Familiar's web app only serves this machine: ${local.reason}. LOCAL_CHAT_ALLOW_REMOTE=true lets other machines sign in.` });
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !sameHost(origin, req.headers.host)) {
      res.status(403).json({ error: "requests from other sites are refused" });
      return;
    }
    next();
  };

  const isLoopback = (req: Request) => checkExpressRequest(req, false).ok;
  const signedIn = sessionOf(options);

  /** Attaches the signed-in person; 401 without a valid session; CSRF check on writes. */
  const requireSession = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const found = await signedIn(req);
    if (!found) return void res.status(401).json({ error: "Sign in first.", signIn: true });
    const { cookie, session, person } = found;
    if (!["GET", "HEAD", "OPTIONS"].includes(req.method) && !sessions.checkCsrf(cookie, header(req, CSRF_HEADER))) {
      res.status(403).json({ error: "This request lacks the page's CSRF token; reload the page." });
      return;
    }
    contexts.set(req, { session, person, loopback: isLoopback(req) });
    next();
  };

  const startSession = (res: Response, personId: PersonId, role: WebSession["role"]) => {
    const { value } = sessions.issue(personId, role);
    res.cookie(SESSION_COOKIE, value, { httpOnly: true, sameSite: "strict", secure: options.secureCookies, path: "/", maxAge: SESSION_TTL_MS });
    return { csrf: sessions.csrfToken(value) };
  };

  /** Slows password guessing: 5 failures per client address per 10 minutes. */
  const throttled = (req: Request): boolean => {
    const key = req.socket.remoteAddress ?? "?";
    const now = options.clock.now().getTime();
    const entry = failures.get(key);
    if (!entry || now - entry.since > 10 * 60_000) return false;
    return entry.count >= 5;
  };
  const failed = (req: Request) => {
    const key = req.socket.remoteAddress ?? "?";
    const now = options.clock.now().getTime();
    const entry = failures.get(key);
    if (!entry || now - entry.since > 10 * 60_000) failures.set(key, { count: 1, since: now });
    else entry.count++;
  };

  const router: Router = express.Router();
  // Room for one message at its stated limit (web/shared/message-limit.ts); longer texts get a clear 413.
  router.use("/api/web", gate, ...boundedJson({ limit: MESSAGE_BODY_MAX_BYTES, source: "web" }));
  // Sign-in requests carry no session yet: JSON only (a cross-site form cannot send it without CORS).
  router.use("/api/web/session", (req, res, next) => {
    if (req.method === "POST" && !req.is("application/json")) return void res.status(415).json({ error: "send JSON" });
    next();
  });

  router.get("/api/web/session", async (req, res) => {
    const cookie = cookieValue(req.headers.cookie, SESSION_COOKIE);
    const session = sessions.read(cookie);
    const person = session ? await store.persons.getPerson(asId("person", session.personId)) : null;
    const loopback = isLoopback(req);
    if (!session || !person || !cookie) {
      res.json({ signedIn: false, loopback, passwordSet: options.setup.hasPassword() });
      return;
    }
    res.json({ signedIn: true, loopback, role: session.role, csrf: sessions.csrfToken(cookie), person: { id: person.id, displayName: person.displayName, timeZone: person.timeZone } });
  });

  router.post("/api/web/session/local", (req, res) => {
    if (!isLoopback(req)) return void res.status(403).json({ error: "Signing in by name works only on the Familiar machine itself; use a sign-in link or the password." });
    return signInByName(store, req.body, res, (id) => startSession(res, id, "owner"));
  });

  router.post("/api/web/session/link", async (req, res) => {
    const body = linkBody.safeParse(req.body);
    const personId = body.success ? sessions.redeemLink(body.data.token) : null;
    // The owner's start-up link: the person who set the password, else the local person "owner".
    const owner = personId === OWNER;
    const ownerId = owner ? (options.setup.passwordPerson() ?? (await localPerson(store, "owner")).id) : null;
    const person = personId ? await store.persons.getPerson(asId("person", ownerId ?? personId)) : null;
    if (!person) return void res.status(401).json({ error: "This sign-in link is unknown, used or expired. Send /web to Familiar for a new one." });
    logger.info({ personId: person.id, owner }, "web app: signed in with a one-time link");
    res.json({ signedIn: true, ...startSession(res, person.id, owner ? "owner" : "person") });
  });

  router.post("/api/web/session/password", async (req, res) => {
    if (throttled(req)) return void res.status(429).json({ error: "Too many wrong passwords; wait 10 minutes." });
    const body = passwordBody.safeParse(req.body);
    const personId = body.success ? await options.setup.checkPassword(body.data.password) : null;
    const person = personId ? await store.persons.getPerson(asId("person", personId)) : null;
    if (!person) {
      failed(req);
      return void res.status(401).json({ error: options.setup.hasPassword() ? "Wrong password." : "No password is set; set one on the setup page on the Familiar machine." });
    }
    res.json({ signedIn: true, ...startSession(res, person.id, "owner") });
  });

  router.post("/api/web/session/logout", (_req, res) => {
    res.clearCookie(SESSION_COOKIE, { path: "/" });
    res.json({ signedIn: false });
  });

  return { router, gate, requireSession, requirePageSession: pageSession(signedIn, isLoopback) };
}

/**
 * `POST /api/web/session/local` on this machine: the person a name belongs to (any spelling,
 * `findByName`) is signed in; several matching persons are offered to choose from, nothing merged;
 * a name never seen is asked about first (`create: true` makes the person, in `timeZone`).
 */
async function signInByName(store: Pick<Store, "persons">, input: unknown, res: Response, startSession: (id: PersonId) => { csrf: string }): Promise<void> {
  const body = localName.safeParse(input);
  if (!body.success) return void res.status(400).json({ error: plainErrors(body.error) });
  const { name, create, personId } = body.data;
  const match = await findByName(store, name);
  let person: Person;
  if (match.kind === "one") person = match.person;
  else if (match.kind === "many") {
    const chosen = match.persons.find((p) => p.id === personId);
    if (!chosen) {
      const choices = match.persons.map((p) => ({ id: p.id, displayName: p.displayName, since: p.createdAt.toISOString() }));
      return void res.json({ signedIn: false, confirm: "choose", name, choices });
    }
    person = chosen;
  } else {
    if (create !== true) return void res.json({ signedIn: false, confirm: "new", name, firstPerson: (await store.persons.listPersons({ limit: 1 })).items.length === 0 });
    const zone = body.data.timeZone === undefined ? undefined : resolveTimeZone(body.data.timeZone);
    if (zone === null) return void res.status(400).json({ error: `“${body.data.timeZone}” is not a time zone Familiar knows. Type a city such as Berlin, or a zone such as Europe/Berlin.` });
    person = await localPerson(store, name, zone);
  }
  res.json({ signedIn: true, ...startSession(person.id) });
}

/**
 * The person behind an exact local name, created with a local identity when there is none (the
 * sign-in route asks first and matches spellings with `findByName`); a new person starts in
 * `timeZone` when given (an IANA name), else in the store's default.
 */
export async function localPerson(store: Pick<Store, "persons">, name: string, timeZone?: string): Promise<Person> {
  const existing = await store.persons.findIdentity("local", name);
  const known = existing && (await store.persons.getPerson(existing.personId));
  if (known) return known;
  const person = await store.persons.createPerson({ displayName: name, ...(timeZone !== undefined && { timeZone }) });
  try {
    await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: name, address: name });
    return person;
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
    const raced = await store.persons.findIdentity("local", name);
    const other = raced && (await store.persons.getPerson(raced.personId));
    if (!other) throw err;
    return other;
  }
}

/** The person's account on the local channel (created when they have none, e.g. a Telegram-only person). */
export async function localAccountOf(store: Pick<Store, "persons">, person: Person): Promise<string> {
  const local = (await store.persons.listIdentities(person.id)).find((i) => i.channel === "local");
  if (local) return local.accountId;
  try {
    await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: person.id, address: person.id });
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
    // Someone chose this person's id as a local name: never speak as them.
    const taken = await store.persons.findIdentity("local", person.id);
    if (taken?.personId !== person.id) throw new Error(`the local account ${person.id} belongs to another person`);
  }
  return person.id;
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return origin !== "null" && host !== undefined && new URL(origin).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}
