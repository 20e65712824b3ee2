/** Signing in to the web app and calling its JSON API, as the web app's own pages do. */

/** A web session: its cookie and the CSRF token writes must carry. */
export interface WebSession {
  cookie: string;
  csrf: string;
}

/** Signs in on this machine by name (`create: true`: a new name makes a person); throws unless 200. */
export async function signIn(base: { url: string }, name: string): Promise<WebSession> {
  const res = await fetch(`${base.url}/api/web/session/local`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, create: true }) });
  if (res.status !== 200) throw new Error(`signing in as ${name}: HTTP ${res.status}`);
  const body = (await res.json()) as { csrf: string };
  return { cookie: res.headers.getSetCookie()[0]!.split(";")[0]!, csrf: body.csrf };
}

/** `GET path` with the session; the JSON answer. */
export async function getJson<T>(base: { url: string }, session: WebSession, path: string): Promise<T> {
  return (await (await fetch(`${base.url}${path}`, { headers: { cookie: session.cookie } })).json()) as T;
}

/** `POST path` with the session, its CSRF token and a JSON body; the response. */
export function postJson(base: { url: string }, session: WebSession, path: string, body: unknown): Promise<Response> {
  return fetch(`${base.url}${path}`, { method: "POST", headers: { "content-type": "application/json", cookie: session.cookie, "x-familiar-csrf": session.csrf }, body: JSON.stringify(body) });
}
