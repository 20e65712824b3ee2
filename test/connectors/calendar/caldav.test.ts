import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CaldavClient, type KnownCalendar, type RemoteCalendar } from "../../../connectors/calendar/caldav.js";
import { CalendarError } from "../../../connectors/calendar/errors.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { startRadicale, type RadicaleServer } from "../../helpers/radicale.js";

let radicale: RadicaleServer;
let guard: EgressGuard;
let work: string;

const vevent = (uid: string, summary: string, start = "20260302T090000") =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260101T000000Z", `DTSTART;TZID=Europe/Berlin:${start}`, "DURATION:PT1H", `SUMMARY:${summary}`, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

const empty = (): KnownCalendar => ({ syncToken: null, ctag: null, etags: new Map() });
const knownAfter = (delta: Awaited<ReturnType<CaldavClient["changes"]>>, before: KnownCalendar): KnownCalendar => {
  if (delta.kind === "unchanged") return { ...before, syncToken: delta.syncToken, ctag: delta.ctag };
  const etags = new Map(delta.full ? [] : before.etags);
  if (!delta.full) for (const d of delta.deletes) etags.delete(d);
  else for (const [href, etag] of before.etags) if (!delta.deletes.includes(href)) etags.set(href, etag);
  for (const o of delta.upserts) etags.set(o.href, o.etag);
  return { syncToken: delta.syncToken, ctag: delta.ctag, etags };
};

beforeAll(async () => {
  radicale = await startRadicale();
  guard = new EgressGuard({ privateHostsAllowed: [new URL(radicale.url).host] });
  work = await radicale.makeCalendar("work", "Work");
  await radicale.makeCalendar("home", "Home");
}, 30_000);

afterAll(async () => {
  await radicale?.stop();
});

function client(options: ConstructorParameters<typeof CaldavClient>[2] = {}, password = radicale.password): CaldavClient {
  return new CaldavClient({ serverUrl: radicale.url, username: radicale.user, password }, guard, options);
}

async function calendar(c: CaldavClient, name: string): Promise<RemoteCalendar> {
  const found = (await c.calendars()).find((cal) => cal.name === name);
  expect(found).toBeDefined();
  return found!;
}

describe("CalDAV against Radicale", () => {
  it("discovers the account's calendars from the server URL through .well-known", async () => {
    radicale.clearRequests();
    const calendars = await client().calendars();
    expect(calendars.map((c) => c.name).sort()).toEqual(["Home", "Work"]);
    expect(calendars.every((c) => c.supportsSync && c.syncToken !== null)).toBe(true);
    expect(calendars.find((c) => c.name === "Work")!.url).toBe(work);
    expect(radicale.requests().some((r) => r.includes("/.well-known/caldav"))).toBe(true);
  });

  it("says the password was refused, and what to do", async () => {
    const error = await client({}, "wrong").calendars().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalendarError);
    expect((error as CalendarError).code).toBe("unauthorized");
    expect((error as CalendarError).message).toMatch(/refused the user name or app password \(HTTP 401\).*app password/);
    expect((error as CalendarError).message).not.toContain("wrong");
  });

  it("refuses a loopback server the egress guard does not allow, before sending anything", async () => {
    radicale.clearRequests();
    const closed = new CaldavClient({ serverUrl: radicale.url, username: radicale.user, password: radicale.password }, new EgressGuard());
    const error = await closed.calendars().catch((e: unknown) => e);
    expect((error as CalendarError).code).toBe("unreachable");
    expect(radicale.requests()).toEqual([]);
  });

  it("says a request that would carry another vault value was not sent, rather than 'not a CalDAV server'", async () => {
    radicale.clearRequests();
    const guard = new EgressGuard({ privateHostsAllowed: [new URL(radicale.url).host], outboundCheck: () => ["connection.con_other"] });
    const error = await new CaldavClient({ serverUrl: radicale.url, username: radicale.user, password: radicale.password }, guard).calendars().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalendarError);
    expect((error as CalendarError).code).toBe("unreachable");
    expect((error as CalendarError).message).toMatch(/^nothing was sent to http:\/\/127\.0\.0\.1:\d+: .*secret connection\.con_other/);
    expect(radicale.requests()).toEqual([]);
  });

  it("says a web page is not a CalDAV server", async () => {
    const html: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><body>Welcome! Please sign in.</body></html>");
    });
    await new Promise<void>((resolve) => html.listen(0, "127.0.0.1", resolve));
    const port = (html.address() as { port: number }).port;
    try {
      const c = new CaldavClient({ serverUrl: `http://127.0.0.1:${port}/`, username: "u", password: "p" }, new EgressGuard({ privateHostsAllowed: [`127.0.0.1:${port}`] }));
      const error = await c.calendars().catch((e: unknown) => e);
      expect((error as CalendarError).code).toBe("not_caldav");
      expect((error as CalendarError).message).toMatch(/sent a web page/);
    } finally {
      await new Promise((resolve) => html.close(resolve));
    }
  });

  it("syncs incrementally by sync token: additions, changes and deletions, then nothing", async () => {
    const c = client();
    const a = await radicale.put(work, "a.ics", vevent("a", "Alpha"));
    const b = await radicale.put(work, "b.ics", vevent("b", "Beta"));
    let known = empty();
    const first = await c.changes(await calendar(c, "Work"), known);
    expect(first.kind).toBe("changes");
    if (first.kind !== "changes") return;
    expect(first.full).toBe(true);
    expect(first.upserts.map((o) => o.href).sort()).toEqual([a, b]);
    expect(first.upserts.find((o) => o.href === a)!.ics).toContain("SUMMARY:Alpha");
    known = knownAfter(first, known);

    await radicale.put(work, "b.ics", vevent("b", "Beta v2"));
    const cc = await radicale.put(work, "c.ics", vevent("c", "Gamma"));
    await radicale.remove(a);
    const second = await c.changes(await calendar(c, "Work"), known);
    expect(second.kind).toBe("changes");
    if (second.kind !== "changes") return;
    expect(second.full).toBe(false);
    expect(second.upserts.map((o) => o.href).sort()).toEqual([b, cc]);
    expect(second.deletes).toEqual([a]);
    known = knownAfter(second, known);

    const third = await c.changes(await calendar(c, "Work"), known);
    expect(third.kind).toBe("unchanged");
  });

  it("answers a refused sync token with a full listing, so an event deleted meanwhile is deleted (field case C3)", async () => {
    const c = client();
    const cal = await calendar(c, "Work");
    const listed = await radicale.list(work);
    const etags = new Map(listed.map((href) => [href, "stale"] as const));
    const doomed = listed[0]!;
    await radicale.remove(doomed);
    const delta = await c.changes(cal, { syncToken: "http://radicale.org/ns/sync/0000000000000000000000000000000000000000000000000000000000000000", ctag: null, etags });
    expect(delta.kind).toBe("changes");
    if (delta.kind !== "changes") return;
    expect(delta.full).toBe(true);
    expect(delta.reason).toMatch(/refused the stored sync token/);
    expect(delta.deletes).toEqual([doomed]);
    expect(delta.upserts.map((o) => o.href).sort()).toEqual(listed.slice(1).sort());
    expect(delta.syncToken).not.toBeNull();
  });

  it("falls back to ctag and ETags where sync-collection is not used", async () => {
    const c = client({ useSyncCollection: false });
    const home = await calendar(c, "Home");
    expect(home.supportsSync).toBe(false);
    const x = await radicale.put(radicale.home + "home/", "x.ics", vevent("x", "Ex"));
    const first = await c.changes(await calendar(c, "Home"), empty());
    if (first.kind !== "changes") throw new Error("expected changes");
    const known = knownAfter(first, empty());
    expect((await c.changes(await calendar(c, "Home"), known)).kind).toBe("unchanged");
    await radicale.remove(x);
    const y = await radicale.put(radicale.home + "home/", "y.ics", vevent("y", "Why"));
    const after = await c.changes(await calendar(c, "Home"), known);
    if (after.kind !== "changes") throw new Error("expected changes");
    expect(after.deletes).toEqual([x]);
    expect(after.upserts.map((o) => o.href)).toEqual([y]);
  });

  it("creates, updates with If-Match, refuses a stale ETag, and deletes", async () => {
    const c = client();
    const created = await c.create(work, "fam-1@familiar", vevent("fam-1@familiar", "Created"));
    expect(await radicale.get(created.href)).toContain("SUMMARY:Created");
    expect(created.etag).not.toBeNull();
    const updated = await c.update(created.href, vevent("fam-1@familiar", "Updated"), created.etag);
    expect(await radicale.get(created.href)).toContain("SUMMARY:Updated");
    const stale = await c.update(created.href, vevent("fam-1@familiar", "Lost"), created.etag).catch((e: unknown) => e);
    expect((stale as CalendarError).code).toBe("conflict");
    const taken = await c.create(work, "fam-1@familiar", vevent("fam-1@familiar", "Again")).catch((e: unknown) => e);
    expect((taken as CalendarError).code).toBe("conflict");
    await c.remove(created.href, updated.etag);
    expect(await radicale.get(created.href)).toBeNull();
    await c.remove(created.href, null);
  });
});
