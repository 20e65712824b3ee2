/**
 * The Connections API of the web app (`/api/web/connections`) and the one-time `/connect` form's
 * Test button, through the real app against a real Dovecot and Postfix, a real Radicale and a local
 * feed server: Test tries settings and keeps nothing, Connect keeps them only when they work, each
 * problem is in words, capabilities are granted one by one, a mailbox's state shows IDLE, another
 * person reaches none of it, and disconnecting deletes the credential from the vault. The password
 * never comes back in an answer, a page, a log or a file in the clear.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SecretVault } from "../../../core/secrets/index.js";
import type { connectionView } from "../../../web/api/connections-api.js";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { sleep } from "../../helpers/e2e.js";
import { startIcsServer, type IcsServer } from "../../helpers/ics-server.js";
import { postfixUnavailable, settingsFor, startMailServers, type MailServers } from "../../helpers/mail/servers.js";
import { startRadicale, type RadicaleServer } from "../../helpers/radicale.js";

const noPostfix = postfixUnavailable();
let servers: MailServers;
let radicale: RadicaleServer;
let feeds: IcsServer;
let model: FakeOpenAIServer;
let app: TestApp | null = null;

beforeAll(async () => {
  [servers, radicale, feeds, model] = await Promise.all([startMailServers(), startRadicale(), startIcsServer(), startFakeOpenAI({ fallback: text("ok") })]);
  const home = await radicale.makeCalendar("home", "Home");
  await radicale.put(home, "a.ics", ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//t//t//EN", "BEGIN:VEVENT", "UID:a", "DTSTAMP:20260101T000000Z", "DTSTART:20260105T090000Z", "DTEND:20260105T100000Z", "SUMMARY:Dentist", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n"));
  feeds.set("/school.ics", { body: ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//t//t//EN", "BEGIN:VEVENT", "UID:t", "DTSTAMP:20260101T000000Z", "DTSTART;VALUE=DATE:20260330", "SUMMARY:Term", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n"), contentType: "text/calendar" });
}, 120_000);

afterEach(async () => {
  await app?.close();
  app = null;
});

afterAll(async () => {
  await Promise.all([servers?.close(), radicale?.stop(), feeds?.close(), model?.close()]);
});

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(name: string): Promise<Session> {
  const res = await fetch(`${app!.url}/api/web/session/local`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, create: true }) });
  const body = (await res.json()) as { csrf: string };
  return { cookie: res.headers.getSetCookie()[0]!.split(";")[0]!, csrf: body.csrf };
}

type View = ReturnType<typeof connectionView>;
interface KindAnswer {
  kind: string;
  command: string;
  fields: { name: string; type: string; value?: string; options?: { value: string }[] }[];
  capabilities: { id: string; allows: string }[];
  defaultCapabilities: string[];
}
/** Every field any of the answers has (each assertion reads the ones its answer carries). */
interface Json extends View {
  ok: boolean;
  summary: string;
  problems: string[];
  error: string;
  items: View[];
  kinds: KindAnswer[];
  connection: View;
  test: { ok: boolean } | null;
}

async function call(s: Session, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json; raw: string }> {
  const res = await fetch(`${app!.url}${path}`, {
    method,
    headers: { cookie: s.cookie, "x-familiar-csrf": s.csrf, ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const raw = await res.text();
  return { status: res.status, json: (raw ? JSON.parse(raw) : null) as Json, raw };
}

/** The form values a person types for `ana`'s mailbox (STARTTLS, the test CA), without the password. */
function mailValues(): Record<string, string> {
  const s = settingsFor(servers, servers.accounts[0]);
  return { address: s.address, imap_host: s.imap.host, imap_port: String(s.imap.port), imap_tls: s.imap.tls, smtp_host: s.smtp.host, smtp_port: String(s.smtp.port), smtp_tls: s.smtp.tls, ca: servers.cert.certPem };
}

/** The names of `owner`'s secrets as the vault file on disk holds them now. */
async function vaultNames(owner: string): Promise<string[]> {
  const vault = await SecretVault.open({ dataDir: app!.dataDir });
  return vault.list(owner).map((s) => s.name);
}

function filesContaining(secret: string): string[] {
  const dir = app!.dataDir;
  const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).map((f) => join(dir, f)).filter((f) => statSync(f).isFile());
  return files.filter((f) => readFileSync(f).includes(Buffer.from(secret)));
}

/** Polls `probe` until it answers something; throws naming `what` after 30 s. */
async function eventually<T>(probe: () => Promise<T | null>, what: string): Promise<T> {
  const end = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

const start = () => startTestApp({ OPENAI_BASE_URL: model.url, NOTIFY_MODEL_JUDGEMENT: "false", PRIVATE_HOSTS_ALLOWED: `${new URL(radicale.url).host},${feeds.host}`, EMAIL_POLL_MS: "500" });

describe.skipIf(noPostfix !== null)("the Connections API", () => {
  it("adds a mailbox: Test keeps nothing and says what failed, Connect keeps it only when it works, read is granted separately, the state shows IDLE, disconnect deletes the password", async () => {
    app = await start();
    const ana = await signIn("ana");
    const password = servers.accounts[0].password;
    const list = await call(ana, "GET", "/api/web/connections");
    expect(list.status).toBe(200);
    expect(list.json.items).toEqual([]);
    const email = list.json.kinds.find((k) => k.kind === "email")!;
    expect(list.json.kinds.map((k) => k.kind).sort()).toEqual(["caldav", "email", "ics"]);
    expect(email.command).toBe("/connect email");
    expect(email.fields.find((f) => f.name === "password")).toMatchObject({ type: "password", value: "" });
    expect(email.fields.find((f) => f.name === "imap_tls")?.options?.map((o) => o.value)).toEqual(["implicit", "starttls", "none"]);
    expect(email.capabilities.map((c) => c.id)).toEqual(["read", "send", "organise"]);
    for (const c of email.capabilities) expect(c.allows.length).toBeGreaterThan(40);
    expect(email.defaultCapabilities).toEqual(["read"]);

    // Test with a wrong password: the IMAP login failed, in words; the SMTP one too. Nothing is kept.
    const wrong = await call(ana, "POST", "/api/web/connections/check", { kind: "email", values: { ...mailValues(), password: "not-the-password" } });
    expect(wrong.status).toBe(200);
    expect(wrong.json.ok).toBe(false);
    expect(wrong.json.problems.join(" ")).toMatch(/IMAP.*(password|log ?in|user name)/i);
    expect(wrong.json.problems.join(" ")).toMatch(/SMTP/);
    expect(wrong.raw).not.toContain("not-the-password");
    // A missing field and an unknown one are said, before any login.
    const missing = await call(ana, "POST", "/api/web/connections/check", { kind: "email", values: { ...mailValues(), imap_host: " ", password } });
    expect(missing.json).toEqual({ ok: false, problems: ["Please fill in IMAP server."] });
    const odd = await call(ana, "POST", "/api/web/connections", { kind: "email", values: { ...mailValues(), password, imap_tls: "ssl3" }, capabilities: ["read"] });
    expect(odd.status).toBe(400);
    expect(odd.json.problems[0]).toMatch(/^IMAP encryption: choose one of/);
    expect((await call(ana, "POST", "/api/web/connections", { kind: "email", values: { ...mailValues(), password, evil: "x" } })).json.error).toBe("Email (IMAP and SMTP) has no field evil.");
    expect((await call(ana, "POST", "/api/web/connections", { kind: "fax", values: {} })).status).toBe(400);
    expect((await call(ana, "POST", "/api/web/connections", { values: [] })).status).toBe(400);
    // The right password: Test passes (INBOX selected, SMTP authenticated) and still keeps nothing.
    const right = await call(ana, "POST", "/api/web/connections/check", { kind: "email", values: { ...mailValues(), password } });
    expect(right.json).toMatchObject({ ok: true });
    expect(right.json.summary).toMatch(/IMAP: logged in, INBOX has \d+ messages?\. SMTP: logged in\./);
    expect((await call(ana, "GET", "/api/web/connections")).json.items).toEqual([]);
    // Connect with a wrong password keeps nothing.
    const refused = await call(ana, "POST", "/api/web/connections", { kind: "email", values: { ...mailValues(), password: "not-the-password" }, capabilities: ["read"] });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatch(/IMAP/);
    expect((await call(ana, "GET", "/api/web/connections")).json.items).toEqual([]);

    // Connect with nothing granted: kept, connected, not syncing; the password in the vault only.
    const made = await call(ana, "POST", "/api/web/connections", { kind: "email", values: { ...mailValues(), password }, capabilities: [] });
    expect(made.status).toBe(201);
    expect(made.raw).not.toContain(password);
    const id = made.json.connection.id;
    expect(made.json.connection).toMatchObject({ kind: "email", label: "ana@example.test", capabilities: [], source: "person", status: { state: "ok", words: "connected", sync: "Not syncing: Read is not granted." } });
    const personId = (await app.store.persons.findIdentity("local", "ana"))!.personId;
    expect(await vaultNames(personId)).toContain(`connection.${id}`);
    expect(JSON.stringify(await app.store.connections.getConnection(id))).not.toContain(password);

    // Its form values come back to change it — never the password; an empty password keeps the stored one.
    const [kept] = (await call(ana, "GET", "/api/web/connections")).json.items;
    expect(kept!.values).toMatchObject({ address: "ana@example.test", imap_port: mailValues().imap_port, imap_tls: "starttls", ca: servers.cert.certPem.trim() });
    expect(kept!.values).not.toHaveProperty("password");
    const renamed = await call(ana, "PATCH", `/api/web/connections/${id}`, { values: { ...mailValues(), name: "Ana B" } });
    expect(renamed.status).toBe(200);
    expect(renamed.json.test).toMatchObject({ ok: true });
    expect((await app.store.connections.getConnection(id))!.settings).toMatchObject({ name: "Ana B" });
    const badChange = await call(ana, "PATCH", `/api/web/connections/${id}`, { values: { ...mailValues(), password: "not-the-password" } });
    expect(badChange.status).toBe(400);
    expect(badChange.json.error).toMatch(/IMAP server .* refused the user name or app password/);
    expect((await call(ana, "POST", `/api/web/connections/${id}/test`, {})).json).toMatchObject({ ok: true });
    const other = await call(ana, "PATCH", `/api/web/connections/${id}`, { values: { ...mailValues(), address: "ben@example.test" } });
    expect(other.json.error).toBe("These settings are for ben@example.test, not ana@example.test: add it as a new connection instead.");

    // Another person sees, tests, grants and disconnects none of it.
    const ben = await signIn("ben");
    expect((await call(ben, "GET", "/api/web/connections")).json.items).toEqual([]);
    expect((await call(ben, "PUT", `/api/web/connections/${id}/capabilities`, { capabilities: ["read", "send"] })).status).toBe(404);
    expect((await call(ben, "POST", `/api/web/connections/${id}/test`, {})).status).toBe(404);
    expect((await call(ben, "PATCH", `/api/web/connections/${id}`, { values: { ...mailValues(), name: "Ben" } })).status).toBe(404);
    expect((await call(ben, "DELETE", `/api/web/connections/${id}`)).status).toBe(404);
    // A change without the CSRF token is refused.
    expect((await fetch(`${app.url}/api/web/connections/${id}/capabilities`, { method: "PUT", headers: { cookie: ana.cookie, "content-type": "application/json" }, body: JSON.stringify({ capabilities: ["send"] }) })).status).toBe(403);
    expect((await call(ana, "PUT", `/api/web/connections/${id}/capabilities`, { capabilities: ["read", "teleport"] })).status).toBe(400);

    // Grant read: the mailbox syncs and holds IMAP IDLE; the state says so.
    const granted = await call(ana, "PUT", `/api/web/connections/${id}/capabilities`, { capabilities: ["read"] });
    expect(granted.json.capabilities).toEqual(["read"]);
    const idle = await eventually(async () => {
      const [c] = (await call(ana, "GET", "/api/web/connections")).json.items;
      return c && c.status.mode === "idle" && c.status.lastSyncAt ? c : null;
    }, "the mailbox holds IDLE");
    expect(idle.status).toMatchObject({ words: "connected", lastError: null });
    expect(idle.status.sync).toMatch(/^IMAP IDLE alive/);
    // A test of the kept connection logs in again.
    expect((await call(ana, "POST", `/api/web/connections/${id}/test`, {})).json).toMatchObject({ ok: true });

    // Disconnect: gone from the list, and its credential from the vault on disk.
    expect((await call(ana, "DELETE", `/api/web/connections/${id}`)).status).toBe(204);
    expect((await call(ana, "GET", "/api/web/connections")).json.items).toEqual([]);
    expect(await vaultNames(personId)).not.toContain(`connection.${id}`);
    expect((await call(ana, "DELETE", `/api/web/connections/${id}`)).status).toBe(404);
    expect(filesContaining(password)).toEqual([]);
    expect(filesContaining("not-the-password")).toEqual([]);
    expect(app.logs.join("\n")).not.toContain(password);
    expect(app.logs.join("\n")).not.toContain("not-the-password");
  }, 120_000);

  it("shows a mailbox on a server without IDLE as polling, a server that went away as a problem in words, and connected again when it is back", async () => {
    const plain = await startMailServers({ idle: false });
    try {
      app = await start();
      const ana = await signIn("ana");
      const s = settingsFor(plain, plain.accounts[0]);
      const values = { address: s.address, imap_host: s.imap.host, imap_port: String(s.imap.port), imap_tls: s.imap.tls, smtp_host: s.smtp.host, smtp_port: String(s.smtp.port), smtp_tls: s.smtp.tls, ca: plain.cert.certPem, password: plain.accounts[0].password };
      const made = await call(ana, "POST", "/api/web/connections", { kind: "email", values, capabilities: ["read"] });
      expect(made.status).toBe(201);
      const mailbox = async () => (await call(ana, "GET", "/api/web/connections")).json.items[0]!;
      const polling = await eventually(async () => {
        const c = await mailbox();
        return c.status.mode === "polling" && c.status.lastSyncAt ? c : null;
      }, "the mailbox polls");
      expect(polling.status).toMatchObject({ words: "connected", lastError: null, sync: "Polling: the server offers no IMAP IDLE, so Familiar checks for new mail regularly." });

      await plain.dovecot.stop();
      const down = await eventually(async () => {
        const c = await mailbox();
        return c.status.state === "error" ? c : null;
      }, "the lost server is a problem");
      expect(down.status.words).toBe("problem");
      expect(down.status.lastError).toMatch(/^(The IMAP server closed the connection; Familiar reconnects\.|Nothing answered at 127\.0\.0\.1:\d+ \(connection refused\)\. Check the host and port\.)$/);
      // The next try finds nothing listening, and says so; the last sync of before still shows.
      const refused = await eventually(async () => {
        const c = await mailbox();
        return c.status.lastError?.startsWith("Nothing answered") && c.status.mode === "waiting" ? c : null;
      }, "the reconnect is refused");
      expect(refused.status).toMatchObject({ words: "problem", sync: "Reconnecting after a failure: waiting a little before the next try." });
      expect(refused.status.lastError).toMatch(/^Nothing answered at 127\.0\.0\.1:\d+ \(connection refused\)\. Check the host and port\.$/);
      expect(refused.status.lastSyncAt).not.toBeNull();

      await plain.dovecot.start();
      const back = await eventually(async () => {
        const c = await mailbox();
        return c.status.state === "ok" && c.status.mode === "polling" ? c : null;
      }, "the mailbox is connected again");
      expect(back.status).toMatchObject({ words: "connected", lastError: null });
    } finally {
      await app?.close();
      app = null;
      await plain.close();
    }
  }, 120_000);

  it("adds a CalDAV account (Test runs the discovery) and a feed; read and write are granted separately; a feed cannot be written", async () => {
    app = await start();
    const ana = await signIn("ana");
    const wrong = await call(ana, "POST", "/api/web/connections/check", { kind: "caldav", values: { url: radicale.url, user: radicale.user, password: "nope-nope" } });
    expect(wrong.json.ok).toBe(false);
    expect(wrong.json.problems.join(" ")).toMatch(/password|user name|refused|log ?in|401/i);
    expect(wrong.raw).not.toContain("nope-nope");
    const bad = await call(ana, "POST", "/api/web/connections/check", { kind: "caldav", values: { url: "ftp://calendar.example", user: "ana", password: "x" } });
    expect(bad.json.ok).toBe(false);
    expect(bad.json.problems.join(" ")).toMatch(/must start with https:\/\//);
    const right = await call(ana, "POST", "/api/web/connections/check", { kind: "caldav", values: { url: radicale.url, user: radicale.user, password: radicale.password } });
    expect(right.json).toEqual({ ok: true, summary: "Found 1 calendar: “Home”." });

    const made = await call(ana, "POST", "/api/web/connections", { kind: "caldav", values: { url: radicale.url, user: radicale.user, password: radicale.password }, capabilities: ["read"] });
    expect(made.status).toBe(201);
    expect(made.raw).not.toContain(radicale.password);
    const caldav = made.json.connection;
    expect(caldav.available.map((c) => c.id)).toEqual(["read", "write"]);
    expect(caldav.capabilities).toEqual(["read"]);
    const both = await call(ana, "PUT", `/api/web/connections/${caldav.id}/capabilities`, { capabilities: ["read", "write"] });
    expect(both.json.capabilities).toEqual(["read", "write"]);

    const feedUrl = `${feeds.origin}/school.ics`;
    expect((await call(ana, "POST", "/api/web/connections", { kind: "ics", values: { url: feedUrl, name: "School" }, capabilities: ["read", "write"] })).json.error).toMatch(/has no capability write/);
    const feed = await call(ana, "POST", "/api/web/connections", { kind: "ics", values: { url: feedUrl, name: "School" }, capabilities: ["read"] });
    expect(feed.status).toBe(201);
    expect(feed.json.test).toMatchObject({ ok: true });
    const items = (await call(ana, "GET", "/api/web/connections")).json.items;
    expect(items.map((c) => c.label).sort()).toEqual(["School", `${radicale.user} at ${new URL(radicale.url).host}`]);

    const personId = (await app.store.persons.findIdentity("local", "ana"))!.personId;
    expect(await vaultNames(personId)).toContain(`connection.${caldav.id}`);
    expect((await call(ana, "DELETE", `/api/web/connections/${caldav.id}`)).status).toBe(204);
    expect(await vaultNames(personId)).not.toContain(`connection.${caldav.id}`);
    expect(filesContaining(radicale.password)).toEqual([]);
    expect(app.logs.join("\n")).not.toContain(radicale.password);
  }, 90_000);

  it("the one-time /connect form has a Test that keeps nothing and a Connect that links to the Connections section", async () => {
    app = await start();
    await app.say("ana", "/connect email");
    const offered = await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.includes("/connect/")), 15_000);
    const said = offered.map((m) => m.text).join("\n");
    expect(said).toContain(`${app.url}/dashboard/connections`);
    const url = /(http:\/\/\S+\/connect\/[A-Za-z0-9_-]+)/.exec(said)![1]!;
    const html = await (await fetch(url)).text();
    expect(html).toContain('name="action" value="test"');
    expect(html).toContain('href="/dashboard/connections"');
    const post = (values: Record<string, string>) => fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams([...Object.entries(values), ["capabilities", "read"]]).toString() });
    const wrong = await post({ ...mailValues(), password: "not-the-password", action: "test" });
    expect(wrong.status).toBe(400);
    const wrongHtml = await wrong.text();
    expect(wrongHtml).toMatch(/role="alert"[^]*IMAP/);
    expect(wrongHtml).not.toContain("not-the-password");
    const personId = (await app.store.persons.findIdentity("local", "ana"))!.personId;
    const right = await post({ ...mailValues(), password: servers.accounts[0].password, action: "test" });
    expect(right.status).toBe(200);
    const rightHtml = await right.text();
    expect(rightHtml).toContain("Test passed: IMAP: logged in");
    expect(rightHtml).not.toContain(servers.accounts[0].password);
    expect(await app.store.connections.listConnections({ personId })).toEqual([]);
    const kept = await post({ ...mailValues(), password: servers.accounts[0].password, action: "connect" });
    expect(kept.status).toBe(200);
    const keptHtml = await kept.text();
    expect(keptHtml).toContain("Familiar may: Read mail.");
    expect(keptHtml).toContain('href="/dashboard/connections"');
    expect(await app.store.connections.listConnections({ personId })).toHaveLength(1);
    // `/connect` alone lists it in the words of the Connections section.
    await app.say("ana", "/connect");
    const listed = await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.startsWith("Your connections:")), 15_000);
    expect(listed.find((m) => m.text.startsWith("Your connections:"))!.text).toMatch(/• ana@example\.test \(email; read\) — (connected|connecting)\. .+\n.*Connections section of the web app/);
  }, 60_000);
});
