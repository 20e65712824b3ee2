import { describe, expect, it } from "vitest";
import { asId } from "../../../core/ids.js";
import { compareMonitor } from "../../../core/notify/monitor-state.js";
import { assessNovelty, type NoveltyInput } from "../../../core/notify/novelty.js";
import { withoutSilenceTokens } from "../../../core/notify/silence.js";
import { factsOf, isChatter, isNoNews, statusesOf } from "../../../core/notify/text.js";

const now = new Date("2026-05-12T12:00:00Z");
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);
type Over = Partial<Omit<NoveltyInput, "candidate">> & { candidate?: Partial<NoveltyInput["candidate"]> };
const assess = (text: string, over: Over = {}) =>
  assessNovelty({
    candidate: { text, origin: "monitor", askedFor: false, needsAction: false, urgency: "normal", occurrenceKey: null, monitor: null, taskId: null, ...over.candidate },
    now,
    said: over.said ?? [],
    heard: over.heard ?? [],
    occurrenceTaken: over.occurrenceTaken ?? false,
    monitorBaseline: over.monitorBaseline ?? null,
  });
const said = (m: number, text: string, extra: { taskId?: string; occurrenceKey?: string } = {}) => ({
  at: minutesAgo(m),
  text,
  ...(extra.taskId && { taskId: asId("task", extra.taskId) }),
  ...(extra.occurrenceKey && { occurrenceKey: extra.occurrenceKey }),
});

describe("deterministic novelty (rule 1)", () => {
  it("treats empty text and no-news markers in any decoration as nothing new (P2)", () => {
    for (const t of ["NOTHING_TO_REPORT", "  **Nothing to report.** ", "`NO_REPLY`", "_no news_!", "", "  \n ", "HEARTBEAT_OK", "Sin novedades."]) expect(isNoNews(t), t).toBe(true);
    expect(isNoNews("Nothing to report on the flight, but the hotel price fell to €60.")).toBe(false);
    expect(assess("**NOTHING_TO_REPORT**")).toMatchObject({ novel: false, kind: "empty" });
  });

  it("drops small talk in several languages, but not news wrapped in pleasantries (P1)", () => {
    for (const t of ["Just checking in!", "Hi there! Hope you're doing well 😊", "Just checking in — how's your week going?", "¿Qué tal tu semana?", "Alle Systeme laufen normal.", "All 4 services healthy."]) expect(isChatter(t), t).toBe(true);
    for (const t of ["Hi! Your parcel arrived.", "Good morning! The 08:12 train is cancelled.", "Stretch!"]) expect(isChatter(t), t).toBe(false);
    expect(assess("Just checking in — how's your week going?")).toMatchObject({ novel: false, kind: "chatter" });
    // A reminder's words are what the person asked to hear.
    expect(assess("Stretch!", { candidate: { origin: "reminder", askedFor: true } }).novel).toBe(true);
  });

  it("drops an occurrence already delivered, and only then", () => {
    expect(assess("Reminder: run", { candidate: { occurrenceKey: "t@1" }, occurrenceTaken: true })).toMatchObject({ novel: false, kind: "occurrence" });
    expect(assess("Reminder: run", { candidate: { occurrenceKey: "t@1" }, occurrenceTaken: false }).novel).toBe(true);
  });

  it("drops reworded and translated duplicates of the last 24 h, but not a change of status or facts", () => {
    const earlier = "Flight TP575 at 06:50 to Lisbon is delayed.";
    expect(assess("TP575 (06:50, Lisbon) has been delayed.", { said: [said(30, earlier)] })).toMatchObject({ novel: false, kind: "duplicate" });
    expect(assess("El vuelo TP575 de las 06:50 a Lisboa está retrasado.", { said: [said(30, earlier)] })).toMatchObject({ novel: false, kind: "duplicate" });
    expect(assess("Der Flug TP575 um 06:50 nach Lissabon ist annulliert.", { said: [said(30, earlier)] }).novel).toBe(true);
    expect(assess("Flight TP575 is now delayed to 09:10.", { said: [said(30, earlier)] }).novel).toBe(true);
    expect(assess("TP575 (06:50, Lisbon) has been delayed.", { said: [said(24 * 60, earlier)] }).novel).toBe(true);
    expect(statusesOf("annulliert")).toEqual(new Set(["cancelled"]));
    expect(factsOf("ICE 1043 um 14h32, Gleis 7, 12.05.2026, €1.234,50").map((f) => f.value)).toEqual(["12/5", "14:32", "1043", "7", "1234.5"]);
  });

  it("drops a trivial numeric move of a status already reported, keeps a real one and a crossed target", () => {
    const earlier = "ETH is at $412.00 — $82.00 above your $330 buy target.";
    expect(assess("ETH is at $411.50 — $81.50 above your $330 buy target.", { said: [said(60, earlier)] })).toMatchObject({ novel: false, kind: "trivial" });
    expect(assess("ETH is at $338.10 — $8.10 above your $330 buy target.", { said: [said(60, earlier)] }).novel).toBe(true);
    expect(assess("Now $331.50, still above your $330 target.", { said: [said(60, "ETH at $333.00, above your $330 target.")] })).toMatchObject({ novel: false, kind: "trivial" });
    expect(assess("Now $345.00, above your $330 target.", { said: [said(60, "ETH at $333.00, above your $330 target.")] }).novel).toBe(true);
    expect(assess("ETH at $329.50, below your $330 target.", { said: [said(60, "ETH at $330.50, above your $330 target.")] }).novel).toBe(true);
  });

  it("decides unchanged and trivial monitor state by code", () => {
    const base = { subject: "fare", checked: "TAP", values: { price: 189, airline: "TAP" }, targets: { price: 150 } };
    expect(compareMonitor(base, base).change).toBe("unchanged");
    expect(compareMonitor(base, { ...base, values: { price: 188.5, airline: "TAP" } }).change).toBe("trivial");
    expect(compareMonitor(base, { ...base, values: { price: 170, airline: "TAP" } }).change).toBe("significant");
    expect(compareMonitor({ ...base, values: { price: 151, airline: "TAP" } }, { ...base, values: { price: 150, airline: "TAP" } }).change).toBe("significant");
    expect(compareMonitor(base, { ...base, values: { price: 189, airline: "easyJet" } }).change).toBe("significant");
    expect(compareMonitor(base, { ...base, values: { price: 185, airline: "TAP" }, thresholds: { price: 10 } }).change).toBe("trivial");
    expect(compareMonitor(base, { ...base, values: { price: 189 } }).change).toBe("significant");
    const monitor = { ...base, values: { price: 188.5, airline: "TAP" } };
    expect(assess("Fare now €188.50", { candidate: { monitor }, monitorBaseline: base })).toMatchObject({ novel: false, kind: "trivial" });
    expect(assess("Fare now €150", { candidate: { monitor: { ...base, values: { price: 150, airline: "TAP" } } }, monitorBaseline: base }).novel).toBe(true);
    expect(assess("Fare €189", { candidate: { monitor: base } }).novel).toBe(true);
  });

  it("drops restatements of what the person said, but not news about it", () => {
    const heard = [{ at: minutesAgo(90), text: "I'm flying to Lisbon on Friday at 06:50" }];
    expect(assess("Noted — you're flying to Lisbon on Friday at 06:50.", { heard })).toMatchObject({ novel: false, kind: "restatement" });
    expect(assess("As you mentioned, you prefer aisle seats.")).toMatchObject({ novel: false, kind: "restatement" });
    expect(assess("Your Friday 06:50 Lisbon flight now leaves from Terminal 2.", { heard }).novel).toBe(true);
  });

  it("deduplicates an asked-for reminder by its occurrence, never by its words (issue 18, E5)", () => {
    const candidate = { origin: "reminder" as const, askedFor: true, taskId: asId("task", "task_w"), occurrenceKey: "task_w@11:00" };
    // The confirmation that scheduled it restates it, seconds earlier.
    expect(assess("Reminder: pay invoice INV-2231.", { candidate, said: [said(0.3, "Scheduled: pay invoice INV-2231 at 19:00.")] }).novel).toBe(true);
    expect(assess("Time to stretch!", { candidate, said: [said(0.5, "Got it: time to stretch.")] }).novel).toBe(true);
    // The same words said a minute ago, by anything that is not this occurrence, do not count.
    expect(assess("Reminder: drink water", { candidate, said: [said(1, "Reminder: drink water")] }).novel).toBe(true);
    expect(assess("Reminder: drink water", { candidate, said: [said(30, "Reminder: drink water", { taskId: "task_w", occurrenceKey: "task_w@10:30" })] }).novel).toBe(true);
    // Nor does an unchanged monitor state: the person asked to be told.
    const state = { subject: "BTC", checked: "price", values: { usd: 64_000 } };
    expect(assess("BTC is at $64,000.", { candidate: { ...candidate, monitor: state }, monitorBaseline: state }).novel).toBe(true);
    // The same occurrence twice is the one duplicate.
    expect(assess("Reminder: drink water", { candidate, occurrenceTaken: true })).toMatchObject({ novel: false, kind: "occurrence" });
    // A reminder whose "always" did not count (not the person's words, or over the cap) is an ordinary update.
    expect(assess("Reminder: drink water", { candidate: { ...candidate, askedFor: false }, said: [said(1, "Reminder: drink water")] })).toMatchObject({ novel: false, kind: "duplicate" });
  });

  it("never lets a silence token through, in any bracket or casing (issue 18)", () => {
    for (const t of ["[SILENT]", "[silent]", "<Silent>", "{NO_REPLY}", "(silence)", "**[[SILENT]]**", "`[ silent ]`", "STAY_SILENT", "SILENT.", "«SILENT»", "【SILENT】"]) {
      expect(isNoNews(t), t).toBe(true);
      expect(assess(t, { candidate: { urgency: "high" } }), t).toMatchObject({ novel: false, kind: "empty" });
      expect(assess(t, { candidate: { origin: "reminder", askedFor: true } }), t).toMatchObject({ novel: false, kind: "empty" });
    }
    for (const t of ["Your phone was on silent: you missed two calls from the school.", "Stretch!", "STRETCH", "[URGENT] Water under the sink"]) expect(isNoNews(t), t).toBe(false);
    expect(withoutSilenceTokens("[SILENT] Nothing new today.")).toBe("Nothing new today.");
    expect(withoutSilenceTokens("Reminder: stretch <no_reply>")).toBe("Reminder: stretch");
    expect(withoutSilenceTokens("[URGENT] Water under the sink")).toBe("[URGENT] Water under the sink");
  });
});

describe("deterministic novelty beyond the project's own wording (blind set, issue 12)", () => {
  it("drops a translation without numbers or codes, but not a message about a different subject", () => {
    expect(assess("Die Stromrechnung ist heute fällig.", { said: [said(60, "Your electricity bill is due today.")] })).toMatchObject({ novel: false, kind: "duplicate" });
    expect(assess("Dein Vermieter hat auf deine E-Mail wegen der Kaution geantwortet.", { said: [said(90, "Your landlord replied to your email about the deposit.")] }).novel).toBe(false);
    expect(assess("Your water bill is due today.", { said: [said(60, "Your electricity bill is due today.")] }).novel).toBe(true);
    expect(assess("The landlord replied again about the deposit.", { said: [said(60, "Your landlord replied to your email about the deposit.")] }).novel).toBe(true);
  });

  it("drops a one-subject translation with the same status, but not another status", () => {
    expect(assess("Ihr Paket wurde zugestellt.", { said: [said(30, "Your package has been delivered.")] }).novel).toBe(false);
    expect(assess("Ihr Paket wurde verschickt.", { said: [said(30, "Your package has been delivered.")] }).novel).toBe(true);
  });

  it("drops a French translation sharing only a number and names", () => {
    expect(assess("Votre colis Zalando a été livré à la Packstation 112.", { said: [said(120, "Your Zalando parcel was delivered to Packstation 112.")] }).novel).toBe(false);
    expect(assess("Votre colis Zalando est en cours de livraison vers la Packstation 112.", { said: [said(120, "Your Zalando parcel was delivered to Packstation 112.")] }).novel).toBe(true);
  });

  it("treats a reference number as an identity, never as a value that drifts", () => {
    expect(assess("Your Amazon order #4412 has been delivered.", { said: [said(60, "Your Amazon order #4413 has been delivered.")] }).novel).toBe(true);
    expect(assess("Estado del pedido #48213: En proceso", { said: [said(100, "Order #48213 status: Processing")] }).novel).toBe(false);
  });

  it("drops an incident reported again as ongoing, but not a different one", () => {
    const down = said(50, "Nubank app is down for many users (outage).");
    expect(assess("The Nubank app outage is ongoing.", { said: [down] })).toMatchObject({ novel: false, kind: "duplicate" });
    expect(assess("The Itaú app outage is ongoing.", { said: [down] }).novel).toBe(true);
    expect(assess("The Nubank app is working again.", { said: [down] }).novel).toBe(true);
  });

  it("drops the same outage found again with its duration, and keeps its recovery", () => {
    const down = said(30, "Uptime alert: example-shop.com is DOWN (HTTP 503).");
    expect(assess("example-shop.com has now been down for 45 minutes (HTTP 503).", { said: [down] })).toMatchObject({ novel: false });
    expect(assess("example-shop.com is back up after 1 h 10 min.", { said: [down] }).novel).toBe(true);
    expect(assess("blog.example.de has now been down for 45 minutes (HTTP 503).", { said: [down] }).novel).toBe(true);
  });

  it("drops a trivial move toward a target the new text names, with or without an earlier report", () => {
    expect(assess("AirPods Pro now $248.50 — your target is $230.", { said: [said(300, "AirPods Pro are $249.00 at Amazon.")] })).toMatchObject({ novel: false, kind: "trivial" });
    expect(assess("Price drop: Nintendo Switch OLED went from $349.99 to $349.49 — your target is $300.")).toMatchObject({ novel: false, kind: "trivial" });
    expect(assess("AirPods Pro now $228.50 — below your $230 target.", { said: [said(300, "AirPods Pro are $231.00 at Amazon.")] }).novel).toBe(true);
    // Not for something that needs the person to act.
    expect(assess("Your rent rose 0.5% from €950 to €954.75; confirm the new standing order.", { candidate: { needsAction: true } }).novel).toBe(true);
  });

  it("drops routine no-news sentences and acknowledgements, never a question or an action", () => {
    expect(assess("Heartbeat: all 4 monitors ran, nothing new.", { candidate: { origin: "heartbeat" } })).toMatchObject({ novel: false, kind: "empty" });
    expect(assess("Got it — you're vegetarian, I'll keep that in mind.")).toMatchObject({ novel: false, kind: "restatement" });
    expect(assess("No change in your visa status — should I ask the embassy?", { candidate: { origin: "question", needsAction: true } }).novel).toBe(true);
    expect(assess("No new emails from the school; sign the trip form today.", { candidate: { needsAction: true } }).novel).toBe(true);
  });
});
