import { describe, expect, it } from "vitest";
import { applyRules, dailyBudget, ruleOrder, stricter, type RuleInput } from "../../../core/notify/filter.js";
import type { NoveltyVerdict } from "../../../core/notify/novelty.js";

/** Each rule of the filter, on both sides of its condition, and the order between them. */

const novel: NoveltyVerdict = { novel: true, reason: "new content" };
const stale: NoveltyVerdict = { novel: false, kind: "duplicate", reason: "near-duplicate" };
// 2026-05-12 in Berlin (UTC+2): 12:00 local, and 01:00 local inside quiet hours 22:00–07:00.
const noon = new Date("2026-05-12T10:00:00Z");
const night = new Date("2026-05-12T23:00:00Z");
const quiet = { from: "22:00", to: "07:00" };

type Over = { candidate?: Partial<RuleInput["candidate"]>; person?: Partial<RuleInput["person"]>; now?: Date; novelty?: NoveltyVerdict; sentToday?: number };
const run = (over: Over = {}) =>
  applyRules({
    candidate: { origin: "checkin", askedFor: false, urgency: "normal", needsAction: false, deadline: null, ...over.candidate },
    person: { proactivity: "normal", quietHours: quiet, timeZone: "Europe/Berlin", ...over.person },
    now: over.now ?? noon,
    novelty: over.novelty ?? novel,
    sentToday: over.sentToday ?? 0,
  });

describe("notification rules, first match decides", () => {
  it("lists the rules in the documented order", () => {
    expect(ruleOrder).toEqual(["no-new-content", "critical", "asked-for", "needs-person", "proactivity-off", "high-urgency", "hold", "send"]);
  });

  it("1 drops what has no new content, whatever the urgency or setting", () => {
    for (const candidate of [{ urgency: "critical" as const }, { askedFor: true }, { origin: "approval" as const, needsAction: true }]) {
      const v = run({ candidate, novelty: stale, person: { proactivity: "high", quietHours: null } });
      expect(v).toMatchObject({ decision: "drop", rule: "no-new-content", reasons: ["near-duplicate"] });
    }
    expect(run().rule).not.toBe("no-new-content");
  });

  it("2 sends critical messages with proactivity off, in quiet hours and over budget", () => {
    expect(run({ candidate: { urgency: "critical" }, person: { proactivity: "off" }, now: night, sentToday: 99 })).toMatchObject({ decision: "send", rule: "critical" });
    expect(run({ candidate: { urgency: "high" }, person: { proactivity: "off" }, now: night, sentToday: 99 }).decision).not.toBe("send");
  });

  it("3 sends a reminder the person asked for at its time (quiet hours, off, over budget)", () => {
    expect(run({ candidate: { origin: "reminder", askedFor: true }, person: { proactivity: "off" }, now: night, sentToday: 99 })).toMatchObject({ decision: "send", rule: "asked-for" });
    // The same reminder without the person's say-so (demoted) is an ordinary message: held at night.
    expect(run({ candidate: { origin: "reminder", askedFor: false }, now: night })).toMatchObject({ decision: "hold", rule: "hold" });
  });

  it("4 sends questions, approvals and actions due within 24 h; in quiet hours holds unless urgent or due before they end", () => {
    for (const origin of ["question", "approval"] as const) {
      expect(run({ candidate: { origin, needsAction: true }, person: { proactivity: "off" }, sentToday: 50 })).toMatchObject({ decision: "send", rule: "needs-person" });
      expect(run({ candidate: { origin, needsAction: true }, now: night })).toMatchObject({ decision: "hold", rule: "needs-person" });
      expect(run({ candidate: { origin, needsAction: true, urgency: "high" }, now: night })).toMatchObject({ decision: "send", rule: "needs-person" });
    }
    const soon = new Date(noon.getTime() + 6 * 3_600_000);
    const later = new Date(noon.getTime() + 30 * 3_600_000);
    expect(run({ candidate: { origin: "monitor", needsAction: true, deadline: soon }, person: { proactivity: "low" }, sentToday: 9 })).toMatchObject({ decision: "send", rule: "needs-person" });
    expect(run({ candidate: { origin: "monitor", needsAction: true, deadline: later }, person: { proactivity: "low" } }).rule).not.toBe("needs-person");
    expect(run({ candidate: { origin: "monitor", needsAction: false, deadline: soon } }).rule).not.toBe("needs-person");
    // At 01:00 local quiet hours end at 07:00 local (05:00Z): a 04:30Z deadline goes now, a 06:00Z one waits.
    expect(run({ candidate: { origin: "monitor", needsAction: true, deadline: new Date("2026-05-13T04:30:00Z") }, now: night })).toMatchObject({ decision: "send", rule: "needs-person" });
    expect(run({ candidate: { origin: "monitor", needsAction: true, deadline: new Date("2026-05-13T05:00:00Z") }, now: night }).decision).toBe("send");
    expect(run({ candidate: { origin: "monitor", needsAction: true, deadline: new Date("2026-05-13T06:00:00Z") }, now: night })).toMatchObject({ decision: "hold", rule: "needs-person" });
  });

  it("5 with proactivity off drops informative messages and holds low-urgency ones that need action", () => {
    expect(run({ person: { proactivity: "off" } })).toMatchObject({ decision: "drop", rule: "proactivity-off" });
    expect(run({ candidate: { urgency: "high" }, person: { proactivity: "off" } })).toMatchObject({ decision: "drop", rule: "proactivity-off" });
    expect(run({ candidate: { needsAction: true, urgency: "low" }, person: { proactivity: "off" } })).toMatchObject({ decision: "hold", rule: "proactivity-off" });
    expect(run({ candidate: { needsAction: true, urgency: "high" }, person: { proactivity: "off" } })).toMatchObject({ decision: "send", rule: "high-urgency" });
    expect(run({ candidate: { needsAction: true }, person: { proactivity: "off" } })).toMatchObject({ decision: "hold", rule: "hold" });
    expect(run({ person: { proactivity: "normal" } }).rule).not.toBe("proactivity-off");
  });

  it("6 sends high urgency, even in quiet hours and over budget", () => {
    expect(run({ candidate: { urgency: "high" }, now: night, sentToday: 50, person: { proactivity: "low" } })).toMatchObject({ decision: "send", rule: "high-urgency" });
    expect(run({ candidate: { urgency: "normal" }, now: night }).rule).not.toBe("high-urgency");
  });

  it("7 holds in quiet hours, with proactivity low, over the daily budget, and digest items", () => {
    expect(run({ now: night })).toMatchObject({ decision: "hold", rule: "hold", reasons: ["quiet hours"] });
    expect(run({ person: { proactivity: "low" } })).toMatchObject({ decision: "hold", rule: "hold" });
    expect(run({ candidate: { origin: "digest-item" } })).toMatchObject({ decision: "hold", rule: "hold" });
    for (const level of ["low", "normal", "high"] as const) {
      if (level === "low") continue;
      expect(run({ person: { proactivity: level }, sentToday: dailyBudget[level] })).toMatchObject({ decision: "hold", rule: "hold" });
      expect(run({ person: { proactivity: level }, sentToday: dailyBudget[level] - 1 })).toMatchObject({ decision: "send", rule: "send" });
    }
    expect(dailyBudget).toEqual({ off: 0, low: 2, normal: 6, high: 12 });
  });

  it("8 sends the rest, and says why for every decision", () => {
    expect(run()).toMatchObject({ decision: "send", rule: "send" });
    for (const v of [run(), run({ now: night }), run({ novelty: stale }), run({ person: { proactivity: "off" } })]) expect(v.reasons.length).toBeGreaterThan(0);
  });

  it("a judge can only make a decision stricter", () => {
    expect(stricter("hold", "send")).toBe("hold");
    expect(stricter("send", "hold")).toBe("hold");
    expect(stricter("hold", "drop")).toBe("drop");
    expect(stricter("drop", "send")).toBe("drop");
  });
});
