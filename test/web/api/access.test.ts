import { request } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startFakeOpenAI, type FakeOpenAIServer } from "../../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";

/**
 * Access to the web app over real HTTP. A request whose Host header names another machine is what a
 * remote browser sends (the socket is loopback here; nothing leaves 127.0.0.1).
 */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

function call(base: string, method: string, path: string, options: { host?: string; cookie?: string; csrf?: string; origin?: string; body?: unknown } = {}): Promise<Answer> {
  const url = new URL(path, base);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers: {
          host: options.host ?? url.host,
          ...(payload !== undefined && { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
          ...(options.cookie && { cookie: options.cookie }),
          ...(options.csrf && { "x-familiar-csrf": options.csrf }),
          ...(options.origin && { origin: options.origin }),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => {
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The session cookie (name=value) a response set. */
function sessionCookie(answer: Answer): string {
  const set = answer.headers["set-cookie"];
  const line = (Array.isArray(set) ? set : [set ?? ""]).find((l) => l.startsWith("familiar_session="));
  if (!line) throw new Error(`no session cookie in ${JSON.stringify(answer.headers)}`);
  return line.split(";")[0]!;
}

async function signInLocally(app: TestApp, name: string): Promise<{ cookie: string; csrf: string }> {
  const answer = await call(app.url, "POST", "/api/web/session/local", { body: { name, create: true } });
  expect(answer.status).toBe(200);
  return { cookie: sessionCookie(answer), csrf: String(answer.body.csrf) };
}

describe("web app access", () => {
  let app: TestApp;
  let model: FakeOpenAIServer | undefined;
  afterEach(async () => {
    await app?.close();
    await model?.close();
    model = undefined;
  });

  it("serves only this machine by default, and refuses cross-site writes", async () => {
    app = await startTestApp();
    expect((await call(app.url, "GET", "/", { host: "familiar.example.com" })).status).toBe(403);
    expect((await call(app.url, "GET", "/api/web/session", { host: "familiar.example.com" })).status).toBe(403);
    const { cookie, csrf } = await signInLocally(app, "ana");
    // Sessions are HttpOnly, SameSite=Strict cookies.
    const answer = await call(app.url, "POST", "/api/web/session/local", { body: { name: "ana" } });
    const line = (answer.headers["set-cookie"] as string[]).join(";");
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Strict/);
    // A write without the CSRF token is refused; with it, accepted; from another site, refused.
    expect((await call(app.url, "PATCH", "/api/web/settings", { cookie, body: { proactivity: "low" } })).status).toBe(403);
    expect((await call(app.url, "PATCH", "/api/web/settings", { cookie, csrf: "forged", body: { proactivity: "low" } })).status).toBe(403);
    expect((await call(app.url, "PATCH", "/api/web/settings", { cookie, csrf, origin: "https://evil.example", body: { proactivity: "low" } })).status).toBe(403);
    const ok = await call(app.url, "PATCH", "/api/web/settings", { cookie, csrf, body: { proactivity: "low" } });
    expect(ok.status).toBe(200);
    expect(ok.body.proactivity).toBe("low");
    // A forged cookie is no session.
    expect((await call(app.url, "GET", "/api/web/settings", { cookie: `${cookie}x` })).status).toBe(401);
  });

  it("lets remote browsers in only with a one-time link or the setup password, each seeing only their own person", async () => {
    model = await startFakeOpenAI();
    const console = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    app = await startTestApp({ LOCAL_CHAT_ALLOW_REMOTE: "true", OPENAI_BASE_URL: model.url });
    const printed = console.mock.calls.map((c) => String(c[0])).join("");
    console.mockRestore();
    const remote = "familiar.example.com";
    // The owner's start-up link (printed on the console only) signs in once, as the owner.
    const ownerToken = /Owner sign-in link .*#token=([A-Za-z0-9_-]+)/.exec(printed)?.[1];
    expect(ownerToken, printed).toBeDefined();
    expect(app.logs.join("")).not.toContain(ownerToken!);
    const asOwner = await call(app.url, "POST", "/api/web/session/link", { host: remote, body: { token: ownerToken } });
    expect(asOwner.status).toBe(200);
    expect((await call(app.url, "GET", "/api/web/session", { host: remote, cookie: sessionCookie(asOwner) })).body).toMatchObject({ role: "owner" });
    expect((await call(app.url, "POST", "/api/web/session/link", { host: remote, body: { token: ownerToken } })).status).toBe(401);
    const anon = await call(app.url, "GET", "/api/web/session", { host: remote });
    expect(anon.body).toMatchObject({ signedIn: false, loopback: false });
    // No name sign-in from afar, and no data without a session.
    expect((await call(app.url, "POST", "/api/web/session/local", { host: remote, body: { name: "ana" } })).status).toBe(403);
    expect((await call(app.url, "GET", "/api/web/memory", { host: remote })).status).toBe(401);
    // The old unauthenticated APIs stay on this machine even now.
    expect((await call(app.url, "GET", "/api/persons", { host: remote })).status).toBe(403);

    // Ana (this machine) sets the password; Bo exists too, with a memory of his own.
    const ana = await signInLocally(app, "ana");
    expect((await call(app.url, "POST", "/api/web/setup/password", { ...ana, body: { password: "short" } })).status).toBe(400);
    expect((await call(app.url, "POST", "/api/web/setup/password", { ...ana, body: { password: "correct horse battery" } })).status).toBe(200);
    await signInLocally(app, "bo");
    const boId = (await app.store.persons.findIdentity("local", "bo"))!.personId;
    const boMemory = await app.store.memory.addMemory({ personId: boId, kind: "fact", text: "Bo's secret plan" });

    expect((await call(app.url, "POST", "/api/web/session/password", { host: remote, body: { password: "wrong password!" } })).status).toBe(401);
    const byPassword = await call(app.url, "POST", "/api/web/session/password", { host: remote, body: { password: "correct horse battery" } });
    expect(byPassword.status).toBe(200);
    const anaRemote = { host: remote, cookie: sessionCookie(byPassword), csrf: String(byPassword.body.csrf) };
    const me = await call(app.url, "GET", "/api/web/session", anaRemote);
    expect(me.body).toMatchObject({ signedIn: true, role: "owner", person: { displayName: "ana" } });
    // Ana never reaches Bo's data, even with its id.
    expect((await call(app.url, "GET", "/api/web/memory", anaRemote)).body.items).toEqual([]);
    expect((await call(app.url, "PATCH", `/api/web/memory/${boMemory.id}`, { ...anaRemote, body: { text: "mine now" } })).status).toBe(404);
    expect((await call(app.url, "DELETE", `/api/web/memory/${boMemory.id}`, anaRemote)).status).toBe(404);
    expect((await app.store.memory.getMemory(boMemory.id))?.text).toBe("Bo's secret plan");

    // Bo asks for a sign-in link on a messenger (here the local chat): it works once, as Bo.
    await app.say("bo", "/web");
    const [reply] = await app.replies("bo", 1);
    const token = /#token=([A-Za-z0-9_-]+)/.exec(reply!.text)?.[1];
    expect(token, reply!.text).toBeDefined();
    const byLink = await call(app.url, "POST", "/api/web/session/link", { host: remote, body: { token } });
    expect(byLink.status).toBe(200);
    expect((await call(app.url, "POST", "/api/web/session/link", { host: remote, body: { token } })).status).toBe(401);
    const boRemote = { host: remote, cookie: sessionCookie(byLink), csrf: String(byLink.body.csrf) };
    const boSees = await call(app.url, "GET", "/api/web/memory", boRemote);
    expect((boSees.body.items as { text: string }[]).map((m) => m.text)).toEqual(["Bo's secret plan"]);
    // A link session is a person's, not the owner's: the setup stays out of reach.
    expect((await call(app.url, "POST", "/api/web/setup/password", { ...boRemote, body: { password: "take over the install" } })).status).toBe(403);
    expect((await call(app.url, "POST", "/api/web/setup/models", { ...boRemote, body: { provider: "ollama" } })).status).toBe(403);
  });

  it("signs a person in whatever the spelling, asks before it makes a new person, and keeps who you are when the name changes", async () => {
    app = await startTestApp();
    const signIn = (body: Record<string, unknown>) => call(app.url, "POST", "/api/web/session/local", { body });
    const whoIs = async (answer: Answer) => (await call(app.url, "GET", "/api/web/session", { cookie: sessionCookie(answer) })).body.person as { id: string; displayName: string; timeZone: string };

    // A name never seen: asked first, nothing made until the person says yes.
    const asked = await signIn({ name: "Zoë Müller" });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ signedIn: false, confirm: "new", name: "Zoë Müller", firstPerson: true });
    expect(asked.headers["set-cookie"]).toBeUndefined();
    expect((await app.store.persons.listPersons()).items).toHaveLength(0);
    const made = await signIn({ name: "Zoë Müller", create: true, timeZone: "Europe/Berlin" });
    const zoe = await whoIs(made);
    expect(zoe).toMatchObject({ displayName: "Zoë Müller", timeZone: "Europe/Berlin" });

    // Case, accents, compatibility forms and surrounding spaces do not matter; `create` never makes a second one.
    for (const spelling of ["zoë müller", "ZOE MULLER", "  zoe   muller ", "Zoe\u0308 Mu\u0308ller"]) {
      const again = await signIn({ name: spelling, create: true });
      expect(again.body.signedIn, spelling).toBe(true);
      expect((await whoIs(again)).id, spelling).toBe(zoe.id);
    }
    expect((await app.store.persons.listPersons()).items).toHaveLength(1);

    // Changing the display name never changes who you are: the new name and the old one both sign in.
    const session = await signIn({ name: "zoe muller" });
    const changed = await call(app.url, "PATCH", "/api/web/settings", { cookie: sessionCookie(session), csrf: String(session.body.csrf), body: { displayName: "Zoë M." } });
    expect(changed.status).toBe(200);
    expect((await whoIs(await signIn({ name: "zoe m." }))).id).toBe(zoe.id);
    expect((await whoIs(await signIn({ name: "Zoë Müller" }))).id).toBe(zoe.id);

    // Another name is another person, after asking (this time not the first person here).
    expect((await signIn({ name: "Łukasz" })).body).toMatchObject({ confirm: "new", firstPerson: false });
    const lukasz = await whoIs(await signIn({ name: "Łukasz", create: true }));
    expect(lukasz.id).not.toBe(zoe.id);
    expect(lukasz.timeZone).toBe("UTC");
    expect((await whoIs(await signIn({ name: "lukasz" }))).id).toBe(lukasz.id);
    // A zone that is not one is refused in words, and nothing is made.
    const badZone = await signIn({ name: "Ana", create: true, timeZone: "Mars/Olympus" });
    expect(badZone.status).toBe(400);
    expect(String(badZone.body.error)).toContain("not a time zone");
  });

  it("keeps persons of an older install apart when their names fold together, and lets the person choose", async () => {
    app = await startTestApp();
    // Before this rule, "Zoë" and "zoe" became two persons: both stay, nothing is merged.
    const older = await app.store.persons.createPerson({ displayName: "Zoë" });
    await app.store.persons.addIdentity({ personId: older.id, channel: "local", accountId: "Zoë", address: "Zoë" });
    const newer = await app.store.persons.createPerson({ displayName: "zoe" });
    await app.store.persons.addIdentity({ personId: newer.id, channel: "local", accountId: "zoe", address: "zoe" });
    const signIn = (body: Record<string, unknown>) => call(app.url, "POST", "/api/web/session/local", { body });
    const personOf = async (answer: Answer) => ((await call(app.url, "GET", "/api/web/session", { cookie: sessionCookie(answer) })).body.person as { id: string }).id;
    // Each exact spelling still reaches its own person.
    expect(await personOf(await signIn({ name: "Zoë" }))).toBe(older.id);
    expect(await personOf(await signIn({ name: "zoe" }))).toBe(newer.id);
    // Another spelling asks which one; a choice outside the matches is asked again.
    const asked = await signIn({ name: "ZOE", create: true });
    expect(asked.body).toMatchObject({ signedIn: false, confirm: "choose" });
    expect((asked.body.choices as { id: string }[]).map((c) => c.id).sort()).toEqual([older.id, newer.id].sort());
    expect((await signIn({ name: "ZOE", personId: "person_somebody_else" })).body).toMatchObject({ confirm: "choose" });
    expect(await personOf(await signIn({ name: "ZOE", personId: older.id }))).toBe(older.id);
    expect((await app.store.persons.listPersons()).items).toHaveLength(2);
  });
});
