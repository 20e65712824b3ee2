/**
 * The calendar store contract, on SQLite and on the MongoDB adapter (mingo fake always; a real
 * server when MONGODB_URI is set).
 */
import { randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseICalendar } from "../../../connectors/calendar/ical/parse.js";
import { MongoCalendarStore } from "../../../connectors/calendar/mongo-store.js";
import { SqliteCalendarStore } from "../../../connectors/calendar/sqlite-store.js";
import { calendarIdOf, eventIdOf, storedItem, type CalendarStore } from "../../../connectors/calendar/store.js";
import { asId } from "../../../core/ids.js";
import { MingoDb } from "../../fakes/mingo-db.js";

const alice = asId("person", "per_alice");
const bob = asId("person", "per_bob");

function item(href: string, uid: string, dtstart: string, rrule?: string) {
  const text = ["BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VEVENT", `UID:${uid}`, `DTSTART:${dtstart}`, "DURATION:PT1H", ...(rrule ? [`RRULE:${rrule}`] : []), `SUMMARY:${uid}`, "END:VEVENT", "END:VCALENDAR"].join("\r\n");
  return storedItem(href, `"${uid}-1"`, text, parseICalendar(text).series);
}

function contract(name: string, open: () => Promise<{ store: CalendarStore; close(): Promise<void> }>): void {
  describe(`calendar store: ${name}`, () => {
    let store: CalendarStore;
    let close: () => Promise<void>;
    const cal = calendarIdOf("conn_1", "https://dav.example/alice/work/");
    const base = { personId: alice, calendarId: cal, sourceId: "conn_1", kind: "caldav" as const, url: "https://dav.example/alice/work/", name: "Work", color: null, writable: true };

    beforeEach(async () => {
      ({ store, close } = await open());
      return () => close();
    });

    it("keeps calendars per person, and keeps sync state when only the description changes", async () => {
      await store.saveCalendar(base);
      await store.saveCalendar({ ...base, personId: bob });
      await store.applySync(alice, cal, { upserts: [], deletes: [], sync: { syncToken: "t1", ctag: "c1", etag: null, lastModified: null }, syncedAt: "2026-03-01T00:00:00.000Z" });
      await store.saveCalendar({ ...base, name: "Work (renamed)" });
      const [saved] = await store.listCalendars(alice);
      expect(saved).toMatchObject({ name: "Work (renamed)", sync: { syncToken: "t1", ctag: "c1" }, syncedAt: "2026-03-01T00:00:00.000Z", error: null, writable: true });
      await store.setCalendarError(alice, cal, "server down");
      expect((await store.listCalendars(alice))[0]!.error).toBe("server down");
      expect(await store.listCalendars(bob)).toHaveLength(1);
    });

    it("applies upserts and deletes, finds items by window and by UID, and forgets a removed calendar", async () => {
      await store.saveCalendar(base);
      const single = item("https://dav.example/alice/work/a.ics", "a", "20260301T090000Z");
      const weekly = item("https://dav.example/alice/work/b.ics", "b", "20250101T090000Z", "FREQ=WEEKLY");
      const old = item("https://dav.example/alice/work/c.ics", "c", "20200101T090000Z");
      await store.applySync(alice, cal, { upserts: [single, weekly, old], deletes: [], sync: { syncToken: "t1", ctag: null, etag: null, lastModified: null }, syncedAt: "2026-03-01T00:00:00.000Z" });
      const march = await store.itemsInWindow(alice, Date.parse("2026-03-01T00:00:00Z"), Date.parse("2026-04-01T00:00:00Z"));
      expect(march.map((i) => i.href).sort()).toEqual([single.href, weekly.href]);
      expect(march.find((i) => i.href === single.href)!.series[0]!.uid).toBe("a");
      expect(await store.itemsInWindow(bob, 0, Date.parse("2030-01-01T00:00:00Z"))).toEqual([]);
      expect(await store.itemsInWindow(alice, 0, Date.parse("2030-01-01T00:00:00Z"), [])).toEqual([]);
      expect((await store.itemsByEvent(alice, eventIdOf(cal, "b"))).map((i) => i.href)).toEqual([weekly.href]);
      const tags = await store.itemTags(alice, cal);
      expect(tags.get(single.href)).toEqual({ etag: '"a-1"', hash: single.hash });
      const [got] = await store.getItems(alice, cal, [single.href, "https://dav.example/alice/work/none.ics"]);
      expect(got).toMatchObject({ href: single.href, etag: '"a-1"', ics: single.ics, startMs: single.startMs, endMs: single.endMs });
      expect(await store.getItems(alice, cal, [])).toEqual([]);

      await store.applySync(alice, cal, { upserts: [item(single.href, "a2", "20260302T090000Z")], deletes: [weekly.href], sync: { syncToken: "t2", ctag: null, etag: null, lastModified: null }, syncedAt: "2026-03-02T00:00:00.000Z" });
      expect(await store.itemsByEvent(alice, eventIdOf(cal, "b"))).toEqual([]);
      expect(await store.itemsByEvent(alice, eventIdOf(cal, "a"))).toEqual([]);
      expect((await store.itemsByEvent(alice, eventIdOf(cal, "a2"))).map((i) => i.href)).toEqual([single.href]);
      expect((await store.listCalendars(alice))[0]!.sync.syncToken).toBe("t2");

      await store.applySync(alice, cal, { upserts: [old], deletes: [], replaceAll: true, sync: { syncToken: null, ctag: null, etag: '"f"', lastModified: null }, syncedAt: "2026-03-03T00:00:00.000Z" });
      expect([...(await store.itemTags(alice, cal)).keys()]).toEqual([old.href]);

      // Familiar's own write: items change, the sync state does not.
      await store.applySync(alice, cal, { upserts: [single], deletes: [] });
      expect((await store.listCalendars(alice))[0]!.sync.etag).toBe('"f"');
      expect([...(await store.itemTags(alice, cal)).keys()].sort()).toEqual([single.href, old.href].sort());

      await store.saveCalendar({ ...base, personId: bob });
      await store.removeCalendar(alice, cal);
      expect(await store.listCalendars(alice)).toEqual([]);
      expect(await store.listCalendars(bob)).toHaveLength(1);
      await store.removeSource("conn_1");
      expect(await store.listCalendars(bob)).toEqual([]);
      expect(await store.itemTags(alice, cal)).toEqual(new Map());
      expect(await store.itemsByEvent(alice, eventIdOf(cal, "c"))).toEqual([]);
    });

    it("announces a conflict key once", async () => {
      const now = new Date("2026-03-01T00:00:00Z");
      expect(await store.recordConflicts(alice, ["k1", "k2"], now)).toEqual(["k1", "k2"]);
      expect(await store.recordConflicts(alice, ["k2", "k3"], now)).toEqual(["k3"]);
      expect(await store.recordConflicts(bob, ["k1"], now)).toEqual(["k1"]);
    });

    it("leases a source's sync to one holder at a time, remembers a sync asked for meanwhile, and lets an expired lease be taken", async () => {
      const t = (s: number) => new Date(Date.parse("2026-03-01T00:00:00Z") + s * 1000);
      expect(await store.claimSync("conn_1", "p1#1", t(0), 60_000)).toBe(true);
      // Another process's job finds it held: refused, and the holder is told to sync once more.
      expect(await store.claimSync("conn_1", "p2#1", t(10), 60_000)).toBe(false);
      expect(await store.claimSync("conn_2", "p2#1", t(10), 60_000)).toBe(true);
      expect(await store.renewSync("conn_1", "p1#1", t(50), 60_000)).toBe(true);
      expect(await store.renewSync("conn_1", "p2#1", t(50), 60_000)).toBe(false);
      // Renewed until t(110): still held at t(100).
      expect(await store.claimSync("conn_1", "p2#2", t(100), 60_000)).toBe(false);
      expect(await store.releaseSync("conn_1", "p1#1")).toBe(true);
      // Released: the next claim takes it, and with nobody asking meanwhile its release says so.
      expect(await store.claimSync("conn_1", "p1#2", t(101), 60_000)).toBe(true);
      expect(await store.releaseSync("conn_1", "p2#1")).toBe(false);
      expect(await store.releaseSync("conn_1", "p1#2")).toBe(false);
      // A holder that died: its lease ends by itself and another takes it over.
      expect(await store.claimSync("conn_1", "dead#1", t(200), 60_000)).toBe(true);
      expect(await store.claimSync("conn_1", "p2#3", t(259), 60_000)).toBe(false);
      expect(await store.claimSync("conn_1", "p2#3", t(261), 60_000)).toBe(true);
      expect(await store.renewSync("conn_1", "dead#1", t(262), 60_000)).toBe(false);
      expect(await store.releaseSync("conn_1", "dead#1")).toBe(false);
      expect(await store.releaseSync("conn_1", "p2#3")).toBe(false);
    });
  });
}

contract("sqlite", async () => {
  const store = new SqliteCalendarStore({ path: ":memory:" });
  return { store, close: async () => store.close() };
});

contract("mongodb (mingo fake)", async () => {
  const store = new MongoCalendarStore(new MingoDb());
  await store.ensureIndexes();
  return { store, close: async () => undefined };
});

const uri = process.env.MONGODB_URI;
if (uri === undefined || uri === "") console.warn("Calendar store contract on a MongoDB server skipped: set MONGODB_URI to run it");

describe.skipIf(uri === undefined || uri === "")("calendar store against a MongoDB server (MONGODB_URI)", () => {
  const runDb = `familiar_cal_test_${Date.now()}_${randomBytes(3).toString("hex")}`;
  let client: MongoClient;
  let counter = 0;
  beforeAll(async () => {
    client = new MongoClient(uri!, { serverSelectionTimeoutMS: 5000 });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
  });
  contract("mongodb (server)", async () => {
    const db = client.db(`${runDb}_${++counter}`);
    const store = new MongoCalendarStore(db);
    await store.ensureIndexes();
    return { store, close: () => db.dropDatabase().then(() => undefined) };
  });
});
