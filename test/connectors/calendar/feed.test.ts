import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CalendarError } from "../../../connectors/calendar/errors.js";
import { feedUrl, fetchFeed } from "../../../connectors/calendar/feed.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { startIcsServer, type IcsServer } from "../../helpers/ics-server.js";

let server: IcsServer;
let guard: EgressGuard;

const feed = (...uids: string[]) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "X-WR-CALNAME:School", ...uids.flatMap((uid, i) => ["BEGIN:VEVENT", `UID:${uid}`, `DTSTART;VALUE=DATE:2026090${i + 1}`, `SUMMARY:Day ${uid}`, "END:VEVENT"]), "END:VCALENDAR", ""].join("\r\n");

beforeAll(async () => {
  server = await startIcsServer();
  guard = new EgressGuard({ privateHostsAllowed: [server.host], maxBytes: 64 * 1024 * 1024 });
});

afterAll(async () => {
  await server?.close();
});

describe("iCalendar feeds", () => {
  it("fetches a feed, then asks conditionally and gets a 304 until it changes", async () => {
    server.set("/school.ics", { body: feed("t1", "t2") });
    const first = await fetchFeed(guard, `${server.origin}/school.ics`, null);
    expect(first.kind).toBe("changed");
    if (first.kind !== "changed") return;
    expect(first.parsed.name).toBe("School");
    expect(first.parsed.series.map((s) => s.uid)).toEqual(["t1", "t2"]);
    expect(first.validators.etag).toMatch(/^"/);
    expect(first.validators.lastModified).not.toBeNull();

    expect((await fetchFeed(guard, `${server.origin}/school.ics`, first.validators)).kind).toBe("unchanged");
    const asked = server.requests.at(-1)!;
    expect(asked).toMatchObject({ ifNoneMatch: first.validators.etag, status: 304 });
    expect(asked.ifModifiedSince).toBe(first.validators.lastModified);

    server.set("/school.ics", { body: feed("t1", "t2", "t3") });
    const changed = await fetchFeed(guard, `${server.origin}/school.ics`, first.validators);
    expect(changed.kind === "changed" && changed.parsed.series.length).toBe(3);
  });

  it("uses Last-Modified when the server sends no ETag", async () => {
    server.set("/plain.ics", { body: feed("p1"), conditional: true });
    const first = await fetchFeed(guard, `${server.origin}/plain.ics`, null);
    if (first.kind !== "changed") throw new Error("expected a body");
    expect((await fetchFeed(guard, `${server.origin}/plain.ics`, { etag: null, lastModified: first.validators.lastModified })).kind).toBe("unchanged");
  });

  it("says so when the address answers a web page, and when it is gone", async () => {
    server.set("/login", { body: "<!doctype html><html><body><form>Sign in</form></body></html>", contentType: "text/html" });
    const html = await fetchFeed(guard, `${server.origin}/login`, null).catch((e: unknown) => e);
    expect((html as CalendarError).code).toBe("not_icalendar");
    expect((html as CalendarError).message).toMatch(/web page \(HTML\)/);
    const gone = await fetchFeed(guard, `${server.origin}/nothing.ics`, null).catch((e: unknown) => e);
    expect((gone as CalendarError).code).toBe("not_found");
  });

  it("refuses a 20 MB feed without reading it all, with a clear error", async () => {
    const big = Buffer.alloc(20 * 1024 * 1024, "X");
    big.write("BEGIN:VCALENDAR\r\nX-PAD:");
    server.set("/huge.ics", { body: big });
    const error = await fetchFeed(guard, `${server.origin}/huge.ics`, null).catch((e: unknown) => e);
    expect((error as CalendarError).code).toBe("too_large");
    expect((error as CalendarError).message).toMatch(/larger than 10 MB.*last good fetch is kept/);
  });

  it("keeps the good events of a feed with a bad one", async () => {
    const text = feed("ok1", "ok2").replace("BEGIN:VEVENT\r\nUID:ok2", "BEGIN:VEVENT\r\nUID:bad\r\nSUMMARY:No start\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:ok2");
    server.set("/mixed.ics", { body: text });
    const result = await fetchFeed(guard, `${server.origin}/mixed.ics`, null);
    if (result.kind !== "changed") throw new Error("expected a body");
    expect(result.parsed.series.map((s) => s.uid)).toEqual(["ok1", "ok2"]);
    expect(result.parsed.errors).toEqual([{ item: 'event "No start" (bad)', message: "the event has no start (DTSTART)" }]);
  });

  it("reads webcal:// as https:// and goes through the egress guard (a loopback feed not allowed is refused)", async () => {
    expect(feedUrl("webcal://example.org/a.ics")).toBe("https://example.org/a.ics");
    expect(() => feedUrl("file:///etc/passwd")).toThrow(CalendarError);
    const before = server.requests.length;
    const error = await fetchFeed(new EgressGuard(), `${server.origin}/school.ics`, null).catch((e: unknown) => e);
    expect((error as CalendarError).code).toBe("unreachable");
    expect(server.requests.length).toBe(before);
  });
});
