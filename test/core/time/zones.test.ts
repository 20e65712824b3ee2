import { describe, expect, it } from "vitest";
import { resolveTimeZone } from "../../../core/time/zones.js";

describe("resolveTimeZone: what a person types → a canonical IANA zone", () => {
  it("accepts IANA names in any case and canonicalises them", () => {
    expect(resolveTimeZone("Europe/Berlin")).toBe("Europe/Berlin");
    expect(resolveTimeZone("  europe/berlin ")).toBe("Europe/Berlin");
    expect(resolveTimeZone("utc")).toBe("UTC");
    expect(resolveTimeZone("AMERICA/NEW_YORK")).toBe("America/New_York");
  });

  it("accepts a city alone when exactly one zone has it (spaces for underscores)", () => {
    expect(resolveTimeZone("berlin")).toBe("Europe/Berlin");
    expect(resolveTimeZone("Tokyo")).toBe("Asia/Tokyo");
    expect(resolveTimeZone("new york")).toBe("America/New_York");
    expect(resolveTimeZone("Buenos_Aires")).toMatch(/Buenos_Aires$/);
  });

  it("every zone the runtime knows resolves to itself, and by its city when that city is unique", () => {
    const zones = Intl.supportedValuesOf("timeZone");
    const cities = new Map<string, number>();
    for (const z of zones) cities.set(z.split("/").at(-1)!.toLowerCase(), (cities.get(z.split("/").at(-1)!.toLowerCase()) ?? 0) + 1);
    for (const zone of zones) {
      expect(resolveTimeZone(zone.toLowerCase())).toBe(new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone);
      const city = zone.split("/").at(-1)!;
      if (cities.get(city.toLowerCase()) === 1 && zone.includes("/")) expect(resolveTimeZone(city.replace(/_/g, " ").toUpperCase())).not.toBeNull();
    }
  });

  it("refuses what names no zone, or too many", () => {
    for (const bad of ["", "   ", "nowhere", "Berlin, Germany", "x".repeat(65), "Europe/"]) expect(resolveTimeZone(bad)).toBeNull();
  });
});
