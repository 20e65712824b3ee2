import { describe, expect, it } from "vitest";
import { compareMonitor, minimumMove, sameSubject } from "../../../core/notify/monitor-state.js";
import { assessNovelty, type NoveltyInput } from "../../../core/notify/novelty.js";
import { carriesNoNews, newInformation } from "../../../core/notify/shape.js";

/**
 * The filter generalises (issue 18 item 2): cases written from the description — no-news by
 * its shape, numbers relative to the person's target, structured state over text, urgency never
 * overriding the duplicate rule — in wording none of the labelled sets use.
 */

const now = new Date("2026-07-01T12:00:00Z");
const ago = (m: number) => new Date(now.getTime() - m * 60_000);
type Over = Partial<Omit<NoveltyInput, "candidate">> & { candidate?: Partial<NoveltyInput["candidate"]> };
const assess = (text: string, over: Over = {}) =>
  assessNovelty({
    candidate: { text, origin: "checkin", askedFor: false, needsAction: false, urgency: "normal", occurrenceKey: null, monitor: null, taskId: null, ...over.candidate },
    now,
    said: over.said ?? [],
    heard: over.heard ?? [],
    ...(over.history && { history: over.history }),
    occurrenceTaken: false,
    monitorBaseline: over.monitorBaseline ?? null,
  });
const said = (m: number, text: string) => ({ at: ago(m), text });

describe("no news recognised by its shape", () => {
  it("drops heartbeats however they are worded, in several languages", () => {
    for (const t of [
      "Afternoon! Went over your alerts, bills and deliveries — everything is ticking along just fine.",
      "Routine pulse: every watcher reports green, nothing for you right now.",
      "I had a look at your mailbox and your calendar; it's all calm.",
      "Nichts Besonderes heute, alles läuft ruhig.",
      "Todo sigue en orden, nada que hacer por tu parte.",
      "Tout est calme aujourd'hui, rien à signaler.",
    ]) expect(assess(t, { candidate: { origin: "heartbeat" } }), t).toMatchObject({ novel: false, kind: "empty" });
  });

  it("drops motivational check-ins without information, but not a check-in that informs", () => {
    for (const t of ["Keep at it — consistency is everything!", "You're doing great, one step at a time. 🌟", "Sigue así, ¡vas muy bien!"]) expect(assess(t, { candidate: { goal: "run 5 km" } }), t).toMatchObject({ novel: false });
    expect(assess("This week's plan: Tuesday 3 km, Thursday 4 km, Sunday 5 km.", { candidate: { goal: "run 5 km" } }).novel).toBe(true);
    expect(assess("The running club meets at the park gate on Saturday at 8:00.", { candidate: { goal: "run 5 km" } }).novel).toBe(true);
  });

  it("keeps news that has no number or name: any entity, a failure, something the person asked about", () => {
    for (const t of ["Your credit card payment didn't go through.", "Grandma is in hospital; your sister is with her.", "The babysitter can't make it tonight.", "Your backup didn't run last night.", "It's going to snow this evening."]) expect(assess(t).novel, t).toBe(true);
    // The person's own words are not news they were given: "tell me when my visa is approved".
    expect(assess("Your visa was approved!", { heard: [said(60, "tell me when my visa is approved")], candidate: { goal: "get my visa approved" } }).novel).toBe(true);
    expect(assess("The plumber confirmed Thursday.", { said: [said(90, "The plumber hasn't confirmed Thursday yet.")] }).novel).toBe(true);
  });

  it("keeps plain news in any wording: the rule fails toward sending (an unknown word is an entity)", () => {
    for (const t of [
      "It's going to rain this afternoon — take an umbrella.",
      "Your mum called while you were in the meeting.",
      "The bakery you like has reopened after the renovation.",
      "Your landlord wants to inspect the flat next week.",
      "Your package was left at the front door.",
      "Traffic is heavy on your usual route home; leave early.",
      "Your bank flagged a suspicious login.",
      "The plumber can come earlier than planned.",
      "Your electricity provider is raising prices next month.",
      "Your phone's storage is almost full.",
      "Your train leaves from a different platform today.",
      "The museum is free this weekend.",
      "La farmacia dice que tu receta está lista.",
      "Die Schule fällt morgen wegen des Sturms aus.",
      "I looked at the weather and it will storm tonight.",
      "I went over your calendar and your dentist moved you to Thursday.",
      "I scanned the news and a storm is heading to the coast.",
      "Checked your inbox — the landlord wrote back.",
    ]) expect(assess(t, { candidate: { origin: "monitor" } }).novel, t).toBe(true);
  });

  it("drops a status reworded — the same parcel, the same visa state — and keeps a new one", () => {
    const parcel = [said(120, "GLS parcel 88123456 is at the Hamburg depot.")];
    expect(assess("Update: your GLS package is still sitting at the depot in Hamburg.", { said: parcel, candidate: { origin: "monitor" } }).novel).toBe(false);
    expect(assess("GLS parcel 88123456 left Hamburg and is out for delivery.", { said: parcel, candidate: { origin: "monitor" } }).novel).toBe(true);
    // A report that says the state continues is weighed against the last week, not only 24 h.
    const visa = { at: new Date(now.getTime() - 3 * 24 * 3_600_000), text: "Residence permit RP-4471: still being processed." };
    expect(assess("Still no decision on RP-4471 — it is being processed.", { history: [visa], candidate: { origin: "monitor" } }).novel).toBe(false);
    expect(assess("RP-4471 was granted; pick it up at the office.", { history: [visa], candidate: { origin: "monitor" } }).novel).toBe(true);
  });

  it("says what is new, and nothing for a bare count of checks", () => {
    expect(carriesNoNews("All 9 checks ran fine.", [])).toBe(true);
    expect(carriesNoNews("3 new invoices arrived.", [])).toBe(false);
    expect(newInformation("Your tax refund of €412 arrived.", ["Your tax return was filed."]).specifics).toContain("num:412");
  });
});

describe("numbers relative to the person's threshold or target", () => {
  it("a monitor's move far from its target is trivial; crossing it or a stated threshold counts", () => {
    const state = (v: number, extra = {}) => ({ subject: "rent listing", checked: "site", values: { price: v }, ...extra });
    expect(compareMonitor(state(2_150, { targets: { price: 1_800 } }), state(2_140, { targets: { price: 1_800 } })).change).toBe("trivial");
    expect(compareMonitor(state(1_820, { targets: { price: 1_800 } }), state(1_790, { targets: { price: 1_800 } })).change).toBe("significant");
    expect(compareMonitor(state(1_900, { targets: { price: 1_800 } }), state(1_860, { targets: { price: 1_800 } })).change).toBe("significant");
    expect(compareMonitor(state(2_150, { thresholds: { price: 100 } }), state(2_100, { thresholds: { price: 100 } })).change).toBe("trivial");
    expect(minimumMove(412, undefined, [330])).toBeCloseTo(20.5);
    expect(minimumMove(412, 5, [330])).toBe(5);
  });

  it("a text's small move, its stated delta or distance to the target are not news; reaching the target is", () => {
    const before = [said(180, "Round trip to Oslo: €418.00 (you want it under €330).")];
    expect(assess("Oslo round trip down €0.50 to €417.50, still €87.50 above your €330 target.", { said: before, candidate: { origin: "monitor" } }).novel).toBe(false);
    expect(assess("Oslo round trip is €417.50 now.", { said: before, candidate: { origin: "monitor" } }).novel).toBe(false);
    expect(assess("Oslo round trip fell to €329.00 — below your €330 target.", { said: before, candidate: { origin: "monitor" } }).novel).toBe(true);
  });
});

describe("structured state and urgency", () => {
  it("matches a monitor's subject worded differently", () => {
    expect(sameSubject("DHL parcel JD0146000061", "parcel jd0146000061")).toBe(true);
    expect(sameSubject("Your visa application", "visa application")).toBe(true);
    expect(sameSubject("flight LH1172", "flight LH1174")).toBe(false);
  });

  it("never lets urgency override the duplicate rule, but keeps an escalation", () => {
    const alert = [said(40, "Freezer in the garage is at -4 °C (alarm level -12 °C).")];
    expect(assess("URGENT: the garage freezer is at -4 °C!", { said: alert, candidate: { origin: "monitor", urgency: "high" } }).novel).toBe(false);
    expect(assess("Heads up again: garage freezer -4 °C, alarm level -12 °C.", { said: alert, candidate: { origin: "monitor", urgency: "critical" } }).novel).toBe(false);
    expect(assess("The garage freezer is at +3 °C now and rising.", { said: alert, candidate: { origin: "monitor", urgency: "high" } }).novel).toBe(true);
    expect(assess("The kitchen freezer is at -4 °C too.", { said: alert, candidate: { origin: "monitor", urgency: "high" } }).novel).toBe(true);
    const state = { subject: "freezer", checked: "sensor", values: { celsius: -4 } };
    expect(assess("ALARM: freezer!", { candidate: { origin: "monitor", urgency: "critical", monitor: state }, monitorBaseline: state })).toMatchObject({ novel: false, kind: "unchanged" });
  });
});
