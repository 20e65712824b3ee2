import { describe, expect, it } from "vitest";
import { describeRecurrence } from "../../../connectors/calendar/ical/describe.js";
import { expandSeries } from "../../../connectors/calendar/ical/expand.js";
import { NotICalendarError, parseICalendar } from "../../../connectors/calendar/ical/parse.js";
import { deleteOccurrenceIcs, newEventIcs, updateOccurrenceIcs, updateSeriesIcs } from "../../../connectors/calendar/ical/write.js";
import { isoInZone } from "../../../connectors/calendar/ical/zones.js";

const wrap = (...lines: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", ...lines, "END:VCALENDAR", ""].join("\r\n");
const event = (...lines: string[]) => ["BEGIN:VEVENT", ...lines, "END:VEVENT"];

describe("bad input: a clear error for the item, the rest kept", () => {
  it("refuses a web page or an empty body as a whole, saying what it is", () => {
    expect(() => parseICalendar("<!DOCTYPE html><html><body>Sign in</body></html>")).toThrow(NotICalendarError);
    expect(() => parseICalendar("<html><body>Sign in</body></html>")).toThrow(/web page \(HTML\)/);
    expect(() => parseICalendar("")).toThrow(/empty/);
    expect(() => parseICalendar('{"events": []}')).toThrow(/not an iCalendar file/);
  });

  it("keeps the good events around a malformed one, an event without DTSTART and one with an unknown TZID", () => {
    const text = wrap(
      ...event("UID:good-1", "DTSTART:20260301T090000Z", "SUMMARY:First"),
      ...event("UID:broken", "DTSTART:20260302T090000Z", "RRULE:FREQ=SOMETIMES", "SUMMARY:Broken"),
      ...event("UID:no-start", "SUMMARY:Floating idea"),
      ...event("UID:mars", "DTSTART;TZID=Mars/Olympus_Mons:20260303T090000", "SUMMARY:Rover"),
      "THIS LINE HAS NO COLON",
      ...event("UID:good-2", "DTSTART;VALUE=DATE:20260304", "SUMMARY:Second"),
    );
    const parsed = parseICalendar(text);
    expect(parsed.series.map((s) => s.uid).sort()).toEqual(["good-1", "good-2"]);
    const byItem = Object.fromEntries(parsed.errors.map((e) => [e.item, e.message]));
    expect(byItem["event broken"]).toMatch(/not valid iCalendar.*frequency/i);
    expect(byItem['event "Floating idea" (no-start)']).toBe("the event has no start (DTSTART)");
    expect(byItem['event "Rover" (mars)']).toMatch(/time zone "Mars\/Olympus_Mons" is unknown/);
  });

  it("reports a cut-off text and keeps what came before", () => {
    const text = wrap(...event("UID:whole", "DTSTART:20260301T090000Z")).replace("END:VCALENDAR", "BEGIN:VEVENT\r\nUID:cut\r\nDTSTART:2026");
    const parsed = parseICalendar(text);
    expect(parsed.series.map((s) => s.uid)).toEqual(["whole"]);
    expect(parsed.errors.some((e) => /never ends/.test(e.message))).toBe(true);
  });

  it("reads a TZID behind a vendor prefix as its IANA zone, and keeps a feed's name", () => {
    const parsed = parseICalendar(wrap("X-WR-CALNAME:School terms", ...event("UID:moz", "DTSTART;TZID=/mozilla.org/20050126_1/Europe/Berlin:20260301T090000")));
    expect(parsed.name).toBe("School terms");
    const [o] = expandSeries(parsed.series[0]!, { fromMs: 0, toMs: Date.parse("2027-01-01T00:00:00Z"), zone: "UTC" }).occurrences;
    expect(new Date(o!.startMs).toISOString()).toBe("2026-03-01T08:00:00.000Z");
  });

  it("counts attendees and reads status and transparency", () => {
    const parsed = parseICalendar(wrap(...event("UID:a", "DTSTART:20260301T090000Z", "ATTENDEE;CN=Ann:mailto:ann@example.org", "ATTENDEE:mailto:bo@example.org", "STATUS:TENTATIVE", "TRANSP:TRANSPARENT")));
    expect(parsed.series[0]!.master!.details).toMatchObject({ attendees: 2, attendeeAddresses: ["ann@example.org", "bo@example.org"], status: "TENTATIVE", transparent: true });
  });
});

describe("recurrence in words", () => {
  const monday = { kind: "zoned" as const, wall: "2026-03-02T09:00:00", tzid: "Europe/Berlin" };
  it.each([
    ["FREQ=WEEKLY", "every week on Monday"],
    ["FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE", "every 2 weeks on Monday and Wednesday"],
    ["FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "every weekday"],
    ["FREQ=DAILY;COUNT=5", "every day, 5 times"],
    ["FREQ=MONTHLY;BYDAY=-1FR", "every month on the last Friday"],
    ["FREQ=MONTHLY", "every month on day 2"],
    ["FREQ=YEARLY", "every year on 2 March"],
    ["FREQ=WEEKLY;UNTIL=20261231T225959Z", "every week on Monday, until 31 Dec 2026"],
    ["FREQ=DAILY;BYHOUR=9,17", "every day (rule: FREQ=DAILY;BYHOUR=9,17)"],
  ])("%s → %s", (rule, words) => {
    expect(describeRecurrence(rule, monday, 0, "Europe/Berlin")).toBe(words);
  });
  it("says nothing for a single event", () => expect(describeRecurrence(null, monday, 0, "UTC")).toBeNull());
});

describe("writing events", () => {
  const berlin = (wall: string) => ({ kind: "zoned" as const, wall, tzid: "Europe/Berlin" });
  const now = new Date("2026-02-20T10:00:00Z");

  it("writes a weekly event on the person's wall clock with TZID and VTIMEZONE, which reads back at 09:00 across the change", () => {
    const ics = newEventIcs({ title: "Piano", start: berlin("2026-03-16T09:00:00"), end: berlin("2026-03-16T10:00:00"), rrule: "FREQ=WEEKLY", attendees: ["ann@example.org"] }, { uid: "fam-1", now });
    expect(ics).toContain("DTSTART;TZID=Europe/Berlin:20260316T090000");
    expect(ics).toContain("BEGIN:VTIMEZONE");
    expect(ics).toContain("ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:ann@example.org");
    const series = parseICalendar(ics).series[0]!;
    const starts = expandSeries(series, { fromMs: Date.parse("2026-03-20T00:00:00Z"), toMs: Date.parse("2026-04-03T00:00:00Z"), zone: "Europe/Berlin" }).occurrences.map((o) => isoInZone(o.startMs, "Europe/Berlin"));
    expect(starts).toEqual(["2026-03-23T09:00:00+01:00", "2026-03-30T09:00:00+02:00"]);
  });

  it("writes an all-day event as DATE values with an exclusive end", () => {
    const ics = newEventIcs({ title: "Camp", start: { kind: "date", date: "2026-07-04" }, end: { kind: "date", date: "2026-07-07" } }, { uid: "fam-2", now });
    expect(ics).toContain("DTSTART;VALUE=DATE:20260704");
    expect(ics).toContain("DTEND;VALUE=DATE:20260707");
    expect(ics).not.toContain("VTIMEZONE");
  });

  it("moves one occurrence as an override, cancels another with EXDATE, and changes the series keeping the rest", () => {
    const ics = newEventIcs({ title: "Piano", start: berlin("2026-03-16T09:00:00"), end: berlin("2026-03-16T10:00:00"), rrule: "FREQ=WEEKLY" }, { uid: "fam-3", now });
    const moved = updateOccurrenceIcs(ics, "fam-3", { kind: "zoned", wall: "2026-03-23T09:00:00", tzid: "Europe/Berlin" }, { start: berlin("2026-03-24T17:00:00"), end: berlin("2026-03-24T18:00:00") }, now);
    const cancelled = deleteOccurrenceIcs(moved, "fam-3", { kind: "zoned", wall: "2026-03-30T09:00:00", tzid: "Europe/Berlin" }, now);
    const renamed = updateSeriesIcs(cancelled, "fam-3", { title: "Piano lesson", location: "Music school" }, now);
    const parsed = parseICalendar(renamed);
    expect(parsed.errors).toEqual([]);
    const occurrences = expandSeries(parsed.series[0]!, { fromMs: Date.parse("2026-03-15T00:00:00Z"), toMs: Date.parse("2026-04-10T00:00:00Z"), zone: "Europe/Berlin" }).occurrences;
    expect(occurrences.map((o) => [isoInZone(o.startMs, "Europe/Berlin"), o.details.title])).toEqual([
      ["2026-03-16T09:00:00+01:00", "Piano lesson"],
      ["2026-03-24T17:00:00+01:00", "Piano"],
      ["2026-04-06T09:00:00+02:00", "Piano lesson"],
    ]);
    expect(occurrences[0]!.details.location).toBe("Music school");
    expect(renamed).toMatch(/SEQUENCE:1/);
  });
});
