import { describe, expect, it } from "vitest";
import { asId } from "../../../core/ids.js";
import { decide, inQuietHours, isChatter, isNoNews, similarity, type Candidate } from "../../../core/notify/filter.js";
import type { NotificationRecord, Person } from "../../../core/storage/types.js";

const person = (over: Partial<Person> = {}): Person => ({
  id: asId("person", "per_1"),
  displayName: "Ana",
  timeZone: "Europe/Berlin",
  locale: "en-US",
  proactivity: "normal",
  quietHours: null,
  personaName: null,
  personaStyle: null,
  digestTime: "18:00",
  paused: false,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});
// 2026-11-30 12:00 in Berlin (UTC+1).
const noon = new Date("2026-11-30T11:00:00Z");
const news = "The Lisbon fare dropped to €89 (was €140) on TAP, flight TP575.";
const c = (text: string, over: Partial<Candidate> = {}): Candidate => ({ text, askedFor: false, mustAct: false, ...over });
const sent = (n: number, at = noon): NotificationRecord[] =>
  Array.from({ length: n }, (_, i) => ({ id: asId("notification", `ntf_${i}`), personId: asId("person", "per_1"), taskId: null, text: `other ${i}`, decision: "send" as const, reasons: [], digestedAt: null, at }));
const run = (candidate: Candidate, over: { person?: Partial<Person>; now?: Date; recent?: NotificationRecord[]; said?: string[] } = {}) =>
  decide({ candidate, person: person(over.person), now: over.now ?? noon, recent: over.recent ?? [], recentlySaid: over.said ?? [] });

describe("notification filter rules (each on both sides)", () => {
  it("drops no-news markers in any decoration, and passes real text (P2)", () => {
    for (const t of ["NOTHING_TO_REPORT", "  **Nothing to report.** ", "`NO_REPLY`", "_no news_!", "", "  \n "]) expect(isNoNews(t)).toBe(true);
    expect(isNoNews("Nothing to report on the flight, but the hotel price fell to €60.")).toBe(false);
    expect(run(c("**NOTHING_TO_REPORT**")).decision).toBe("drop");
  });

  it("drops small talk, and passes a message with information (P1)", () => {
    for (const t of ["Just checking in!", "Hi there! Hope you're doing well 😊", "Just checking in — nothing new today. Have a great day!"]) expect(isChatter(t)).toBe(true);
    expect(isChatter(news)).toBe(false);
    expect(run(c("Just checking in! Hope you're having a great day")).decision).toBe("drop");
    expect(run(c(news)).decision).toBe("send");
  });

  it("drops near-duplicates of something recently said, and passes new information", () => {
    expect(similarity(news, `${news} `)).toBe(1);
    expect(run(c(news), { said: ["The Lisbon fare dropped to €89 (was €140) on TAP, flight TP575!"] }).decision).toBe("drop");
    expect(run(c(news), { said: ["Your parcel is at the front desk."] }).decision).toBe("send");
  });

  it("holds during quiet hours unless urgent", () => {
    const quiet = { quietHours: { from: "22:00", to: "07:00" } };
    const night = new Date("2026-11-30T23:30:00Z"); // 00:30 in Berlin
    expect(inQuietHours(person(quiet), night)).toBe(true);
    expect(inQuietHours(person(quiet), noon)).toBe(false);
    expect(run(c(news), { person: quiet, now: night }).decision).toBe("hold");
    expect(run(c(`${news} The fare expires tonight at 23:59.`), { person: quiet, now: night }).decision).toBe("send");
    expect(run(c(news), { person: quiet, now: noon }).decision).toBe("send");
  });

  it("holds when the daily budget is used, unless time-sensitive", () => {
    expect(run(c(news), { recent: sent(5) }).decision).toBe("hold");
    expect(run(c(news), { recent: sent(4) }).decision).toBe("send");
    expect(run(c(news), { recent: sent(5, new Date(noon.getTime() - 2 * 86_400_000)) }).decision).toBe("send");
    expect(run(c(`${news} Book within 2 hours.`), { recent: sent(5) }).decision).toBe("send");
  });

  it("follows the proactivity setting", () => {
    expect(run(c(news), { person: { proactivity: "off" } }).decision).toBe("hold");
    expect(run(c(news), { person: { proactivity: "low" } }).decision).toBe("hold");
    expect(run(c(`${news} Deadline today.`), { person: { proactivity: "low" } }).decision).toBe("send");
    expect(run(c(news), { person: { proactivity: "high" } }).decision).toBe("send");
  });

  it("always passes what the person must act on, except non-urgent ones in quiet hours", () => {
    const night = new Date("2026-11-30T23:30:00Z");
    const quiet = { quietHours: { from: "22:00", to: "07:00" } };
    expect(run(c("Should I book it?", { mustAct: true }), { person: { proactivity: "off" }, recent: sent(50) }).decision).toBe("send");
    expect(run(c("Should I book it?", { mustAct: true }), { person: quiet, now: night }).decision).toBe("hold");
    expect(run(c("Should I book it? The fare expires in 30 minutes.", { mustAct: true }), { person: quiet, now: night }).decision).toBe("send");
  });

  it("delivers wake-ups the person asked for, even small talk-like ones", () => {
    expect(run(c("Stretch!", { askedFor: true }), { person: { proactivity: "off" } }).decision).toBe("send");
    expect(run(c("Stretch!", { askedFor: false })).decision).toBe("drop");
  });

  it("says why, for every decision", () => {
    for (const v of [run(c(news)), run(c("hi!")), run(c(news), { recent: sent(9) })]) expect(v.reasons.length).toBeGreaterThan(0);
  });
});
