import { describe, expect, it } from "vitest";
import { mentionsLocalTime, zoneGuesses } from "../../../core/time/index.js";

const now = new Date("2026-12-02T08:00:00Z");

describe("mentionsLocalTime", () => {
  it("finds a clock time whose meaning depends on the zone, in several languages", () => {
    for (const text of ["remind me tomorrow at 9 to call mom", "every Monday at 8:30", "wake me at 7", "dinner at 19:00?", "lunch at noon", "erinnere mich morgen um 9 Uhr", "rappelle-moi demain à 9h", "recuérdame mañana a las 9"]) {
      expect(mentionsLocalTime(text, now), text).toBe(true);
    }
  });

  it("ignores a day alone, now, durations from now, numbers and plain talk", () => {
    for (const text of ["book the table for Friday", "what's on today?", "now?", "remind me in 20 minutes", "ping me in 2 hours", "I have 3 cats", "the first reply", "", "thanks!"]) {
      expect(mentionsLocalTime(text, now), text).toBe(false);
    }
  });
});

describe("zoneGuesses", () => {
  it("guesses from a region when the tag has one, else from the language, else from the locale", () => {
    expect(zoneGuesses("pt-br")).toEqual(["America/Sao_Paulo"]);
    expect(zoneGuesses("de")).toEqual(["Europe/Berlin", "Europe/Vienna", "Europe/Zurich"]);
    expect(zoneGuesses("en-GB")).toEqual(["Europe/London"]);
    expect(zoneGuesses(undefined, "en-US")).toEqual(["America/New_York", "America/Chicago", "America/Los_Angeles"]);
    expect(zoneGuesses("xx", "ja-JP")).toEqual(["Asia/Tokyo"]);
    expect(zoneGuesses(undefined)).toEqual([]);
  });

  it("names only zones the runtime knows", () => {
    const all = ["en", "de", "fr", "es", "pt", "it", "nl", "ru", "uk", "ja", "zh", "ar", "hi", "en-us", "en-au", "es-ar", "zh-tw"].flatMap((t) => zoneGuesses(t));
    for (const zone of all) expect(() => new Intl.DateTimeFormat("en", { timeZone: zone })).not.toThrow();
  });
});
