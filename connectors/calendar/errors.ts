/**
 * The calendar connector's one error class, with a closed set of codes a sync job, a tool or the
 * Connections page can act on. Messages name the server and what to do; never a password.
 */

/**
 * - `unauthorized`: the server refused the user name or app password (401/403 on discovery);
 * - `not_caldav`: the URL answers, but not as a CalDAV server (HTML page, no calendar home);
 * - `not_icalendar`: a feed's body is not iCalendar (an HTML page, JSON, empty);
 * - `too_large`: a feed or object is over the byte limit;
 * - `unreachable`: the egress guard refused the address, or the network failed or timed out;
 * - `server_error`: the server answered an unexpected status;
 * - `conflict`: the object changed on the server since it was read (412 on If-Match);
 * - `not_found`: no such calendar, object or occurrence;
 * - `read_only`: the source cannot be written (an iCalendar feed, or a calendar without write access).
 */
export type CalendarErrorCode = "unauthorized" | "not_caldav" | "not_icalendar" | "too_large" | "unreachable" | "server_error" | "conflict" | "not_found" | "read_only";

/** A calendar operation failed; `code` says how, the message says what to do. */
export class CalendarError extends Error {
  /** The HTTP status behind the error, when there was one. */
  readonly status: number | null;

  constructor(
    readonly code: CalendarErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CalendarError";
    this.status = options?.status ?? null;
  }
}
