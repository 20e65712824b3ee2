/**
 * A CalDAV account through tsdav (RFC 4791; sync by RFC 6578), every request through the egress guard
 * (`http.ts`).
 *
 * - **Discovery**: from the server URL, `/.well-known/caldav` (RFC 6764), the current user principal
 *   and its calendar home (tsdav's `createAccount`), then one PROPFIND of the home for every
 *   calendar's name, ctag, sync token and supported reports. Only calendars that hold events count.
 * - **Changes**: by sync token (`sync-collection` REPORT) when the calendar supports it, else by
 *   ctag then an etag listing. A refused or expired sync token (RFC 6578 §3.2 `valid-sync-token`)
 *   means a full listing compared with what is stored, so events deleted meanwhile are deleted here
 *   too (field case C3). Changed objects are fetched with `calendar-multiget`, in batches.
 */
import { calendarMultiGet, createAccount, createObject, deleteObject, propfind, syncCollection, updateObject, type DAVAccount, type DAVResponse } from "tsdav";
import type { ItemError } from "./model.js";
import { CalendarError } from "./errors.js";
import { davFetch, guarded, hostOf, type CalendarHttp } from "./http.js";

/** Where and as whom to connect. The password is an app password, held in the person's vault. */
export interface CaldavCredentials {
  serverUrl: string;
  username: string;
  password: string;
}

/** One calendar of the account, as the server describes it now. */
export interface RemoteCalendar {
  url: string;
  name: string;
  ctag: string | null;
  syncToken: string | null;
  /** The calendar supports `sync-collection` (RFC 6578). */
  supportsSync: boolean;
  color: string | null;
}

/** A calendar object: its URL, ETag and iCalendar text. */
export interface RemoteObject {
  href: string;
  etag: string | null;
  ics: string;
}

/** What is stored about a calendar from its last sync. */
export interface KnownCalendar {
  syncToken: string | null;
  ctag: string | null;
  /** Every stored object's href and ETag. */
  etags: ReadonlyMap<string, string | null>;
}

/** What changed in a calendar since `KnownCalendar`. `full`: compared against a full listing. */
export type CalendarDelta =
  | { kind: "unchanged"; syncToken: string | null; ctag: string | null }
  | { kind: "changes"; full: boolean; reason: string | null; upserts: RemoteObject[]; deletes: string[]; syncToken: string | null; ctag: string | null; errors: ItemError[] };

/** The `changes` case of a {@link CalendarDelta}. */
export type CalendarChanges = Extract<CalendarDelta, { kind: "changes" }>;

/** Limits of a client (defaults in parentheses). */
export interface CaldavOptions {
  /** Largest response accepted, bytes (20 MiB). */
  maxResponseBytes?: number;
  /** Largest calendar object kept, characters (1 MiB); a larger one is an item error. */
  maxObjectChars?: number;
  /** Time limit of one request, ms (30 s). */
  timeoutMs?: number;
  /** Objects per calendar-multiget (50). */
  batchSize?: number;
  /** Use sync-collection where the server offers it (true); false forces ctag + ETags (tests). */
  useSyncCollection?: boolean;
}

const CALENDAR_PROPS = {
  "d:displayname": {},
  "d:resourcetype": {},
  "cs:getctag": {},
  "d:sync-token": {},
  "d:supported-report-set": {},
  "c:supported-calendar-component-set": {},
  "ca:calendar-color": {},
};

/** One CalDAV account. Cheap to make; discovery runs on first use and is kept. */
export class CaldavClient {
  private readonly fetch: typeof fetch;
  private readonly headers: Record<string, string>;
  private readonly options: Required<CaldavOptions>;
  private account: DAVAccount | null = null;

  constructor(
    private readonly credentials: CaldavCredentials,
    http: CalendarHttp,
    options: CaldavOptions = {},
  ) {
    this.options = { maxResponseBytes: 20 * 1024 * 1024, maxObjectChars: 1024 * 1024, timeoutMs: 30_000, batchSize: 50, useSyncCollection: true, ...options };
    this.fetch = davFetch(http, { maxBytes: this.options.maxResponseBytes, timeoutMs: this.options.timeoutMs });
    this.headers = { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}` };
  }

  /**
   * The account's event calendars (discovering the account first if needed).
   * @throws CalendarError `unauthorized`, `not_caldav`, `unreachable`, `too_large`
   */
  async calendars(): Promise<RemoteCalendar[]> {
    const account = await this.discover();
    const responses = await this.dav(() => propfind({ url: account.homeUrl, props: CALENDAR_PROPS, depth: "1", headers: this.headers, fetch: this.fetch }));
    this.assertOk(responses, account.homeUrl);
    const calendars: RemoteCalendar[] = [];
    for (const r of responses) {
      if (r.href === undefined || !Object.keys((r.props?.resourcetype ?? {}) as object).includes("calendar")) continue;
      const components = componentNames(r.props?.supportedCalendarComponentSet);
      if (components.length > 0 && !components.includes("VEVENT")) continue;
      const reports = reportNames(r.props?.supportedReportSet);
      calendars.push({
        url: new URL(r.href, account.homeUrl).href,
        name: textOf(r.props?.displayname) ?? lastSegment(r.href),
        ctag: textOf(r.props?.getctag),
        syncToken: textOf(r.props?.syncToken),
        supportsSync: this.options.useSyncCollection && reports.includes("syncCollection"),
        color: textOf(r.props?.calendarColor),
      });
    }
    return calendars;
  }

  /**
   * What changed in `calendar` since `known` (see the file comment).
   * @throws CalendarError `unreachable`, `server_error`, `too_large`
   */
  async changes(calendar: RemoteCalendar, known: KnownCalendar): Promise<CalendarDelta> {
    if (calendar.supportsSync) {
      if (known.syncToken !== null && calendar.syncToken !== null && known.syncToken === calendar.syncToken) {
        return { kind: "unchanged", syncToken: known.syncToken, ctag: calendar.ctag };
      }
      const delta = known.syncToken === null ? null : await this.syncSince(calendar, known);
      if (delta !== null) return delta;
      const full = await this.syncSince(calendar, { ...known, syncToken: null });
      if (full !== null) return { ...full, reason: known.syncToken === null ? null : "the server refused the stored sync token" };
    } else if (known.ctag !== null && calendar.ctag !== null && known.ctag === calendar.ctag) {
      return { kind: "unchanged", syncToken: null, ctag: calendar.ctag };
    }
    return this.compareListing(calendar, known, known.ctag === null && known.etags.size === 0 ? null : "compared with the server's full listing");
  }

  /**
   * Creates an object `<uid>.ics` in the calendar (If-None-Match: *).
   * @returns the new object's URL and ETag (null when the server did not send one)
   * @throws CalendarError `conflict` when the name is taken, `server_error`, `unreachable`
   */
  async create(calendarUrl: string, uid: string, ics: string): Promise<{ href: string; etag: string | null }> {
    const href = new URL(`${encodeURIComponent(uid)}.ics`, calendarUrl.endsWith("/") ? calendarUrl : `${calendarUrl}/`).href;
    const response = await this.dav(() => createObject({ url: href, data: ics, headers: { ...this.headers, "content-type": "text/calendar; charset=utf-8", "if-none-match": "*" }, fetch: this.fetch }));
    this.assertWritten(response, href);
    return { href, etag: response.headers.get("etag") };
  }

  /**
   * Replaces an object, only if it still has `etag` (If-Match) when one is given.
   * @throws CalendarError `conflict` (changed on the server meanwhile), `not_found`, `server_error`
   */
  async update(href: string, ics: string, etag: string | null): Promise<{ etag: string | null }> {
    const headers: Record<string, string> = { ...this.headers, "content-type": "text/calendar; charset=utf-8" };
    const response = await this.dav(() => updateObject({ url: href, data: ics, etag: etag ?? undefined, headers, fetch: this.fetch }));
    this.assertWritten(response, href);
    return { etag: response.headers.get("etag") };
  }

  /**
   * Deletes an object (If-Match when `etag` is given). An object already gone counts as deleted.
   * @throws CalendarError `conflict`, `server_error`
   */
  async remove(href: string, etag: string | null): Promise<void> {
    const response = await this.dav(() => deleteObject({ url: href, etag: etag ?? undefined, headers: this.headers, fetch: this.fetch }));
    if (response.status === 404) return;
    this.assertWritten(response, href);
  }

  private async discover(): Promise<DAVAccount & { homeUrl: string }> {
    if (this.account?.homeUrl) return this.account as DAVAccount & { homeUrl: string };
    const seen: { status: number; type: string }[] = [];
    // tsdav's discovery swallows a failed request and tries the next URL; the first refusal of the
    // egress guard (or a failure to connect) is what the person needs to hear, not "not CalDAV".
    const refused: CalendarError[] = [];
    const recording: typeof fetch = async (input, init) => {
      let response: Response;
      try {
        response = await this.fetch(input, init);
      } catch (error) {
        if (error instanceof CalendarError) refused.push(error);
        throw error;
      }
      seen.push({ status: response.status, type: response.headers.get("content-type") ?? "" });
      return response;
    };
    try {
      const account = await guarded(this.credentials.serverUrl, () =>
        createAccount({ account: { serverUrl: this.credentials.serverUrl, accountType: "caldav" }, headers: this.headers, fetch: recording }),
      );
      if (!account.homeUrl) throw new Error("cannot find homeUrl");
      this.account = account;
      return account as DAVAccount & { homeUrl: string };
    } catch (error) {
      if (error instanceof CalendarError) throw error;
      if (refused[0] !== undefined && seen.length === 0) throw refused[0];
      const server = hostOf(this.credentials.serverUrl);
      if (seen.some((s) => s.status === 401 || s.status === 403)) {
        throw new CalendarError("unauthorized", `${server} refused the user name or app password (HTTP ${seen.find((s) => s.status === 401 || s.status === 403)!.status}): check them, and use an app password if the account has two-factor sign-in`, { cause: error });
      }
      const html = seen.some((s) => s.type.includes("html"));
      throw new CalendarError("not_caldav", `${server} does not answer as a CalDAV server${html ? " (it sent a web page)" : ""}: check the CalDAV URL (see the README's Calendar section)`, { cause: error });
    }
  }

  /** A sync-collection round trip (repeated while the server truncates, RFC 6578 §3.6); null when the token is refused. */
  private async syncSince(calendar: RemoteCalendar, known: KnownCalendar): Promise<CalendarChanges | null> {
    const full = known.syncToken === null;
    const changed = new Map<string, string | null>();
    const deletes = new Set<string>();
    let token = known.syncToken ?? "";
    for (let round = 0; round < 20; round++) {
      const responses = await this.dav(() => syncCollection({ url: calendar.url, props: { "d:getetag": {} }, syncLevel: 1, syncToken: token, headers: this.headers, fetch: this.fetch }));
      const raw = responses[0]?.raw as { multistatus?: { syncToken?: unknown } } | undefined;
      if (raw?.multistatus === undefined) return null;
      let truncated = false;
      for (const r of responses) {
        if (r.href === undefined) continue;
        const href = new URL(r.href, calendar.url).href;
        if (sameCollection(href, calendar.url)) {
          truncated ||= r.status === 507;
          continue;
        }
        if (r.status === 404) {
          deletes.add(href);
          changed.delete(href);
        } else if (r.ok) {
          changed.set(href, textOf(r.props?.getetag));
          deletes.delete(href);
        }
      }
      token = textOf(raw.multistatus.syncToken) ?? token;
      if (!truncated) break;
    }
    if (full) for (const href of known.etags.keys()) if (!changed.has(href)) deletes.add(href);
    // Servers may report removals of objects this side never had (Radicale keeps a history).
    for (const href of deletes) if (!known.etags.has(href)) deletes.delete(href);
    const wanted = [...changed].filter(([href, etag]) => etag === null || known.etags.get(href) !== etag).map(([href]) => href);
    const fetched = await this.multiget(calendar.url, wanted);
    return { kind: "changes", full, reason: null, upserts: fetched.objects, deletes: [...deletes], syncToken: token === "" ? null : token, ctag: calendar.ctag, errors: fetched.errors };
  }

  /** Lists every object's ETag (PROPFIND depth 1) and fetches what differs from `known`. */
  private async compareListing(calendar: RemoteCalendar, known: KnownCalendar, reason: string | null): Promise<CalendarChanges> {
    const responses = await this.dav(() => propfind({ url: calendar.url, props: { "d:getetag": {}, "d:resourcetype": {} }, depth: "1", headers: this.headers, fetch: this.fetch }));
    this.assertOk(responses, calendar.url);
    const remote = new Map<string, string | null>();
    for (const r of responses) {
      if (r.href === undefined || !r.ok) continue;
      const href = new URL(r.href, calendar.url).href;
      if (sameCollection(href, calendar.url) || Object.keys((r.props?.resourcetype ?? {}) as object).includes("collection")) continue;
      remote.set(href, textOf(r.props?.getetag));
    }
    const deletes = [...known.etags.keys()].filter((href) => !remote.has(href));
    const wanted = [...remote].filter(([href, etag]) => etag === null || known.etags.get(href) !== etag).map(([href]) => href);
    const fetched = await this.multiget(calendar.url, wanted);
    return { kind: "changes", full: true, reason, upserts: fetched.objects, deletes, syncToken: calendar.syncToken, ctag: calendar.ctag, errors: fetched.errors };
  }

  private async multiget(calendarUrl: string, hrefs: string[]): Promise<{ objects: RemoteObject[]; errors: ItemError[] }> {
    const objects: RemoteObject[] = [];
    const errors: ItemError[] = [];
    for (let i = 0; i < hrefs.length; i += this.options.batchSize) {
      const batch = hrefs.slice(i, i + this.options.batchSize);
      const responses = await this.dav(() =>
        calendarMultiGet({ url: calendarUrl, props: { "d:getetag": {}, "c:calendar-data": {} }, objectUrls: batch.map((h) => new URL(h).pathname), depth: "1", headers: this.headers, fetch: this.fetch }),
      );
      for (const r of responses) {
        if (r.href === undefined) continue;
        const href = new URL(r.href, calendarUrl).href;
        if (!r.ok) continue;
        const ics = textOf(r.props?.calendarData);
        if (ics === null) errors.push({ item: lastSegment(href), message: "the server sent no calendar data for this object" });
        else if (ics.length > this.options.maxObjectChars) errors.push({ item: lastSegment(href), message: `this calendar object is over ${this.options.maxObjectChars.toLocaleString("en")} characters and was skipped` });
        else objects.push({ href, etag: textOf(r.props?.getetag), ics });
      }
    }
    return { objects, errors };
  }

  /** Runs a tsdav call; guard refusals become CalendarErrors (see `guarded`). */
  private dav<T>(call: () => Promise<T>): Promise<T> {
    return guarded(this.credentials.serverUrl, call);
  }

  private assertOk(responses: DAVResponse[], url: string): void {
    const first = responses[0];
    if (first !== undefined && first.raw !== undefined && typeof first.raw === "object" && first.raw !== null && "multistatus" in first.raw) return;
    const status = first?.status ?? 0;
    if (status === 401 || status === 403) throw new CalendarError("unauthorized", `${hostOf(url)} refused access (HTTP ${status}): check the user name and app password`, { status });
    throw new CalendarError("server_error", `${hostOf(url)} answered HTTP ${status} instead of a calendar listing`, { status });
  }

  private assertWritten(response: Response, href: string): void {
    if (response.ok) return;
    const status = response.status;
    if (status === 412) throw new CalendarError("conflict", "the event changed on the server since it was read; read it again before changing it", { status });
    if (status === 404) throw new CalendarError("not_found", "the event is no longer on the server", { status });
    if (status === 401 || status === 403) throw new CalendarError("read_only", `${hostOf(href)} does not allow writing this calendar (HTTP ${status})`, { status });
    throw new CalendarError("server_error", `${hostOf(href)} refused the change (HTTP ${status})`, { status });
  }
}

/** The text of a WebDAV property value as tsdav parses it (string, number, `{ _cdata }`, `{ _text }`). */
function textOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value === "" ? null : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "object") {
    const v = value as { _cdata?: unknown; _text?: unknown };
    if (typeof v._cdata === "string") return v._cdata;
    if (v._text !== undefined) return textOf(v._text);
  }
  return null;
}

/** `supported-calendar-component-set` as tsdav parses it: `{ comp: one or many { _attributes: { name } } }`. */
function componentNames(set: unknown): string[] {
  const comp = (set as { comp?: unknown } | undefined)?.comp;
  const list: unknown[] = Array.isArray(comp) ? comp : comp === undefined ? [] : [comp];
  return list
    .map((c) => (c as { _attributes?: { name?: unknown } } | undefined)?._attributes?.name)
    .map((name) => (typeof name === "string" ? name.toUpperCase() : ""))
    .filter((n) => n !== "");
}

/** `supported-report-set` as tsdav parses it: `{ supportedReport: one or many { report: { <name>: … } } }`. */
function reportNames(set: unknown): string[] {
  const supported = (set as { supportedReport?: unknown } | undefined)?.supportedReport;
  const list: unknown[] = Array.isArray(supported) ? supported : supported === undefined ? [] : [supported];
  return list.map((sr) => Object.keys((sr as { report?: object })?.report ?? {})[0]).filter((n): n is string => typeof n === "string");
}

function sameCollection(a: string, b: string): boolean {
  return a.replace(/\/$/, "") === b.replace(/\/$/, "");
}

function lastSegment(href: string): string {
  const parts = href.split("/").filter((p) => p !== "");
  return decodeURIComponent(parts.at(-1) ?? href);
}
