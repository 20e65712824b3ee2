import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../../fakes/openai-server.js";
import { runDueAt, settled, startTestApp, TestClock, type TestApp } from "../../helpers/app.js";
import { isWake } from "../../helpers/e2e.js";

/**
 * Asked-for reminders are never dropped as repeats (issue 18 item 1, field case E5): the real app,
 * the real scheduler and notifier, a scripted model that words reminders like a real one — its
 * confirmation restates the reminder, and the wake-up says it again in other words (or says nothing).
 */

const lastIsTool = (r: RecordedRequest) => r.messages.at(-1)?.role === "tool";

describe("asked-for reminders after the confirmation that restates them", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
  });

  /** The person asks for a reminder in `inSeconds`; the model confirms with `confirmation` and wakes up saying `reminder`. */
  async function remind(note: string, confirmation: string, reminder: string, inSeconds = 20) {
    const clock = new TestClock();
    const due = new Date(clock.now().getTime() + inSeconds * 1000);
    model = await startFakeOpenAI({
      fallback: (r) => {
        if (isWake(r, note)) return text(reminder);
        if (lastIsTool(r)) return text(confirmation);
        return toolCall("schedule_wakeup", { note, at: due.toISOString(), notify: "always" });
      },
    });
    app = await startTestApp({ OPENAI_BASE_URL: model.url }, { clock });
    await app.say("ana", `remind me to ${note} in ${inSeconds} seconds`);
    await app.replies("ana", 1);
    await runDueAt(app, clock, due);
    // Delivered (or decided against) once the loops are quiet.
    await settled(app, clock);
    const pid = (await app.store.persons.findIdentity("local", "ana"))!.personId;
    return {
      texts: (await app.store.localMailbox.listLocalMessages("ana", 0, 50)).map((m) => m.text),
      decisions: (await app.store.notifications.listNotificationsSince(pid, new Date(0))).map((d) => [d.decision, d.rule]),
    };
  }

  it("delivers 'Reminder: pay invoice INV-2231.' 20 s after 'Scheduled: pay invoice INV-2231 at 19:00.'", async () => {
    const got = await remind("pay invoice INV-2231", "Scheduled: pay invoice INV-2231 at 19:00.", "Reminder: pay invoice INV-2231.");
    expect(got.texts).toEqual(["Scheduled: pay invoice INV-2231 at 19:00.", "Reminder: pay invoice INV-2231."]);
    expect(got.decisions).toEqual([["send", "asked-for"]]);
  }, 60_000);

  it("delivers 'Stretch!' after 'Got it: stretch.'", async () => {
    const got = await remind("stretch", "Got it: stretch.", "Stretch!");
    expect(got.texts).toEqual(["Got it: stretch.", "Stretch!"]);
  }, 60_000);

  it("delivers 'Time to stretch!' after 'Got it: time to stretch.'", async () => {
    const got = await remind("stretch", "Got it: time to stretch.", "Time to stretch!");
    expect(got.texts).toEqual(["Got it: time to stretch.", "Time to stretch!"]);
  }, 60_000);

  it("delivers a reminder worded exactly like its confirmation", async () => {
    const got = await remind("water the tomatoes", "Reminder: water the tomatoes.", "Reminder: water the tomatoes.", 5);
    expect(got.texts).toEqual(["Reminder: water the tomatoes.", "Reminder: water the tomatoes."]);
  }, 60_000);

  it("delivers the reminder's own note when the model answers the wake-up with a silence token or a no-news marker", async () => {
    const silent = await remind("call the dentist", "I'll remind you to call the dentist.", "[SILENT]");
    expect(silent.texts).toEqual(["I'll remind you to call the dentist.", "Reminder: call the dentist"]);
    await app!.close();
    await model!.close();
    app = null;
    const marker = await remind("take the blue pill", "Done: take the blue pill.", "**NOTHING_TO_REPORT**");
    expect(marker.texts).toEqual(["Done: take the blue pill.", "Reminder: take the blue pill"]);
  }, 90_000);
});
