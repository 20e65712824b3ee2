import { describe, expect, it } from "vitest";
import { calendarFilterSchema, filterWords, matchesChange } from "../../../connectors/calendar/watch-filter.js";

const change = { kind: "added" as const, calendarName: "Club Fixtures", sourceKind: "ics" as const, title: "Match vs Köln (away)" };

describe("calendar change filters", () => {
  it("matches every given field, ignoring case and accents", () => {
    expect(matchesChange({}, change)).toBe(true);
    expect(matchesChange({ kinds: ["added"], calendars: ["club fixtures"], titleContains: ["koln", "AWAY"], source: "feed" }, change)).toBe(true);
    expect(matchesChange({ kinds: ["moved", "cancelled"] }, change)).toBe(false);
    expect(matchesChange({ calendars: ["Work"] }, change)).toBe(false);
    expect(matchesChange({ titleContains: ["home"] }, change)).toBe(false);
    expect(matchesChange({ source: "own" }, change)).toBe(false);
  });

  it("refuses unknown fields and says the filter in words", () => {
    expect(calendarFilterSchema.safeParse({ anything: true }).success).toBe(false);
    expect(filterWords({ kinds: ["added"], calendars: ["Club Fixtures"], source: "feed" })).toBe("an event is added in “Club Fixtures” in a followed feed");
  });
});
