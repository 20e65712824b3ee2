import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/log/logger.js";
import type { ModelClient, ModelRequest } from "../../../core/model/port.js";
import type { Candidate } from "../../../core/notify/candidate.js";
import { nextDigestAt, releaseAt, startOfLocalDay } from "../../../core/notify/digest-timing.js";
import { Notifier, digestJobName } from "../../../core/notify/notifier.js";
import { Outbound } from "../../../core/outbox/outbound.js";
import type { ScheduleRequest } from "../../../core/scheduling/scheduler.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Person } from "../../../core/persons/index.js";

/** The Notifier on a real SQLite store: provenance, the hourly cap, the judge's bounds, and release timing. */

let store: SqliteStore;
let now: Date;
let scheduled: ScheduleRequest[];
let person: Person;
const silent = createLogger({ level: "silent", destination: new Writable({ write: (_c, _e, d) => d() }) }).logger;

const notifier = (judge: ModelClient | null = null, askedForPerHour = 3) =>
  new Notifier({
    store,
    clock: { now: () => now },
    logger: silent,
    outbound: new Outbound({ store, clock: { now: () => now }, wake: () => undefined }),
    scheduler: {
      schedule: async (r) => {
        scheduled.push(r);
        return null;
      },
      cancel: async () => 0,
    },
    judge,
    askedForPerHour,
  });
const candidate = (text: string, over: Partial<Candidate> = {}): Candidate => ({
  text,
  origin: "checkin",
  notify: "if_worthwhile",
  urgency: "normal",
  needsAction: false,
  provenance: { tainted: false, fromPersonWords: false },
  ...over,
});
const outbox = async () => (await store.outbox.listOutbound(person.id, { limit: 100 })).items.map((m) => m.text);
const model = (answer: string | Error): ModelClient & { requests: ModelRequest[] } => {
  const requests: ModelRequest[] = [];
  return {
    model: "fake",
    requests,
    async complete(request) {
      requests.push(request);
      if (answer instanceof Error) throw answer;
      return { content: answer, toolCalls: [], finishReason: "stop", usage: null };
    },
  };
};

beforeEach(async () => {
  store = openSqliteStore({ path: ":memory:" });
  scheduled = [];
  // 12:00 in Berlin (UTC+2).
  now = new Date("2026-05-12T10:00:00Z");
  person = await store.persons.createPerson({ displayName: "Ana", timeZone: "Europe/Berlin", quietHours: { from: "22:00", to: "07:00" } });
});
afterEach(() => store.close());

describe("Notifier", () => {
  it("counts notify 'always' only from the person's own words in an untainted activation (issue 11)", async () => {
    const n = notifier();
    now = new Date("2026-05-12T21:30:00Z"); // 23:30, quiet hours
    const own = await n.propose({ personId: person.id, taskId: null, deliveryKey: "k1", candidate: candidate("Reminder: bins out", { origin: "reminder", notify: "always", provenance: { tainted: false, fromPersonWords: true } }) });
    expect(own).toMatchObject({ decision: "send", rule: "asked-for" });
    expect(own.record).toMatchObject({ askedFor: true, demoted: null });
    const texts = ["Reminder: claim your prize at bonus.example", "Reminder: renew the library card online"];
    for (const [i, provenance] of [{ tainted: true, fromPersonWords: true }, { tainted: false, fromPersonWords: false }].entries()) {
      const v = await n.propose({ personId: person.id, taskId: null, deliveryKey: `k-${i}`, candidate: candidate(texts[i]!, { origin: "reminder", notify: "always", provenance }) });
      expect(v).toMatchObject({ decision: "hold", rule: "hold" });
      expect(v.record).toMatchObject({ askedFor: false, demoted: "provenance" });
    }
    // Nor can a tainted "always" claim urgency to get through quiet hours.
    const claims = { high: "Your parcel 88123 is waiting at the depot on Elm Street", critical: "Account locked: verify your bank login at secure-check.example" };
    for (const urgency of ["high", "critical"] as const) {
      const v = await n.propose({ personId: person.id, taskId: null, deliveryKey: `u-${urgency}`, candidate: candidate(claims[urgency], { origin: "reminder", notify: "always", urgency, provenance: { tainted: true, fromPersonWords: false } }) });
      expect(v).toMatchObject({ decision: "hold", rule: "hold" });
      expect(v.reasons.join(" ")).toContain("treated as normal");
    }
  });

  it("caps asked-for notifications per hour and tells the person exactly once when it trips", async () => {
    const n = notifier(null, 3);
    const own = { origin: "reminder" as const, notify: "always" as const, provenance: { tainted: false, fromPersonWords: true } };
    const decisions: string[] = [];
    for (let i = 0; i < 8; i++) {
      now = new Date(now.getTime() + 1_000);
      const v = await n.propose({ personId: person.id, taskId: null, deliveryKey: `r${i}`, candidate: candidate(`Reminder ${i}: item number ${i * 17 + 3} of the list`, own) });
      decisions.push(`${v.rule}:${v.record?.demoted ?? "-"}`);
    }
    expect(decisions.slice(0, 3)).toEqual(["asked-for:-", "asked-for:-", "asked-for:-"]);
    expect(decisions.slice(3).every((d) => d.endsWith(":cap") && !d.startsWith("asked-for"))).toBe(true);
    const notices = (await outbox()).filter((t) => t.includes("notifications you asked for"));
    expect(notices).toHaveLength(1);
    // An hour later the cap is free again.
    now = new Date(now.getTime() + 3_601_000);
    const later = await n.propose({ personId: person.id, taskId: null, deliveryKey: "late", candidate: candidate("Reminder: the late one, number 991", own) });
    expect(later.rule).toBe("asked-for");
  });

  it("writes the decision and the outbound message together: a crash between them loses nothing (re-run sends once)", async () => {
    const own = { origin: "reminder" as const, notify: "always" as const, occurrenceKey: "task_x@2026-05-12T10:00:00.000Z", provenance: { tainted: false, fromPersonWords: true } };
    const enqueue = store.outbox.enqueueOutbound.bind(store.outbox);
    store.outbox.enqueueOutbound = async () => {
      throw new Error("killed mid-write");
    };
    await expect(notifier().propose({ personId: person.id, taskId: null, deliveryKey: "once", candidate: candidate("Reminder: stretch", own) })).rejects.toThrow(/killed/);
    expect(await store.notifications.listNotificationsSince(person.id, new Date(0))).toEqual([]);
    store.outbox.enqueueOutbound = enqueue;
    expect((await notifier().propose({ personId: person.id, taskId: null, deliveryKey: "once", candidate: candidate("Reminder: stretch", own) })).decision).toBe("send");
    expect((await notifier().propose({ personId: person.id, taskId: null, deliveryKey: "once", candidate: candidate("Reminder: stretch", own) })).decision).toBe("drop");
    expect(await outbox()).toEqual(["Reminder: stretch"]);
  });

  it("never delivers a silence token: alone it is dropped with no message, at a message's edge it is cut (issue 18)", async () => {
    const n = notifier();
    for (const [i, t] of ["[SILENT]", "<no_reply>", "**(Silence)**"].entries()) {
      const v = await n.propose({ personId: person.id, taskId: null, deliveryKey: `s${i}`, candidate: candidate(t, { origin: "monitor", urgency: "high" }) });
      expect(v).toMatchObject({ decision: "drop", rule: "no-new-content" });
    }
    const asked = { origin: "reminder" as const, notify: "always" as const, provenance: { tainted: false, fromPersonWords: true } };
    expect((await n.propose({ personId: person.id, taskId: null, deliveryKey: "s-r", candidate: candidate("[Silent]", asked) })).decision).toBe("drop");
    const v = await n.propose({ personId: person.id, taskId: null, deliveryKey: "s-edge", candidate: candidate("Your 14:10 train to Leipzig is cancelled. [SILENT]", { origin: "monitor" }) });
    expect(v.decision).toBe("send");
    expect(await outbox()).toEqual(["Your 14:10 train to Leipzig is cancelled."]);
  });

  it("asks the judge it is given as a function at every candidate: a model configured later judges from then on", async () => {
    let configured: ModelClient | null = null;
    const drop = model(JSON.stringify({ decision: "drop", reason: "not worth it" }));
    const n = new Notifier({ store, clock: { now: () => now }, logger: silent, outbound: new Outbound({ store, clock: { now: () => now }, wake: () => undefined }), scheduler: { schedule: async () => null, cancel: async () => 0 }, judge: () => configured });
    const first = await n.propose({ personId: person.id, taskId: null, deliveryKey: "g1", candidate: candidate("The bakery on Elm Street reopens on Monday 18 May.", { origin: "monitor" }) });
    expect(first).toMatchObject({ decision: "send", rule: "send" });
    configured = drop;
    const second = await n.propose({ personId: person.id, taskId: null, deliveryKey: "g2", candidate: candidate("Your library card expires on 3 June; renewal is free.", { origin: "monitor" }) });
    expect(second).toMatchObject({ decision: "drop", rule: "judge" });
    expect(drop.requests).toHaveLength(1);
  });

  it("treats a critical claim from a tainted activation as high", async () => {
    await store.persons.updatePerson(person.id, { proactivity: "off" });
    const n = notifier();
    const v = await n.propose({ personId: person.id, taskId: null, deliveryKey: "c", candidate: candidate("URGENT: wire €900 to account 4471 now", { origin: "monitor", urgency: "critical", provenance: { tainted: true, fromPersonWords: false } }) });
    expect(v).toMatchObject({ decision: "drop", rule: "proactivity-off" });
    const trusted = await n.propose({ personId: person.id, taskId: null, deliveryKey: "c2", candidate: candidate("Water leak under the sink: sensor 2 reads wet", { origin: "monitor", urgency: "critical" }) });
    expect(trusted).toMatchObject({ decision: "send", rule: "critical" });
  });

  it("lets the judge make a decision stricter but never looser; any failure holds", async () => {
    const news = (i: number) => candidate(`The Lisbon fare dropped to €${80 + i} on TAP flight TP57${i}.`, { origin: "monitor" });
    const drop = model('{"decision":"drop","reason":"same as before"}');
    expect(await notifier(drop).propose({ personId: person.id, taskId: null, deliveryKey: "j1", candidate: news(1) })).toMatchObject({ decision: "drop", rule: "judge" });
    const request = JSON.stringify(drop.requests[0]!.messages);
    expect(request).toContain("Europe/Berlin");
    expect(request).toContain("TP571");
    for (const [i, answer] of ["not json", '{"decision":"send"}', '{"decision":"maybe","reason":"x"}', new Error("timeout")].entries()) {
      const v = await notifier(model(answer)).propose({ personId: person.id, taskId: null, deliveryKey: `j-${i}`, candidate: news(2 + i) });
      expect(v.decision, String(answer)).toBe("hold");
    }
    now = new Date("2026-05-12T21:30:00Z"); // quiet hours: the rules hold
    const send = await notifier(model('{"decision":"send","reason":"important"}')).propose({ personId: person.id, taskId: null, deliveryKey: "j3", candidate: candidate("Marathon plan: 3 of 4 runs logged; 18 km on Sunday.") });
    expect(send).toMatchObject({ decision: "hold", rule: "hold" });
    // Critical alerts and asked-for reminders are not second-guessed.
    const never = model('{"decision":"drop","reason":"no"}');
    expect((await notifier(never).propose({ personId: person.id, taskId: null, deliveryKey: "j4", candidate: candidate("Smoke alarm in the kitchen at 23:31", { urgency: "critical" }) })).decision).toBe("send");
    expect(never.requests).toHaveLength(0);
  });

  it("holds at night and releases a deadline item when quiet hours end, before its deadline; the rest with the digest", async () => {
    await store.persons.updatePerson(person.id, { digestTime: "18:00" });
    const n = notifier();
    now = new Date("2026-05-12T23:00:00Z"); // 01:00 local
    const deadline = new Date("2026-05-13T07:30:00Z"); // 09:30 local
    const slip = await n.propose({ personId: person.id, taskId: null, deliveryKey: "d1", candidate: candidate("Parking permit renewal closes at 09:30 — it needs your ID number.", { origin: "monitor", needsAction: true, deadline }) });
    const info = await n.propose({ personId: person.id, taskId: null, deliveryKey: "d2", candidate: candidate("New post on the school blog: concert photos.", { origin: "digest-item" }) });
    expect([slip.decision, info.decision]).toEqual(["hold", "hold"]);
    expect(scheduled.at(-1)).toMatchObject({ name: digestJobName, key: person.id, timing: { kind: "at", at: new Date("2026-05-13T05:00:00Z") } });
    now = new Date("2026-05-13T05:00:00Z"); // 07:00 local: quiet hours end
    expect(await n.sendDigest(person.id)).toBe(1);
    expect(await outbox()).toEqual(["Parking permit renewal closes at 09:30 — it needs your ID number."]);
    expect(scheduled.at(-1)).toMatchObject({ timing: { kind: "at", at: new Date("2026-05-13T16:00:00Z") } });
    now = new Date("2026-05-13T16:00:00Z");
    expect(await n.sendDigest(person.id)).toBe(1);
    expect(await n.sendDigest(person.id)).toBe(0);
  });
});

describe("Notifier: a deadline stated only in words", () => {
  it("counts 'due today' / 'due tomorrow' as an action deadline (rule 4) and releases a night-held one before it", async () => {
    await store.persons.updatePerson(person.id, { proactivity: "low", digestTime: "18:00" });
    const n = notifier();
    // 12:00 local, proactivity low: an action due today is sent, a plain update is held.
    const bill = await n.propose({ personId: person.id, taskId: null, deliveryKey: "w1", candidate: candidate("Your electricity bill (€84.20) is due today.", { origin: "monitor", needsAction: true }) });
    expect(bill).toMatchObject({ decision: "send", rule: "needs-person" });
    const later = await n.propose({ personId: person.id, taskId: null, deliveryKey: "w2", candidate: candidate("Your car insurance renewal is due on December 20.", { origin: "monitor", needsAction: true }) });
    expect(later.decision).toBe("hold");
    // Without needsAction the words set no deadline.
    const info = await n.propose({ personId: person.id, taskId: null, deliveryKey: "w3", candidate: candidate("The gym is closed today.", { origin: "monitor" }) });
    expect(info.decision).toBe("hold");
    // 01:00 local: held (the deadline is after quiet hours end), stored with the deadline, released at 07:00 rather than 18:00.
    now = new Date("2026-05-12T23:00:00Z");
    const slip = await n.propose({ personId: person.id, taskId: null, deliveryKey: "w4", candidate: candidate("Mia's permission slip is due today at 10:00 — it needs your signature.", { origin: "monitor", needsAction: true }) });
    expect(slip).toMatchObject({ decision: "hold", rule: "needs-person" });
    expect(slip.record?.deadline).toEqual(new Date("2026-05-13T08:00:00Z"));
    // Before quiet hours end: sent through them.
    const early = await n.propose({ personId: person.id, taskId: null, deliveryKey: "w5", candidate: candidate("Confirm the airport taxi by 05:30 or it is released.", { origin: "monitor", needsAction: true }) });
    expect(early).toMatchObject({ decision: "send", rule: "needs-person" });
    now = new Date("2026-05-13T05:00:00Z");
    expect(await n.sendDigest(person.id)).toBeGreaterThan(0);
    expect((await outbox()).some((t) => t.includes("Mia's permission slip is due today at 10:00"))).toBe(true);
  });
});

describe("release timing", () => {
  const berlin = { timeZone: "Europe/Berlin", quietHours: { from: "22:00", to: "07:00" }, digestTime: null };
  it("sends the digest when quiet hours end, or at the /digest time if set", () => {
    const night = new Date("2026-05-12T23:00:00Z");
    expect(nextDigestAt(berlin, night)).toEqual(new Date("2026-05-13T05:00:00Z"));
    expect(nextDigestAt({ ...berlin, digestTime: "18:30" }, night)).toEqual(new Date("2026-05-13T16:30:00Z"));
    expect(nextDigestAt({ ...berlin, quietHours: null }, night)).toEqual(new Date("2026-05-13T16:00:00Z"));
  });

  it("follows the wall clock across DST days in both hemispheres", () => {
    // Berlin falls back on 2026-10-25: 07:00 local is 06:00Z that day (05:00Z the day before).
    expect(nextDigestAt(berlin, new Date("2026-10-24T23:00:00Z"))).toEqual(new Date("2026-10-25T06:00:00Z"));
    // Sydney springs forward on 2026-10-04: 07:00 local is 20:00Z on the 3rd.
    expect(nextDigestAt({ ...berlin, timeZone: "Australia/Sydney" }, new Date("2026-10-03T14:30:00Z"))).toEqual(new Date("2026-10-03T20:00:00Z"));
    // Santiago skips midnight on 2026-09-06: the local day starts at 01:00 (-03).
    expect(startOfLocalDay(new Date("2026-09-06T13:00:00Z"), "America/Santiago")).toEqual(new Date("2026-09-06T04:00:00Z"));
  });

  it("releases a deadline item early: at the end of quiet hours, or ahead of its deadline outside them", () => {
    const person = { ...berlin, digestTime: "18:00" };
    const nightHeld = new Date("2026-05-12T23:00:00Z");
    expect(releaseAt(person, nightHeld, new Date("2026-05-13T07:30:00Z"))).toEqual(new Date("2026-05-13T05:00:00Z"));
    expect(releaseAt(person, nightHeld, new Date("2026-05-14T07:30:00Z"))).toEqual(new Date("2026-05-13T16:00:00Z"));
    expect(releaseAt(person, nightHeld, null)).toEqual(new Date("2026-05-13T16:00:00Z"));
    // Held at 19:00 local for the budget, deadline 23:30 local: out two hours before, at 21:30.
    expect(releaseAt({ ...berlin }, new Date("2026-05-12T17:00:00Z"), new Date("2026-05-12T21:30:00Z"))).toEqual(new Date("2026-05-12T19:30:00Z"));
    // Deadline 01:00 local: two hours before falls in quiet hours, so just before they start (21:59).
    expect(releaseAt({ ...berlin }, new Date("2026-05-12T17:00:00Z"), new Date("2026-05-12T23:00:00Z"))).toEqual(new Date("2026-05-12T19:59:00Z"));
  });
});
