/**
 * Read-only iCalendar feeds by URL (a school's term dates, a club's fixtures), fetched through the
 * egress guard with conditional requests (RFC 9110 §13: `If-None-Match` with the stored ETag,
 * `If-Modified-Since` with the stored Last-Modified), so an unchanged feed costs a 304.
 *
 * A feed that is too large, answers a web page, or is not iCalendar is one clear error and the copy
 * stored from its last good fetch stays; a bad event inside a good feed is an item error and the
 * other events are kept (`parseICalendar`).
 */
import { CalendarError } from "./errors.js";
import { guarded, hostOf, type CalendarHttp } from "./http.js";
import { NotICalendarError, parseICalendar, type ParsedCalendar } from "./ical/parse.js";

/** What is stored from a feed's last good fetch, for the next conditional request. */
export interface FeedValidators {
  etag: string | null;
  lastModified: string | null;
}

/** The outcome of fetching a feed. */
export type FeedFetch =
  | { kind: "unchanged" }
  | { kind: "changed"; url: string; validators: FeedValidators; parsed: ParsedCalendar; bytes: number };

/** Largest feed accepted by default: 10 MiB (a large school district's feed is well under 2 MiB). */
export const DEFAULT_FEED_MAX_BYTES = 10 * 1024 * 1024;

/**
 * `webcal://` (how many sites link feeds) as `https://`; anything else as it is.
 * @throws CalendarError `unreachable` for a URL that is not http(s)/webcal
 */
export function feedUrl(raw: string): string {
  const trimmed = raw.trim();
  const url = /^webcals?:\/\//i.test(trimmed) ? trimmed.replace(/^webcals?:\/\//i, "https://") : trimmed;
  if (!/^https?:\/\//i.test(url)) throw new CalendarError("unreachable", "a calendar feed URL must start with https://, http:// or webcal://");
  return url;
}

/**
 * Fetches a feed, conditionally when `validators` are given.
 *
 * @throws CalendarError `too_large`, `not_icalendar`, `unauthorized`, `not_found`, `server_error`, `unreachable`
 */
export async function fetchFeed(
  http: CalendarHttp,
  raw: string,
  validators: FeedValidators | null,
  options: { maxBytes?: number; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<FeedFetch> {
  const url = feedUrl(raw);
  const maxBytes = options.maxBytes ?? DEFAULT_FEED_MAX_BYTES;
  const headers: Record<string, string> = { accept: "text/calendar, application/calendar+xml;q=0.5, */*;q=0.1" };
  if (validators?.etag) headers["if-none-match"] = validators.etag;
  if (validators?.lastModified) headers["if-modified-since"] = validators.lastModified;
  const response = await guarded(url, () =>
    http.request(url, { method: "GET", headers, followRedirects: true, maxBytes, timeoutMs: options.timeoutMs ?? 30_000, signal: options.signal }),
  ).catch((error: unknown) => {
    if (error instanceof CalendarError && error.code === "too_large") {
      throw new CalendarError("too_large", `the calendar feed at ${hostOf(url)} is larger than ${Math.round(maxBytes / 1024 / 1024)} MB and was not read; the copy from its last good fetch is kept`, { cause: error });
    }
    throw error;
  });
  if (response.status === 304) return { kind: "unchanged" };
  if (response.status === 401 || response.status === 403) throw new CalendarError("unauthorized", `the calendar feed at ${hostOf(url)} needs a sign-in (HTTP ${response.status}); use the feed's private or public iCal address`, { status: response.status });
  if (response.status === 404 || response.status === 410) throw new CalendarError("not_found", `there is no calendar feed at this address any more (HTTP ${response.status} from ${hostOf(url)})`, { status: response.status });
  if (response.status < 200 || response.status >= 300) throw new CalendarError("server_error", `${hostOf(url)} answered HTTP ${response.status} for the calendar feed`, { status: response.status });
  const text = response.body.toString("utf8");
  let parsed: ParsedCalendar;
  try {
    parsed = parseICalendar(text);
  } catch (error) {
    if (error instanceof NotICalendarError) throw new CalendarError("not_icalendar", `the address ${hostOf(url)} gave is not a calendar feed: ${error.message}`, { cause: error });
    throw error;
  }
  return {
    kind: "changed",
    url: response.url,
    validators: { etag: response.headers.etag ?? null, lastModified: response.headers["last-modified"] ?? null },
    parsed,
    bytes: response.body.length,
  };
}
