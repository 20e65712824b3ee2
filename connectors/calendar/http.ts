/**
 * The calendar connector's one door to the network: {@link CalendarHttp}, an HTTP exchange as
 * Sentinel's egress guard makes it (every hop's address checked and pinned, private addresses
 * refused unless allow-listed, byte and time limits). `EgressGuard` satisfies it as it is; tests
 * pass the same guard with their loopback server allow-listed. CalDAV (tsdav) reaches the network
 * only through {@link davFetch}, a `fetch` built on this port.
 */
import { EgressDeniedError, EgressFailedError } from "../../core/egress/index.js";
import { SecretError } from "../../core/secrets/index.js";
import { CalendarError } from "./errors.js";

/** One HTTP exchange through the egress guard (the subset of `EgressGuard.request` the calendar uses). */
export interface CalendarHttp {
  request(
    url: string,
    init: {
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      signal?: AbortSignal;
      /** Follow redirects (re-checked on every hop); false returns a 3xx as it is. */
      followRedirects?: boolean;
      /** Largest body accepted, bytes. */
      maxBytes?: number;
      timeoutMs?: number;
    },
  ): Promise<{ url: string; status: number; headers: Record<string, string>; body: Buffer }>;
}

/** Statuses whose response must not carry a body (the WHATWG `Response` constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A WHATWG `fetch` for tsdav that sends every request through `http`. `redirect: "manual"` (tsdav's
 * `.well-known` discovery) returns the 3xx itself; anything else follows redirects through the guard.
 * Guard refusals become `CalendarError("unreachable")`.
 */
export function davFetch(http: CalendarHttp, limits: { maxBytes: number; timeoutMs: number }): typeof fetch {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    // tsdav sends XML strings; anything else is stringified as before (URLSearchParams as a query string).
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    const body = init?.body === undefined || init.body === null ? undefined : typeof init.body === "string" ? init.body : String(init.body);
    const response = await guarded(url, () =>
      http.request(url, {
        method: init?.method ?? "GET",
        headers,
        body,
        signal: init?.signal ?? undefined,
        followRedirects: init?.redirect !== "manual",
        maxBytes: limits.maxBytes,
        timeoutMs: limits.timeoutMs,
      }),
    );
    const out = new Response(NULL_BODY.has(response.status) ? null : new Uint8Array(response.body), { status: response.status, headers: response.headers });
    Object.defineProperty(out, "url", { value: response.url });
    return out;
  };
}

/**
 * Runs one exchange, turning the egress guard's refusals (an address, or a vault value the request
 * would carry) and failures into `CalendarError`s that say what happened to which URL.
 */
export async function guarded<T>(url: string, exchange: () => Promise<T>): Promise<T> {
  try {
    return await exchange();
  } catch (error) {
    if (error instanceof EgressDeniedError) {
      throw new CalendarError("unreachable", `${hostOf(url)} cannot be reached from Familiar (${error.reason})`, { cause: error });
    }
    if (error instanceof SecretError) {
      // The outbound check: the request would carry a vault value not meant for this server (names only).
      throw new CalendarError("unreachable", `nothing was sent to ${hostOf(url)}: ${error.message}`, { cause: error });
    }
    if (error instanceof EgressFailedError) {
      if (error.code === "too_large") throw new CalendarError("too_large", error.message, { cause: error });
      throw new CalendarError("unreachable", `${hostOf(url)} did not answer (${error.code}): ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/** `https://host:port` of a URL, for messages (never a path, query or credentials). */
export function hostOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the server";
  }
}
