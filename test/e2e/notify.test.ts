import { afterEach, describe, expect, it } from "vitest";
import { asId } from "../../core/ids.js";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { runDueAt, settled, startTestApp, TestClock, type TestApp } from "../helpers/app.js";
import { isWake, sleep } from "../helpers/e2e.js";

/**
 * The notification filter end to end (issue 12): the real app over HTTP, the local chat, the real
 * scheduler, and a scripted model on the fake OpenAI server.
 */

const hhmm = (d: Date) => d.toISOString().slice(11, 16);

/** Polls `read` until `done` holds (20 s at most). */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await sleep(50);
  }
}
const lastIsTool = (r: RecordedRequest) => r.messages.at(-1)?.role === "tool";

describe("proactive messages end to end", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;

  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
  });

  async function personId(a: TestApp, user: string) {
    return (await a.store.persons.findIdentity("local", user))!.personId;
  }

  it("delivers a reminder the scheduler fired twice exactly once", async () => {
    let wakes = 0;
    model = await startFakeOpenAI({
      fallback: (r) => {
        if (isWake(r, "stretch")) return text(++wakes === 1 ? "Time to stretch!" : "Stretch break now — stand up and reach for the ceiling.");
        if (lastIsTool(r)) return text("Okay — every day at 09:00 I'll remind you to stretch.");
        return toolCall("schedule_wakeup", { note: "stretch", cron: "0 9 * * *", timezone: "UTC", notify: "always" });
      },
    });
    const clock = new TestClock();
    app = await startTestApp({ OPENAI_BASE_URL: model.url }, { clock });
    await app.say("ana", "remind me every day at 9 to stretch");
    await app.replies("ana", 1);
    const pid = await personId(app, "ana");
    const [task] = (await app.store.tasks.listTasks({ personId: pid, status: ["pending"] })).items;
    const due = task!.notBefore!;
    await runDueAt(app, clock, due);
    // The same occurrence runs a second time (as if a stray trigger made it due again); the second
    // activation even words it differently.
    await app.store.tasks.transitionTask({ taskId: task!.id, owner: null, to: { status: "waiting", wait: { kind: "time", until: due } }, now: clock.now() });
    await runDueAt(app, clock, due);
    expect(wakes).toBe(2);
    // Nothing more is due or running: had the second run said it again, it would be delivered by now.
    await settled(app, clock);
    const texts = (await app.store.localMailbox.listLocalMessages("ana", 0, 50)).map((m) => m.text);
    expect(texts).toEqual(["Okay — every day at 09:00 I'll remind you to stretch.", "Time to stretch!"]);
    const decisions = await app.store.notifications.listNotificationsSince(pid, new Date(0));
    expect(decisions.map((d) => [d.decision, d.rule])).toEqual([
      ["drop", "no-new-content"],
      ["send", "asked-for"],
    ]);
    expect(decisions[0]!.reasons[0]).toMatch(/occurrence .* already delivered/);
    expect(decisions[1]).toMatchObject({ origin: "reminder", askedFor: true, occurrenceKey: `${task!.id}@${due.toISOString()}` });
  }, 60_000);

  it("delivers a critical alert in quiet hours with proactivity off, and drops an ordinary update then", async () => {
    let proposal: Record<string, unknown> = {};
    model = await startFakeOpenAI({
      fallback: (r) => {
        if (isWake(r, "check-in")) return lastIsTool(r) ? text("NOTHING_TO_REPORT") : toolCall("propose_message", proposal);
        if (lastIsTool(r)) return text("I'll watch flight TP1321 for you.");
        return toolCall("create_goal", { title: "Flight TP1321", checkIn: { cron: "0 * * * *", timezone: "UTC" } });
      },
    });
    const clock = new TestClock();
    app = await startTestApp({ OPENAI_BASE_URL: model.url }, { clock });
    const now = new Date();
    await app.say("ana", "/proactivity off");
    await app.say("ana", `/quiet ${hhmm(new Date(now.getTime() - 3_600_000))}-${hhmm(new Date(now.getTime() + 3 * 3_600_000))}`);
    await app.say("ana", "watch my flight TP1321");
    await app.replies("ana", 3);
    const pid = await personId(app, "ana");
    const [task] = (await app.store.tasks.listTasks({ personId: pid, status: ["pending"] })).items;

    proposal = { text: "Flight TP1321 LIS→FRA at 06:50 is CANCELLED. Rebooking is open now.", origin: "monitor", urgency: "critical", needsAction: true };
    await runDueAt(app, clock, task!.notBefore!);
    const replies = await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.includes("CANCELLED")));
    expect(replies.filter((m) => m.text.includes("CANCELLED"))).toHaveLength(1);

    proposal = { text: "TP1321's replacement aircraft is an A321neo with Wi-Fi.", origin: "monitor", urgency: "normal" };
    // The next occurrence (an hour later).
    const next = (await app.store.tasks.getTask(task!.id))!.state;
    await runDueAt(app, clock, next.status === "waiting" && next.wait.kind === "time" ? next.wait.until : new Date(NaN));
    await settled(app, clock);
    expect((await app.store.localMailbox.listLocalMessages("ana", 0, 50)).some((m) => m.text.includes("A321neo"))).toBe(false);
    const decisions = await app.store.notifications.listNotificationsSince(pid, new Date(0));
    expect(decisions.map((d) => [d.decision, d.rule, d.urgency])).toEqual([
      ["drop", "proactivity-off", "normal"],
      ["send", "critical", "critical"],
    ]);
    // No card text or "NOTHING_TO_REPORT" leaked: the proposals were the candidates.
    expect((await app.store.localMailbox.listLocalMessages("ana", 0, 50)).some((m) => /NOTHING_TO_REPORT/.test(m.text))).toBe(false);
  }, 60_000);

  it("holds an action item at night and delivers it when quiet hours end, before its deadline", async () => {
    // Quiet hours end at the next minute boundary at least 12 s away (HH:MM is their resolution).
    const start = new Date();
    const end = new Date(Math.ceil((start.getTime() + 12_000) / 60_000) * 60_000);
    const deadline = new Date(end.getTime() + 10 * 60_000);
    model = await startFakeOpenAI({
      fallback: (r) => {
        if (isWake(r, "check-in")) {
          return lastIsTool(r)
            ? text("NOTHING_TO_REPORT")
            : toolCall("propose_message", { text: `Mia's permission slip must be signed by ${hhmm(deadline)} UTC.`, origin: "monitor", needsAction: true, deadline: deadline.toISOString() });
        }
        if (lastIsTool(r)) return text("I'll watch the school inbox.");
        // A check of the inbox in 2 s (quiet hours are on by then).
        return toolCall("schedule_wakeup", { note: "check-in: school inbox", at: new Date(Date.now() + 2_000).toISOString() });
      },
    });
    app = await startTestApp({ OPENAI_BASE_URL: model.url });
    await app.say("ana", `/quiet ${hhmm(new Date(end.getTime() - 3 * 3_600_000))}-${hhmm(end)}`);
    // A digest time long after the deadline: the item must not wait for it.
    await app.say("ana", `/digest ${hhmm(new Date(end.getTime() + 6 * 3_600_000))}`);
    await app.say("ana", "watch the school inbox");
    await app.replies("ana", 3);
    const pid = await personId(app, "ana");
    const [task] = (await app.store.tasks.listTasks({ personId: pid, status: ["pending"] })).items;
    const [held] = await waitFor(async () => (await app!.store.notifications.listNotificationsSince(pid, new Date(0))).filter(Boolean), (list) => list.length > 0);
    expect(held).toMatchObject({ decision: "hold", rule: "needs-person", deadline });
    expect(Date.now()).toBeLessThan(end.getTime());
    expect((await app.store.localMailbox.listLocalMessages("ana", 0, 50)).some((m) => m.text.includes("permission slip"))).toBe(false);
    // The digest job is scheduled right after the hold is recorded (Agenda may still be loading: jobs/lazy.ts).
    expect(await waitFor(() => app!.scheduler.nextRunAt("digest.send", pid), (at) => at !== null)).toEqual(end);

    const replies = await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.includes("permission slip")), end.getTime() - Date.now() + 30_000);
    const slip = replies.find((m) => m.text.includes("permission slip"))!;
    expect(new Date(slip.at).getTime()).toBeGreaterThanOrEqual(end.getTime());
    expect(new Date(slip.at).getTime()).toBeLessThan(deadline.getTime());
    const [record] = await app.store.notifications.listNotificationsSince(pid, new Date(0));
    expect(record!.digestedAt!.getTime()).toBeLessThan(deadline.getTime());
    expect((await app.store.tasks.getTask(asId("task", task!.id)))?.state.status).toBe("done");
  }, 150_000);
});
