import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config/load.js";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type FakeScriptItem, type RecordedRequest } from "../../fakes/openai-server.js";
import { runDueAt, settled, startTestApp, TestClock, type TestApp } from "../../helpers/app.js";
import { isWake } from "../../helpers/e2e.js";

/**
 * The model judge is on by default whenever a model is configured (issue 18 item 2): the real app,
 * a goal check-in that proposes news, and the fake OpenAI server answering the judge. The rules
 * still bound it (it cannot send what they hold or drop), and a judge failure holds.
 */

const lastIsTool = (r: RecordedRequest) => r.messages.at(-1)?.role === "tool";

describe("the notification judge by default", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
  });

  it("is on unless NOTIFY_MODEL_JUDGEMENT says false, and the setup page is told which", async () => {
    expect(loadConfig({}).NOTIFY_MODEL_JUDGEMENT).toBe(true);
    expect(loadConfig({ NOTIFY_MODEL_JUDGEMENT: "false" }).NOTIFY_MODEL_JUDGEMENT).toBe(false);
    for (const [env, expected] of [[{}, true], [{ NOTIFY_MODEL_JUDGEMENT: "false" }, false]] as const) {
      app = await startTestApp(env);
      const session = await fetch(`${app.url}/api/web/session/local`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ana", create: true }) });
      const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
      const setup = (await (await fetch(`${app.url}/api/web/setup`, { headers: { cookie } })).json()) as { notificationJudgement: boolean };
      expect(setup.notificationJudgement).toBe(expected);
      await app.close();
      app = null;
    }
  });

  /** A goal whose first check-in proposes `news`; returns what the person got and the decisions. */
  async function checkIn(news: string, judge: FakeScriptItem | undefined, env: Record<string, string> = {}) {
    model = await startFakeOpenAI({
      ...(judge && { judge }),
      fallback: (r) => {
        if (isWake(r, "check-in")) return lastIsTool(r) ? text("NOTHING_TO_REPORT") : toolCall("propose_message", { text: news, origin: "monitor" });
        if (lastIsTool(r)) return text("I'll keep an eye on the school's news for you.");
        return toolCall("create_goal", { title: "School news", checkIn: { cron: "0 * * * *", timezone: "UTC" } });
      },
    });
    const clock = new TestClock();
    app = await startTestApp({ OPENAI_BASE_URL: model.url, ...env }, { clock });
    await app.say("ana", "watch the school's news page");
    await app.replies("ana", 1);
    const pid = (await app.store.persons.findIdentity("local", "ana"))!.personId;
    const [task] = (await app.store.tasks.listTasks({ personId: pid, status: ["pending"] })).items;
    await runDueAt(app, clock, task!.notBefore!);
    // Delivered (or decided against) once the loops are quiet.
    await settled(app, clock);
    return {
      texts: (await app.store.localMailbox.listLocalMessages("ana", 0, 50)).map((m) => m.text),
      decisions: (await app.store.notifications.listNotificationsSince(pid, new Date(0))).map((d) => [d.decision, d.rule]),
    };
  }

  const news = "The school moved Friday's concert to the sports hall, 18:30.";

  it("asks the configured model, which may make the rules' send a drop", async () => {
    const got = await checkIn(news, text(JSON.stringify({ decision: "drop", reason: "the person already knows" })));
    expect(model!.judgeRequests).toHaveLength(1);
    expect(got.decisions).toEqual([["drop", "judge"]]);
    expect(got.texts.some((t) => t.includes("sports hall"))).toBe(false);
  }, 60_000);

  it("holds when the judge fails (not JSON)", async () => {
    const got = await checkIn(news, text("I think you should send it!"));
    expect(got.decisions).toEqual([["hold", "judge"]]);
  }, 60_000);

  it("cannot loosen the rules: a judged 'send' of nothing new is still dropped, without asking", async () => {
    const got = await checkIn("[SILENT]", text(JSON.stringify({ decision: "send", reason: "send it" })));
    expect(got.decisions).toEqual([["drop", "no-new-content"]]);
    expect(model!.judgeRequests).toHaveLength(0);
  }, 60_000);

  it("is not asked with NOTIFY_MODEL_JUDGEMENT=false", async () => {
    const got = await checkIn(news, text(JSON.stringify({ decision: "drop", reason: "no" })), { NOTIFY_MODEL_JUDGEMENT: "false" });
    expect(model!.judgeRequests).toHaveLength(0);
    expect(got.decisions).toEqual([["send", "send"]]);
  }, 60_000);
});
