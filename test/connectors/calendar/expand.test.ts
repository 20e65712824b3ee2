import { describe, expect, it } from "vitest";
import { expandSeries, seriesBounds } from "../../../connectors/calendar/ical/expand.js";
import { parseICalendar } from "../../../connectors/calendar/ical/parse.js";
import { isoInZone } from "../../../connectors/calendar/ical/zones.js";
import type { CalendarSeries } from "../../../connectors/calendar/model.js";

/** A VCALENDAR around the given VEVENT lines (CRLF). */
function ics(...events: string[][]): string {
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", ...events.flatMap((e) => ["BEGIN:VEVENT", ...e, "END:VEVENT"]), "END:VCALENDAR", ""].join("\r\n");
}

function only(text: string): CalendarSeries {
  const parsed = parseICalendar(text);
  expect(parsed.errors).toEqual([]);
  expect(parsed.series).toHaveLength(1);
  return parsed.series[0]!;
}

function localStarts(series: CalendarSeries, from: string, to: string, zone: string): string[] {
  const { occurrences } = expandSeries(series, { fromMs: Date.parse(from), toMs: Date.parse(to), zone });
  return occurrences.map((o) => (o.allDay ? (o.start.kind === "date" ? o.start.date : "?") : isoInZone(o.startMs, zone)));
}

describe("recurrence across clock changes (field case C1)", () => {
  it("keeps a weekly 09:00 Europe/Berlin at 09:00 local before and after the March and October changes", () => {
    const series = only(ics(["UID:weekly-berlin", "DTSTART;TZID=Europe/Berlin:20260302T090000", "DTEND;TZID=Europe/Berlin:20260302T100000", "RRULE:FREQ=WEEKLY", "SUMMARY:Standup"]));
    const march = localStarts(series, "2026-03-20T00:00:00Z", "2026-04-07T00:00:00Z", "Europe/Berlin");
    expect(march).toEqual(["2026-03-23T09:00:00+01:00", "2026-03-30T09:00:00+02:00", "2026-04-06T09:00:00+02:00"]);
    const october = localStarts(series, "2026-10-18T00:00:00Z", "2026-11-03T00:00:00Z", "Europe/Berlin");
    expect(october).toEqual(["2026-10-19T09:00:00+02:00", "2026-10-26T09:00:00+01:00", "2026-11-02T09:00:00+01:00"]);
  });

  it("does the same for America/New_York, whose changes fall on other weeks, and shows it in Berlin time", () => {
    const series = only(ics(["UID:weekly-ny", "DTSTART;TZID=America/New_York:20260302T090000", "DURATION:PT30M", "RRULE:FREQ=WEEKLY;BYDAY=MO", "SUMMARY:Sync"]));
    expect(localStarts(series, "2026-03-02T00:00:00Z", "2026-03-31T00:00:00Z", "America/New_York")).toEqual([
      "2026-03-02T09:00:00-05:00",
      "2026-03-09T09:00:00-04:00",
      "2026-03-16T09:00:00-04:00",
      "2026-03-23T09:00:00-04:00",
      "2026-03-30T09:00:00-04:00",
    ]);
    // Between the US change (8 March) and the European one (29 March) the gap is 5 hours, not 6.
    expect(localStarts(series, "2026-03-02T00:00:00Z", "2026-04-01T00:00:00Z", "Europe/Berlin")).toEqual([
      "2026-03-02T15:00:00+01:00",
      "2026-03-09T14:00:00+01:00",
      "2026-03-16T14:00:00+01:00",
      "2026-03-23T14:00:00+01:00",
      "2026-03-30T15:00:00+02:00",
    ]);
    expect(localStarts(series, "2026-10-26T00:00:00Z", "2026-11-10T00:00:00Z", "America/New_York")).toEqual([
      "2026-10-26T09:00:00-04:00",
      "2026-11-02T09:00:00-05:00",
      "2026-11-09T09:00:00-05:00",
    ]);
  });

  it("reads a wall time in the skipped hour with the offset before the gap, and a repeated hour as its first instance (RFC 5545 §3.3.5)", () => {
    const series = only(ics(["UID:night", "DTSTART;TZID=Europe/Berlin:20260328T023000", "DURATION:PT15M", "RRULE:FREQ=DAILY;COUNT=2"]));
    const { occurrences } = expandSeries(series, { fromMs: Date.parse("2026-03-27T00:00:00Z"), toMs: Date.parse("2026-03-31T00:00:00Z"), zone: "UTC" });
    expect(occurrences.map((o) => new Date(o.startMs).toISOString())).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:30:00.000Z"]);
    const autumn = only(ics(["UID:fold", "DTSTART;TZID=Europe/Berlin:20261025T023000", "DURATION:PT15M"]));
    const [first] = expandSeries(autumn, { fromMs: 0, toMs: Date.parse("2027-01-01T00:00:00Z"), zone: "UTC" }).occurrences;
    expect(new Date(first!.startMs).toISOString()).toBe("2026-10-25T00:30:00.000Z");
  });

  it("uses a VTIMEZONE for a TZID that is not an IANA name (Outlook)", () => {
    const vtz = [
      "BEGIN:VTIMEZONE", "TZID:W. Europe Standard Time",
      "BEGIN:STANDARD", "DTSTART:16010101T030000", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "END:STANDARD",
      "BEGIN:DAYLIGHT", "DTSTART:16010101T020000", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3", "END:DAYLIGHT",
      "END:VTIMEZONE",
    ];
    const text = ["BEGIN:VCALENDAR", "VERSION:2.0", ...vtz, "BEGIN:VEVENT", "UID:outlook", "DTSTART;TZID=W. Europe Standard Time:20260323T090000", "DTEND;TZID=W. Europe Standard Time:20260323T093000", "RRULE:FREQ=WEEKLY;COUNT=3", "END:VEVENT", "END:VCALENDAR"].join("\r\n");
    const series = only(text);
    expect(Object.keys(series.timezones)).toEqual(["W. Europe Standard Time"]);
    expect(localStarts(series, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z", "Europe/Berlin")).toEqual([
      "2026-03-23T09:00:00+01:00",
      "2026-03-30T09:00:00+02:00",
      "2026-04-06T09:00:00+02:00",
    ]);
  });
});

describe("all-day events are dates (field case C2)", () => {
  const series = only(ics(["UID:holiday", "DTSTART;VALUE=DATE:20260704", "DTEND;VALUE=DATE:20260705", "SUMMARY:Holiday"]));
  for (const zone of ["Pacific/Auckland", "America/Los_Angeles", "UTC"]) {
    it(`is on 4 July for a reader in ${zone}`, () => {
      const { occurrences } = expandSeries(series, { fromMs: Date.parse("2026-06-01T00:00:00Z"), toMs: Date.parse("2026-08-01T00:00:00Z"), zone });
      expect(occurrences).toHaveLength(1);
      expect(occurrences[0]!.allDay).toBe(true);
      expect(occurrences[0]!.start).toEqual({ kind: "date", date: "2026-07-04" });
      expect(occurrences[0]!.end).toEqual({ kind: "date", date: "2026-07-05" });
      expect(isoInZone(occurrences[0]!.startMs, zone).slice(0, 10)).toBe("2026-07-04");
    });
  }

  it("places the date in the reader's local day: a window that is 4 July in Auckland finds it", () => {
    // 4 July 00:00–24:00 in Auckland is 3 July 12:00Z – 4 July 12:00Z.
    const { occurrences } = expandSeries(series, { fromMs: Date.parse("2026-07-03T12:00:00Z"), toMs: Date.parse("2026-07-03T13:00:00Z"), zone: "Pacific/Auckland" });
    expect(occurrences).toHaveLength(1);
    const none = expandSeries(series, { fromMs: Date.parse("2026-07-03T12:00:00Z"), toMs: Date.parse("2026-07-03T13:00:00Z"), zone: "America/Los_Angeles" });
    expect(none.occurrences).toHaveLength(0);
  });

  it("treats DTEND as exclusive: a three-day event covers 1–3 March, and no DTEND means one day", () => {
    const trip = only(ics(["UID:trip", "DTSTART;VALUE=DATE:20260301", "DTEND;VALUE=DATE:20260304"]));
    const [o] = expandSeries(trip, { fromMs: Date.parse("2026-02-01T00:00:00Z"), toMs: Date.parse("2026-04-01T00:00:00Z"), zone: "America/Los_Angeles" }).occurrences;
    expect(o!.end).toEqual({ kind: "date", date: "2026-03-04" });
    const after = expandSeries(trip, { fromMs: Date.parse("2026-03-04T08:00:00Z"), toMs: Date.parse("2026-03-05T08:00:00Z"), zone: "America/Los_Angeles" });
    expect(after.occurrences).toHaveLength(0);
    const single = only(ics(["UID:one", "DTSTART;VALUE=DATE:20260310"]));
    expect(expandSeries(single, { fromMs: 0, toMs: Date.parse("2027-01-01T00:00:00Z"), zone: "UTC" }).occurrences[0]!.end).toEqual({ kind: "date", date: "2026-03-11" });
  });

  it("repeats a yearly birthday on its date", () => {
    const birthday = only(ics(["UID:bday", "DTSTART;VALUE=DATE:20000229", "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1"]));
    expect(localStarts(birthday, "2027-01-01T00:00:00Z", "2029-01-01T00:00:00Z", "Pacific/Auckland")).toEqual(["2027-02-28", "2028-02-29"]);
  });
});

describe("EXDATE, RDATE, RECURRENCE-ID, COUNT and UNTIL", () => {
  const text = ics(
    [
      "UID:series",
      "DTSTART;TZID=Europe/Berlin:20260302T090000",
      "DTEND;TZID=Europe/Berlin:20260302T100000",
      "RRULE:FREQ=WEEKLY;UNTIL=20260330T070000Z",
      "EXDATE;TZID=Europe/Berlin:20260309T090000",
      "RDATE;TZID=Europe/Berlin:20260304T150000",
      "SUMMARY:Weekly",
    ],
    ["UID:series", "RECURRENCE-ID;TZID=Europe/Berlin:20260316T090000", "DTSTART;TZID=Europe/Berlin:20260317T110000", "DTEND;TZID=Europe/Berlin:20260317T120000", "SUMMARY:Weekly (moved)"],
    ["UID:series", "RECURRENCE-ID:20260323T080000Z", "DTSTART;TZID=Europe/Berlin:20260323T090000", "DTEND;TZID=Europe/Berlin:20260323T100000", "STATUS:CANCELLED"],
  );
  const series = only(text);

  it("drops the EXDATE'd and cancelled occurrences, moves the overridden one, adds the RDATE and stops at UNTIL (inclusive, in UTC)", () => {
    const { occurrences } = expandSeries(series, { fromMs: Date.parse("2026-03-01T00:00:00Z"), toMs: Date.parse("2026-05-01T00:00:00Z"), zone: "Europe/Berlin" });
    expect(occurrences.map((o) => [isoInZone(o.startMs, "Europe/Berlin"), o.details.title, o.overridden])).toEqual([
      ["2026-03-02T09:00:00+01:00", "Weekly", false],
      ["2026-03-04T15:00:00+01:00", "Weekly", false],
      ["2026-03-17T11:00:00+01:00", "Weekly (moved)", true],
      ["2026-03-30T09:00:00+02:00", "Weekly", false],
    ]);
    expect(occurrences.every((o) => o.repeats)).toBe(true);
  });

  it("shows a moved occurrence in the window it moved to, not the one it left", () => {
    const left = expandSeries(series, { fromMs: Date.parse("2026-03-16T00:00:00Z"), toMs: Date.parse("2026-03-17T00:00:00Z"), zone: "Europe/Berlin" });
    expect(left.occurrences).toEqual([]);
    const arrived = expandSeries(series, { fromMs: Date.parse("2026-03-17T00:00:00Z"), toMs: Date.parse("2026-03-18T00:00:00Z"), zone: "Europe/Berlin" });
    expect(arrived.occurrences.map((o) => o.details.title)).toEqual(["Weekly (moved)"]);
  });

  it("stops a COUNT rule after COUNT occurrences and includes an event that started before the window but overlaps it", () => {
    const counted = only(ics(["UID:c", "DTSTART:20260101T230000Z", "DTEND:20260102T010000Z", "RRULE:FREQ=DAILY;COUNT=3"]));
    expect(expandSeries(counted, { fromMs: 0, toMs: Date.parse("2027-01-01T00:00:00Z"), zone: "UTC" }).occurrences).toHaveLength(3);
    const overlapping = expandSeries(counted, { fromMs: Date.parse("2026-01-03T00:30:00Z"), toMs: Date.parse("2026-01-03T02:00:00Z"), zone: "UTC" });
    expect(overlapping.occurrences.map((o) => new Date(o.startMs).toISOString())).toEqual(["2026-01-02T23:00:00.000Z"]);
  });

  it("lists a floating time in the reader's zone", () => {
    const floating = only(ics(["UID:f", "DTSTART:20260601T080000", "DTEND:20260601T090000"]));
    expect(localStarts(floating, "2026-05-01T00:00:00Z", "2026-07-01T00:00:00Z", "Asia/Tokyo")).toEqual(["2026-06-01T08:00:00+09:00"]);
    expect(localStarts(floating, "2026-05-01T00:00:00Z", "2026-07-01T00:00:00Z", "America/Los_Angeles")).toEqual(["2026-06-01T08:00:00-07:00"]);
  });
});

describe("bounded expansion", () => {
  it("bounds an unbounded rule by the window, even one that started decades ago", () => {
    const old = only(ics(["UID:old", "DTSTART;TZID=Europe/Berlin:19900105T070000", "DURATION:PT10M", "RRULE:FREQ=MINUTELY;INTERVAL=30"]));
    const { occurrences, truncated } = expandSeries(old, { fromMs: Date.parse("2026-06-01T00:00:00Z"), toMs: Date.parse("2026-06-02T00:00:00Z"), zone: "Europe/Berlin" });
    expect(truncated).toBe(false);
    expect(occurrences).toHaveLength(48);
    expect(isoInZone(occurrences[0]!.startMs, "Europe/Berlin")).toBe("2026-06-01T02:00:00+02:00");
    expect(seriesBounds(old).endMs).toBeNull();
  });

  it("expands a 100,000-occurrence rule only as far as the window, and caps a dense one", () => {
    const huge = only(ics(["UID:huge", "DTSTART:20200101T000000Z", "DURATION:PT1M", "RRULE:FREQ=MINUTELY;COUNT=100000"]));
    const late = expandSeries(huge, { fromMs: Date.parse("2020-02-01T00:00:00Z"), toMs: Date.parse("2020-02-01T01:00:00Z"), zone: "UTC" });
    expect(late.occurrences).toHaveLength(60);
    expect(late.truncated).toBe(false);
    const after = expandSeries(huge, { fromMs: Date.parse("2021-01-01T00:00:00Z"), toMs: Date.parse("2021-02-01T00:00:00Z"), zone: "UTC" });
    expect(after.occurrences).toHaveLength(0);
    const month = expandSeries(huge, { fromMs: Date.parse("2020-01-01T00:00:00Z"), toMs: Date.parse("2020-02-01T00:00:00Z"), zone: "UTC", maxOccurrences: 500 });
    expect(month.occurrences).toHaveLength(500);
    expect(month.truncated).toBe(true);
    // The last occurrence is 99,999 minutes after the first (about 69 days).
    expect(seriesBounds(huge).endMs).toBe(Date.parse("2020-01-01T00:00:00Z") + 100_000 * 60_000 + 14 * 3_600_000);
  });

  it("refuses, when reading it, a rule that never matches or matches too rarely for its frequency (ical.js would search forever)", () => {
    const parsed = parseICalendar(
      ics(
        ["UID:impossible", "DTSTART:20200101T090000Z", "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "SUMMARY:Never"],
        ["UID:sparse", "DTSTART:20200101T000000Z", "RRULE:FREQ=SECONDLY;BYMONTH=12;COUNT=900000"],
        ["UID:fine", "DTSTART:20200101T090000Z", "RRULE:FREQ=DAILY"],
      ),
    );
    expect(parsed.series.map((s) => s.uid)).toEqual(["fine"]);
    expect(parsed.errors.map((e) => e.item)).toEqual(['event "Never" (impossible)', "event sparse"]);
    expect(parsed.errors[0]!.message).toMatch(/finds no next date/);
  });

  it("stops a dense rule at the step limit and says it was cut", () => {
    const dense = only(ics(["UID:dense", "DTSTART:20200101T000000Z", "RRULE:FREQ=SECONDLY"]));
    const result = expandSeries(dense, { fromMs: Date.parse("2020-12-01T00:00:00Z"), toMs: Date.parse("2020-12-02T00:00:00Z"), zone: "UTC" });
    expect(result.truncated).toBe(true);
    expect(result.occurrences).toHaveLength(1_000);
    expect(new Date(result.occurrences[0]!.startMs).toISOString()).toBe("2020-12-01T00:00:00.000Z");
  });
});
