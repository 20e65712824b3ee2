import { describe, expect, it } from "vitest";
import { reportedChanges, reportsOnlyTrivialChange, targetsOf } from "../../../core/notify/change-text.js";
import { conceptsOf, differentSubjects } from "../../../core/notify/concepts.js";
import { impliedDeadline } from "../../../core/notify/deadline-text.js";
import { saysNothingNew } from "../../../core/notify/no-news.js";
import { analyse, hasRestatementMarker, isChatter } from "../../../core/notify/text.js";

/** The deterministic text signals behind rule 1 (nothing new) and rule 4 (a deadline stated in words). */

describe("saysNothingNew", () => {
  it("recognises routine reports that say nothing is new, in several languages", () => {
    for (const t of [
      "Heartbeat: all 4 monitors ran, nothing new.",
      "No new emails from the school since 08:00.",
      "Everything is quiet today — no new messages, no calendar changes.",
      "Unchanged: your credit score is 742.",
      "No change in your visa status.",
      "I looked through your inbox: nothing urgent.",
      "Status: all backups completed successfully, no action needed.",
      "Keine neuen Nachrichten von der Schule.",
      "Sin novedades en tu búsqueda de piso.",
      "Just a heads-up that nothing has changed with your loan application.",
      "Weekly summary: 0 new invoices, 0 overdue payments.",
    ])
      expect(saysNothingNew(t), t).toBe(true);
  });

  it("reads 'still …' after 'same as before' as the old state, not news", () => {
    expect(saysNothingNew("Checked the Airtel outage page again — same as before, still under maintenance.")).toBe(true);
    expect(saysNothingNew("Still under maintenance.")).toBe(false);
  });

  it("keeps news next to a no-news phrase, after a contrast, or without any no-news phrase", () => {
    for (const t of [
      "No new emails, but your landlord called twice.",
      "No new listings today. 2 flats from yesterday dropped their rent by €150.",
      "Nothing new on the flat search; the viewing at Kastanienallee 12 was moved to Thursday 18:00.",
      "No school tomorrow — the district closed all schools because of snow.",
      "Everything is fine with the car; the garage says pick-up is at 17:00.",
      "Your parcel was delivered.",
      "Weekly summary: 2 new invoices, 0 overdue payments.",
    ])
      expect(saysNothingNew(t), t).toBe(false);
  });
});

describe("small talk and restatements", () => {
  it("treats wishes, plans and 'how did it go' without news as small talk", () => {
    for (const t of ["Good morning! Hope you slept well ☀️", "Still here if you need anything 🙂", "Happy Friday! Any plans for the weekend?", "Hope the presentation went well!", "How did the dentist appointment go?", "Na, wie läuft dein Tag so?", "Morning! Just wanted to see how you're doing.", "Thanks for letting me know about the meeting!"])
      expect(isChatter(t), t).toBe(true);
    for (const t of ["Hi! Hope all is well on your side 😊", "I'll keep an eye on the price and let you know if it drops."]) expect(isChatter(t), t).toBe(true);
    for (const t of ["Morning! Your 2 pm with Dr. Patel was moved to 3:30 pm.", "Hope you're well — your parcel arrived at the Packstation."]) expect(isChatter(t), t).toBe(false);
  });

  it("recognises acknowledgements that only repeat the person's words", () => {
    for (const t of ["Got it — you're vegetarian, I'll keep that in mind.", "So you'd like to fly on Friday — I'll remember that."]) expect(hasRestatementMarker(t), t).toBe(true);
    expect(hasRestatementMarker("Noted, you'd like vegetarian options at the wedding.")).toBe(true);
    expect(hasRestatementMarker("Your flight on Friday is confirmed.")).toBe(false);
  });
});

describe("reported changes", () => {
  it("reads before → after from the message itself, in several phrasings and languages", () => {
    expect(reportedChanges("went from $349.99 to $349.49").changes).toEqual([{ before: 349.99, after: 349.49 }]);
    expect(reportedChanges("jetzt 629,00 € (vorher 629,90 €)").changes).toEqual([{ before: 629.9, after: 629 }]);
    expect(reportedChanges("dropped by $0.50 to $248.50").changes).toEqual([{ before: 249, after: 248.5 }]);
    expect(reportedChanges("ist um 0,50 $ auf 349,50 $ gefallen").changes).toEqual([{ before: 350, after: 349.5 }]);
    expect(reportedChanges("est passé de 999,00 $ à 998,00 $").changes).toEqual([{ before: 999, after: 998 }]);
    expect(reportedChanges("a baissé de 0,50 $ à 349,50 $").changes).toEqual([{ before: 350, after: 349.5 }]);
    expect(reportedChanges("Tesla moved +0.3% today").percents).toEqual([0.3]);
    expect(reportedChanges("Nifty 50 fund at ₹412.30 (yesterday ₹412.10)").changes).toEqual([{ before: 412.1, after: 412.3 }]);
    expect(targetsOf("Your target is $330. Ziel: 550 €. Objectif : 899 $")).toEqual([330, 550, 899]);
  });

  it("calls a move below the threshold that reaches no named target trivial, and nothing else", () => {
    expect(reportsOnlyTrivialChange("Nintendo Switch OLED went from $349.99 to $349.49 — your target is $300.", 0.01)).toMatch(/trivial/);
    expect(reportsOnlyTrivialChange("Your Bitcoin holdings are up 0.2% today.", 0.01)).toMatch(/trivial/);
    expect(reportsOnlyTrivialChange("Flight dropped from €240 to €179.", 0.01)).toBeNull();
    expect(reportsOnlyTrivialChange("Bitcoin fell 8% in the last hour.", 0.01)).toBeNull();
    // A small move that passes the target is the news the person asked for.
    expect(reportsOnlyTrivialChange("Now $329.90 (was $330.50), your target is $330.", 0.01)).toBeNull();
    expect(reportsOnlyTrivialChange("Your parcel arrives at 14:00.", 0.01)).toBeNull();
  });
});

describe("subjects and facts", () => {
  it("maps subjects across languages and German compounds, and tells different subjects apart", () => {
    expect([...conceptsOf("Die Stromrechnung ist heute fällig.")].sort()).toEqual(["bill", "electricity"]);
    expect([...conceptsOf("la facture d'électricité")].sort()).toEqual(["bill", "electricity"]);
    expect([...conceptsOf("Dein Vermieter hat wegen der Kaution geantwortet")].sort()).toEqual(["deposit", "landlord", "reply"]);
    expect(differentSubjects(conceptsOf("your water bill"), conceptsOf("your electricity bill"))).toBe(true);
    expect(differentSubjects(conceptsOf("rent"), conceptsOf("rent payment"))).toBe(false);
  });

  it("compares status words as statuses, not as words (a one-word translation with the same status matches)", () => {
    expect([...analyse("Your package has been delivered.").words]).toEqual(["package"]);
    expect([...analyse("Ihr Paket wurde zugestellt.").statuses]).toEqual(["delivered"]);
  });

  it("keeps reference numbers and host names as identities, and drops how long an outage has lasted", () => {
    expect(analyse("Order #48213 status").facts).toEqual([{ kind: "code", value: "#48213" }]);
    expect(analyse("example-shop.com is down").facts).toEqual([{ kind: "url", value: "example-shop.com" }]);
    expect(analyse("example-shop.com has now been down for 45 minutes (HTTP 503)").facts.map((f) => f.value)).toEqual(["example-shop.com", "503"]);
    // Outside an outage a duration is a fact (a delay of 45 vs 90 minutes is news).
    expect(analyse("delayed for 45 minutes").facts.map((f) => f.value)).toEqual(["45"]);
  });
});

describe("impliedDeadline", () => {
  const zone = "Europe/Berlin";
  // 2026-12-01 16:00 in Berlin (UTC+1).
  const now = new Date("2026-12-01T15:00:00Z");
  it("reads today, tonight, tomorrow and clock times in the person's zone", () => {
    expect(impliedDeadline("Your electricity bill is due today.", now, zone)?.toISOString()).toBe("2026-12-01T22:59:59.999Z");
    expect(impliedDeadline("The permission slip is due tomorrow at 8:00.", now, zone)?.toISOString()).toBe("2026-12-02T07:00:00.000Z");
    expect(impliedDeadline("The permission slip is due tomorrow.", now, zone)?.toISOString()).toBe("2026-12-02T08:00:00.000Z");
    expect(impliedDeadline("Pay the parking fine by 17:30.", now, zone)?.toISOString()).toBe("2026-12-01T16:30:00.000Z");
    expect(impliedDeadline("Die Stromrechnung ist heute fällig.", now, zone)?.toISOString()).toBe("2026-12-01T22:59:59.999Z");
    expect(impliedDeadline("La factura vence mañana a las 10:00.", now, zone)?.toISOString()).toBe("2026-12-02T09:00:00.000Z");
  });

  it("finds none without a deadline cue, for a passed time, or for weekdays and dates", () => {
    expect(impliedDeadline("Your parcel arrives tomorrow.", now, zone)).toBeNull();
    expect(impliedDeadline("Pay the parking fine by 09:00.", now, zone)).toBeNull();
    expect(impliedDeadline("Your car insurance renewal is due on December 20.", now, zone)).toBeNull();
    expect(impliedDeadline("Rent is due Friday.", now, zone)).toBeNull();
  });

  it("follows the local day across a DST change", () => {
    // 2026-03-29 in Berlin: clocks jump 02:00 → 03:00; 10:00 local is 08:00 UTC.
    const dst = new Date("2026-03-29T08:00:00Z");
    expect(impliedDeadline("Due today by 18:00.", dst, zone)?.toISOString()).toBe("2026-03-29T16:00:00.000Z");
    expect(impliedDeadline("Due tomorrow.", new Date("2026-03-28T12:00:00Z"), zone)?.toISOString()).toBe("2026-03-29T07:00:00.000Z");
  });
});
