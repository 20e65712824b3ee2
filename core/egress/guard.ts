/**
 * The network egress guard: the only way Familiar's tools reach the network.
 *
 * Every hop (the first request and each redirect) is checked twice: the URL before resolution
 * (http/https only; IP literals must be public) and every address its host resolves to (all must
 * be public). The connection is then pinned to the checked address — an undici `Agent` whose
 * `connect.lookup` can only return that address — so a second DNS answer (DNS rebinding) cannot
 * swap in a private one between check and connect. Redirects are followed by hand (at most
 * `maxRedirects`, re-checked on every hop); a redirect to another origin is a new action — it drops
 * every header (credentials never cross an origin change), never carries a body, and is followed
 * only when `beforeCrossOrigin` (Sentinel) agrees. Bodies are limited in bytes and the whole
 * exchange in ms.
 *
 * `PRIVATE_HOSTS_ALLOWED` (exact `host:port` entries, matched against the URL's host and port) lets
 * deliberate private hosts through: a home server, a test server on 127.0.0.1. Metadata addresses
 * stay refused even then. Grants still apply: this guard only says whether a place is reachable.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress } from "node:dns";
import type { Agent as UndiciAgent } from "undici";
import { classifyAddress, isIpLiteral } from "./addresses.js";
import { EgressDeniedError, EgressFailedError } from "./errors.js";
import { SecretError } from "../secrets/index.js";

/** Resolves a hostname to every address it has (like `dns.lookup(host, { all: true })`). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** Settings of an {@link EgressGuard}. */
export interface EgressOptions {
  /** Exact `host:port` entries allowed although private (PRIVATE_HOSTS_ALLOWED). */
  privateHostsAllowed?: readonly string[];
  /** DNS resolution (default `dns.promises.lookup` with `all: true`); tests inject their own. */
  resolve?: Resolver;
  /** Largest response body accepted, bytes (default 2 MiB). */
  maxBytes?: number;
  /** Time limit of a whole exchange including redirects and body, ms (default 15 000). */
  timeoutMs?: number;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
  /**
   * The outbound secret check (the vault's `unboundIn`): names of the secrets whose value appears in
   * `texts` (the hop's URL, header values, body) although `origin` is not bound to them. Any name
   * stops the hop before it is sent (`secret_unbound_destination`), on the first request and on
   * every redirect.
   */
  outboundCheck?: (texts: readonly string[], origin: string) => string[];
}

/** A URL that passed the guard, with the address the connection must use. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
  /** The host:port is in PRIVATE_HOSTS_ALLOWED (so a private address was accepted). */
  allowListed: boolean;
}

/** One HTTP exchange through the guard. */
export interface EgressRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Follow redirects (GET-like reads); when false a 3xx is returned as is. Default true. */
  followRedirects?: boolean;
  maxBytes?: number;
  timeoutMs?: number;
  /**
   * Called before following a redirect to **another origin** (a new action: Sentinel checks it
   * against the grants like a new request). `"stop"` returns the redirect response as it is.
   * Without it, cross-origin redirects are followed (after the address checks).
   */
  beforeCrossOrigin?: (next: URL, from: URL, method: string) => Promise<"follow" | "stop">;
}

/** The final response (after redirects). */
export interface EgressResponse {
  /** The URL that answered (after redirects). */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Every URL visited before the final one. */
  redirects: string[];
  /** The address the final connection was pinned to. */
  address: string;
  /** Set when a redirect was not followed: where it pointed and why. */
  stopped?: { location: string; reason: "not_granted" | "would_carry_body" };
}

const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** `host:port` of a URL, lower-cased, with the scheme's default port filled in. */
export function hostPortOf(url: URL): string {
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  return `${url.hostname.toLowerCase()}:${port}`;
}

/**
 * Checks a URL without resolving it: well formed, http or https, and — when the host is an IP
 * literal — a public address (or an allow-listed host:port). WHATWG URL parsing first normalizes
 * spellings like `0x7f.1`, `2130706433`, `127.1` and `[::ffff:127.0.0.1]` to their canonical form,
 * so they are judged as the address they are.
 *
 * @throws EgressDeniedError (`invalid_url`, `scheme_not_allowed`, `private_address`, `metadata_address`)
 */
export function precheckUrl(raw: string, privateHostsAllowed: ReadonlySet<string> = new Set()): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EgressDeniedError("invalid_url", raw, null, "not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new EgressDeniedError("scheme_not_allowed", url.href, null, `only http and https are allowed, not ${url.protocol.replace(/:$/, "")}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new EgressDeniedError("invalid_url", url.href.replace(/\/\/[^@/]*@/, "//***@"), null, "credentials in URLs are not allowed; use a vault secret in a header");
  }
  if (isIpLiteral(url.hostname)) {
    const verdict = classifyAddress(url.hostname);
    if (!verdict.public && (verdict.code === "metadata_address" || !privateHostsAllowed.has(hostPortOf(url)))) {
      throw new EgressDeniedError(verdict.code, url.href, verdict.address, `${verdict.range} address`);
    }
  }
  return url;
}

/** The egress guard. One instance per process, shared by every tool (and later the browser). */
export class EgressGuard {
  private readonly allowed: ReadonlySet<string>;
  private readonly resolve: Resolver;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  private readonly outboundCheck: ((texts: readonly string[], origin: string) => string[]) | undefined;

  constructor(options: EgressOptions = {}) {
    this.outboundCheck = options.outboundCheck;
    this.allowed = new Set((options.privateHostsAllowed ?? []).map((e) => e.toLowerCase()));
    this.resolve = options.resolve ?? defaultResolve;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  }

  /** {@link precheckUrl} with this guard's allow-list (no DNS). */
  precheck(raw: string): URL {
    return precheckUrl(raw, this.allowed);
  }

  /**
   * Full check of one hop: the URL, then every address its host resolves to. Returns the address
   * to pin the connection to. The browser calls this for every request it is about to make.
   *
   * @throws EgressDeniedError (`unresolvable` when resolution fails or returns nothing)
   */
  async check(raw: string): Promise<CheckedTarget> {
    const url = this.precheck(raw);
    const allowListed = this.allowed.has(hostPortOf(url));
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    if (isIpLiteral(host)) return { url, address: host, family: host.includes(":") ? 6 : 4, allowListed };
    let addresses: { address: string; family: number }[];
    try {
      addresses = await this.resolve(host);
    } catch (error) {
      throw new EgressDeniedError("unresolvable", url.href, null, `cannot resolve ${host}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (addresses.length === 0) throw new EgressDeniedError("unresolvable", url.href, null, `${host} has no addresses`);
    for (const { address } of addresses) {
      const verdict = classifyAddress(address);
      if (verdict.public) continue;
      if (verdict.code === "private_address" && allowListed) continue;
      throw new EgressDeniedError(verdict.code, url.href, address, `${host} resolves to a ${verdict.range} address`);
    }
    const first = addresses[0]!;
    return { url, address: first.address, family: first.family === 6 ? 6 : 4, allowListed };
  }

  /**
   * Makes one HTTP exchange: checks and pins every hop, follows redirects by hand, enforces the
   * byte and time limits.
   *
   * @throws EgressDeniedError when a hop is refused (nothing is sent to it)
   * @throws EgressFailedError on timeout, an oversized body, abort or a network failure
   */
  async request(raw: string, init: EgressRequest = {}): Promise<EgressResponse> {
    const timeoutMs = init.timeoutMs ?? this.timeoutMs;
    const maxBytes = init.maxBytes ?? this.maxBytes;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let method = (init.method ?? "GET").toUpperCase();
    let body = init.body;
    let headers = { ...init.headers };
    const redirects: string[] = [];
    let current = raw;
    for (;;) {
      const target = await this.check(current);
      this.assertNoUnboundSecret(target.url, headers, body);
      const response = await this.exchange(target, { method, headers, body, signal, maxBytes }, timeout);
      const location = response.headers.location;
      if (!REDIRECTS.has(response.status) || location === undefined || init.followRedirects === false) {
        return { ...response, redirects };
      }
      if (redirects.length >= this.maxRedirects) {
        throw new EgressDeniedError("too_many_redirects", target.url.href, target.address, `more than ${this.maxRedirects} redirects`);
      }
      redirects.push(target.url.href);
      const next = new URL(location, target.url);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
      }
      if (next.origin !== target.url.origin) {
        // Unreachable places are refused as such (field case B1), before anyone is asked.
        this.precheck(next.href);
        // A body never travels on to an origin nobody judged (307/308 keep it).
        if (body !== undefined) return { ...response, redirects, stopped: { location: next.href, reason: "would_carry_body" } };
        if (init.beforeCrossOrigin && (await init.beforeCrossOrigin(next, target.url, method)) === "stop") {
          return { ...response, redirects, stopped: { location: next.href, reason: "not_granted" } };
        }
        // Like fetch: headers (credentials included) never follow a redirect to another origin.
        headers = {};
      }
      current = next.href;
    }
  }

  /**
   * The outbound check for one hop (see {@link EgressOptions.outboundCheck}).
   * @throws SecretError `secret_unbound_destination` (names only, never a value)
   */
  assertNoUnboundSecret(url: URL, headers: Record<string, string> = {}, body?: string): void {
    if (this.outboundCheck === undefined) return;
    const names = this.outboundCheck([url.href, ...Object.keys(headers), ...Object.values(headers), ...(body === undefined ? [] : [body])], url.origin);
    if (names.length > 0) {
      throw new SecretError("secret_unbound_destination", `a request to ${url.origin} would carry the value of secret ${names.join(", ")}, which is not bound to that origin; nothing was sent`);
    }
  }

  private async exchange(
    target: CheckedTarget,
    init: { method: string; headers: Record<string, string>; body: string | undefined; signal: AbortSignal; maxBytes: number },
    timeout: AbortSignal,
  ): Promise<Omit<EgressResponse, "redirects">> {
    // undici is loaded on the first request (it is needed only when a tool reaches the network).
    const { Agent, request } = await import("undici");
    const agent: UndiciAgent = new Agent({ connect: { lookup: pinnedLookup(target.address, target.family) }, connections: 1 });
    const href = target.url.href;
    try {
      const res = await request(href, {
        method: init.method as "GET",
        headers: init.headers,
        body: init.body,
        signal: init.signal,
        dispatcher: agent,
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      const declared = Number(headers["content-length"] ?? NaN);
      if (Number.isFinite(declared) && declared > init.maxBytes) {
        discard(res.body);
        throw new EgressFailedError("too_large", href, `the response of ${href} is ${declared} bytes, over the limit of ${init.maxBytes}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > init.maxBytes) {
          discard(res.body);
          throw new EgressFailedError("too_large", href, `the response of ${href} is over the limit of ${init.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { url: href, status: res.statusCode, headers, body: Buffer.concat(chunks), address: target.address };
    } catch (error) {
      if (error instanceof EgressFailedError || error instanceof EgressDeniedError) throw error;
      if (timeout.aborted) throw new EgressFailedError("timeout", href, `${href} did not answer within the time limit`, { cause: error });
      if (init.signal.aborted) throw new EgressFailedError("aborted", href, `the request to ${href} was cancelled`, { cause: error });
      throw new EgressFailedError("network", href, `the request to ${href} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    } finally {
      void agent.destroy().catch(() => undefined);
    }
  }
}

/** Stops reading a body we refuse; the abort error it emits is expected and ignored. */
function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on("error", () => undefined);
  body.destroy();
}

/** A `lookup` for `net.connect` that can only answer the address the guard checked. */
function pinnedLookup(address: string, family: 4 | 6) {
  return (
    _hostname: string,
    options: { all?: boolean } | number | undefined,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    if (typeof options === "object" && options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

async function defaultResolve(hostname: string): Promise<{ address: string; family: number }[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}
