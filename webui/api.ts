/** The signed-in person as `/api/web/session` tells it. */
export interface Session {
  signedIn: true;
  loopback: boolean;
  role: "owner" | "person";
  csrf: string;
  person: { id: string; displayName: string; timeZone: string };
}
/** JSON calls to /api/web with the session's CSRF token on every change. */
let csrf = "";

/** Remembers the CSRF token the server gave with the session. */
export function setCsrf(token: string): void {
  csrf = token;
}

/** An API answer that was not 2xx: `message` is the server's words for the person; `problems` each of them, when the server listed them. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}

/** Calls the API; throws ApiError (status 0 when the server could not be reached). */
export async function api<T>(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET") headers["x-familiar-csrf"] = csrf;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: "same-origin", ...(body !== undefined && { body: JSON.stringify(body) }) });
  } catch {
    throw new ApiError("Familiar cannot be reached right now.", 0);
  }
  const data: unknown = await res.json().catch(() => ({}));
  if (!res.ok) {
    const error = typeof data === "object" && data !== null && "error" in data && typeof data.error === "string" ? data.error : `HTTP ${res.status}`;
    const problems = typeof data === "object" && data !== null && "problems" in data && Array.isArray(data.problems) ? data.problems.filter((p): p is string => typeof p === "string") : [];
    throw new ApiError(error, res.status, problems);
  }
  return data as T;
}

/** Posts a multipart form (files) with the session's CSRF token; answers and throws like {@link api}. */
export async function apiForm<T>(path: string, form: FormData): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { method: "POST", headers: { "x-familiar-csrf": csrf }, credentials: "same-origin", body: form });
  } catch {
    throw new ApiError("Familiar cannot be reached right now.", 0);
  }
  const data: unknown = await res.json().catch(() => ({}));
  if (!res.ok) {
    const error = typeof data === "object" && data !== null && "error" in data && typeof data.error === "string" ? data.error : `HTTP ${res.status}`;
    throw new ApiError(error, res.status);
  }
  return data as T;
}

/**
 * A date in the person's time zone, named the way approval cards name it (core/approvals/card.ts),
 * e.g. "3 Dec 2026, 09:30 (Europe/Berlin)".
 */
export function localTime(iso: string | null, timeZone: string): string {
  if (!iso) return "—";
  try {
    return `${new Intl.DateTimeFormat(undefined, { timeZone, day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" }).format(new Date(iso))} (${timeZone})`;
  } catch {
    return new Date(iso).toISOString();
  }
}

/** A fresh id for idempotent retries. */
export function newClientId(): string {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Channels as a person reads them (the local channel is the web chat; core/channels/words.ts). */
export const channelLabel: Record<string, string> = { local: "the web chat", telegram: "Telegram", slack: "Slack", discord: "Discord", whatsapp: "WhatsApp" };

/** Client-side navigation between the app's pages. */
export function navigate(path: string): void {
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** "in the web chat" / "on Telegram". */
export function onChannel(channel: string): string {
  return channel === "local" ? "in the web chat" : `on ${channelLabel[channel] ?? channel}`;
}

/** Focuses an element when it appears (a stable ref, so typing never moves the focus). */
export const focusOnMount = (el: HTMLElement | null): void => el?.focus();

/**
 * A message's time line, short: "09:30" today, "Tue 09:30" within the last week, "3 Dec, 09:30"
 * this year, "3 Dec 2025" before — in the person's time zone (the full date is the title).
 */
export function shortTime(iso: string, timeZone: string, now: Date = new Date()): string {
  const at = new Date(iso);
  try {
    const day = (d: Date) => new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(d);
    const clock = new Intl.DateTimeFormat(undefined, { timeZone, hour: "2-digit", minute: "2-digit" }).format(at);
    if (day(at) === day(now)) return clock;
    const ageMs = now.getTime() - at.getTime();
    if (ageMs >= 0 && ageMs < 6 * 86_400_000) return `${new Intl.DateTimeFormat(undefined, { timeZone, weekday: "short" }).format(at)} ${clock}`;
    const sameYear = day(at).slice(0, 4) === day(now).slice(0, 4);
    const date = new Intl.DateTimeFormat(undefined, { timeZone, day: "numeric", month: "short", ...(sameYear ? {} : { year: "numeric" }) }).format(at);
    return sameYear ? `${date}, ${clock}` : date;
  } catch {
    return at.toISOString().slice(0, 16).replace("T", " ");
  }
}
