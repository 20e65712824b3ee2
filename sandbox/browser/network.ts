/**
 * The browser context's request interception (Playwright `context.route`), the semantic half of the
 * network door (the proxy in `proxy.ts` is the address half).
 *
 * Reads (GET, HEAD, OPTIONS) pass on to the proxy, which judges their destination. Every request that
 * can change something — POST, PUT, PATCH, DELETE, any other method — is stopped unless it is the
 * one write the person approved for the action running now ({@link NetworkGuard.arm}): same method,
 * same origin and path, and the same fields (a form's pairs; any other body by its exact bytes). A
 * stopped write is kept as an observation, so the next attempt can ask the person with exactly what
 * the page tried to send. Service workers are blocked by the context (`serviceWorkers: "block"`).
 */
import { createHash } from "node:crypto";
import type { BrowserContext, Route } from "playwright-core";
import { InFlight } from "./in-flight.js";
import type { FormField } from "./page-scripts.js";
import type { DeniedRequest } from "./proxy.js";

/** A write the page sent or tried to send. */
export interface ObservedWrite {
  method: string;
  /** Origin, path and query. */
  url: string;
  /** Parsed form fields (urlencoded or multipart), or null for another kind of body. */
  fields: { name: string; value: string }[] | null;
  /** SHA-256 (hex) of the raw body. */
  bodyDigest: string;
  /** Body size, bytes. */
  bytes: number;
  contentType: string;
}

/** The single write allowed while an approved action runs. */
export interface AllowedWrite {
  method: string;
  url: string;
  /** Exact pairs the body must hold (order ignored), or null to match by `bodyDigest`. */
  fields: { name: string; value: string }[] | null;
  bodyDigest?: string;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);
const MAX_OBSERVED = 20;

/** Request interception for one person's context. */
export class NetworkGuard {
  /**
   * @param options.secretCheck the outbound secret check (the vault's `unboundIn`): a request (any
   *   method — navigation, form post, fetch, image) whose URL, headers or body carry a vault value to
   *   an origin that secret is not bound to is aborted and reported (`secret_unbound_destination`,
   *   with the origin only).
   */
  constructor(private readonly options: { secretCheck?: (texts: readonly string[], origin: string) => string[]; onDenied?: (denied: DeniedRequest) => void } = {}) {}

  private allowed: AllowedWrite | null = null;
  private sent: ObservedWrite[] = [];
  private stopped: ObservedWrite[] = [];
  private readonly inFlight = new InFlight();

  /** Installs the route on the context (every request of every page of it). */
  async install(context: BrowserContext): Promise<void> {
    await context.route("**/*", (route) => this.inFlight.track(this.onRoute(route)));
  }

  /**
   * Resolves once every request intercepted so far has been decided (and a refusal reported through
   * `onDenied`), or after `timeoutMs`, ms.
   */
  settled(timeoutMs: number): Promise<void> {
    return this.inFlight.settled(timeoutMs);
  }

  /** Allows exactly one matching write until {@link disarm}. */
  arm(write: AllowedWrite): void {
    this.allowed = write;
    this.sent = [];
    this.stopped = [];
  }

  /** Ends the approved window; returns what was sent and what was stopped meanwhile. */
  disarm(): { sent: ObservedWrite[]; stopped: ObservedWrite[] } {
    this.allowed = null;
    const out = { sent: this.sent, stopped: this.stopped };
    this.sent = [];
    this.stopped = [];
    return out;
  }

  /** Writes stopped since the last call (the page tried to send them without approval). */
  takeStopped(): ObservedWrite[] {
    const out = this.stopped;
    this.stopped = [];
    return out;
  }

  /** The outbound secret check of one request; reports a refusal (origin only, never the URL that holds the value). */
  private carriesUnboundSecret(url: string, headers: Record<string, string>, body: Buffer | null): boolean {
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return false;
    }
    const texts = [url, ...Object.values(headers), ...(body && body.length > 0 ? [body.toString("utf8")] : [])];
    const names = this.options.secretCheck!(texts, origin);
    if (names.length === 0) return false;
    this.options.onDenied?.({ url: origin, code: "secret_unbound_destination", reason: `the request would carry the value of secret ${names.join(", ")}, which is not bound to ${origin}` });
    return true;
  }

  private async onRoute(route: Route): Promise<void> {
    const request = route.request();
    const method = request.method().toUpperCase();
    try {
      if (this.options.secretCheck && this.carriesUnboundSecret(request.url(), await request.allHeaders(), request.postDataBuffer())) {
        if (request.isNavigationRequest()) await route.fulfill({ status: 204, body: "" });
        else await route.abort("blockedbyclient");
        return;
      }
      if (READS.has(method)) {
        await route.continue();
        return;
      }
      const body = request.postDataBuffer() ?? Buffer.alloc(0);
      const contentType = (await request.headerValue("content-type")) ?? "";
      const observed = observe(method, request.url(), body, contentType);
      if (this.allowed !== null && writeMatches(this.allowed, observed)) {
        this.allowed = null;
        this.sent.push(observed);
        await route.continue();
        return;
      }
      if (this.stopped.length < MAX_OBSERVED) this.stopped.push(observed);
      // A stopped form navigation answers 204, so the page stays as it was (no error page); other writes fail.
      if (request.isNavigationRequest()) await route.fulfill({ status: 204, body: "" });
      else await route.abort("blockedbyclient");
    } catch {
      // The page or context went away while the request was pending: nothing to do.
    }
  }
}

/** Parses a request body into an observation. */
export function observe(method: string, url: string, body: Buffer, contentType: string): ObservedWrite {
  return {
    method,
    url: stripFragment(url),
    fields: parseFields(body, contentType),
    bodyDigest: createHash("sha256").update(body).digest("hex"),
    bytes: body.length,
    contentType,
  };
}

/** True when an observed write is the allowed one. */
export function writeMatches(allowed: AllowedWrite, observed: ObservedWrite): boolean {
  if (allowed.method !== observed.method) return false;
  if (stripFragment(allowed.url) !== observed.url) return false;
  if (allowed.fields !== null) return observed.fields !== null && samePairs(allowed.fields, observed.fields);
  return allowed.bodyDigest !== undefined && allowed.bodyDigest === observed.bodyDigest;
}

/** Form fields as the pairs a submission sends (files by file name, line breaks normalised). */
export function pairsOf(fields: readonly FormField[]): { name: string; value: string }[] {
  return fields.map((f) => ({ name: f.name, value: f.type === "file" ? f.value.replace(/ \(\d+ bytes\)$/, "") : f.value }));
}

function samePairs(a: readonly { name: string; value: string }[], b: readonly { name: string; value: string }[]): boolean {
  if (a.length !== b.length) return false;
  const key = (p: { name: string; value: string }) => JSON.stringify([p.name, p.value.replace(/\r\n/g, "\n")]);
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.every((k, i) => k === right[i]);
}

function stripFragment(url: string): string {
  const hash = url.indexOf("#");
  return hash === -1 ? url : url.slice(0, hash);
}

/** urlencoded and multipart bodies as pairs (multipart files by file name); null for other bodies. */
function parseFields(body: Buffer, contentType: string): { name: string; value: string }[] | null {
  const type = contentType.toLowerCase();
  if (type.startsWith("application/x-www-form-urlencoded")) {
    return [...new URLSearchParams(body.toString("utf8"))].map(([name, value]) => ({ name, value }));
  }
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (boundary === undefined) return null;
  const out: { name: string; value: string }[] = [];
  for (const part of body.toString("latin1").split(`--${boundary}`).slice(1)) {
    if (part.startsWith("--")) break;
    const split = part.indexOf("\r\n\r\n");
    if (split === -1) continue;
    const head = part.slice(0, split);
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) continue;
    const file = /filename="([^"]*)"/i.exec(head)?.[1];
    const value = part.slice(split + 4).replace(/\r\n$/, "");
    out.push({ name: Buffer.from(name, "latin1").toString("utf8"), value: file !== undefined ? Buffer.from(file, "latin1").toString("utf8") : Buffer.from(value, "latin1").toString("utf8") });
  }
  return out;
}
