/**
 * Issue 18 item 7, the daily model budget: through the local web chat API (real HTTP), the scripted
 * OpenAI fake reporting `usage` in every answer, and an injected clock. Once a person's tokens of
 * the local day (their time zone) reach MODEL_BUDGET_TOKENS_PER_DAY, no more model calls are made
 * for them that day — not for their messages, not for their wake-ups — they are told once, and what
 * came meanwhile is kept and done after their midnight. The count is in the store: a restart does
 * not reset it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DateTime } from "luxon";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { runDueAt, startTestApp, TestClock, type LocalReply, type TestApp } from "../helpers/app.js";
import { isWake, userTexts } from "../helpers/e2e.js";

const ZONE = "Asia/Tokyo";
const BUDGET_NOTICE = "today's model budget";
const usage = { promptTokens: 300, completionTokens: 50 };

describe("the per-person daily model budget (issue 18 item 7)", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let dataDir = "";

  afterEach(async () => {
    await app?.stop();
    app = null;
    await model?.close();
    model = null;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const notices = (ms: LocalReply[]) => ms.filter((m) => m.text.includes(BUDGET_NOTICE));

  it("stops model calls for the person at the budget, tells them once, keeps messages and wake-ups and does them after their midnight, across a restart", async () => {
    const clock = new TestClock();
    // 09:00 in Tokyo, so the whole story happens within one local day before midnight.
    const nineAm = DateTime.fromJSDate(clock.now(), { zone: ZONE }).plus({ days: 1 }).set({ hour: 9, minute: 0, second: 0, millisecond: 0 });
    clock.reach(nineAm.toJSDate());
    const remindAt = nineAm.plus({ hours: 1 });
    const midnight = nineAm.plus({ days: 1 }).startOf("day");
    model = await startFakeOpenAI({
      fallback: (r: RecordedRequest) => {
        if (isWake(r, "stretch")) return text("Reminder: stretch!", { usage });
        const last = userTexts(r).at(-1) ?? "";
        if (last.startsWith("remind me")) {
          return r.messages.some((m) => m.role === "tool") ? text("Scheduled: stretch at 10:00.", { usage }) : { ...toolCall("schedule_wakeup", { note: "stretch", at: remindAt.toISO()!, notify: "always" }), usage };
        }
        return text(`noted: ${last}`, { usage });
      },
    });
    dataDir = mkdtempSync(join(tmpdir(), "familiar-budget-e2e-"));
    const env = { DATA_DIR: dataDir, OPENAI_BASE_URL: model.url, MODEL_BUDGET_TOKENS_PER_DAY: "1000" };
    app = await startTestApp(env, { clock });

    await app.say("ana", `/timezone ${ZONE}`);
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.includes(ZONE)));
    // 700 tokens: the reminder is scheduled. Then 350 more: 1050, the budget is used.
    await app.say("ana", "remind me at 10:00 to stretch");
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.startsWith("Scheduled:")));
    await app.say("ana", "message 2");
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text === "noted: message 2"));
    expect(model.requests).toHaveLength(3);
    const pid = (await app.store.persons.findIdentity("local", "ana"))!.personId;
    const today = nineAm.toISODate()!;
    expect(await app.store.usage.getModelUsage(pid, today)).toMatchObject({ promptTokens: 900, completionTokens: 150, calls: 3 });

    // Over the budget: the message is kept, no model call, one plain message.
    await app.say("ana", "message 3");
    let ms = await app.repliesUntil("ana", (x) => notices(x).length === 1);
    expect(notices(ms)[0]!.text).toMatch(/00:00 your time/);
    await app.say("ana", "message 4");
    // The reminder's time comes: it waits too (it is neither run nor skipped as late).
    await runDueAt(app, clock, remindAt.toJSDate());
    expect(model.requests).toHaveLength(3);

    // A restart keeps the day's count: still no call, still one notice.
    await app.stop();
    app = await startTestApp(env, { clock });
    await app.say("ana", "message 5");
    await runDueAt(app, clock, remindAt.plus({ hours: 2 }).toJSDate());
    expect(model.requests).toHaveLength(3);
    ms = await app.repliesUntil("ana", (x) => x.some((m) => m.text.includes("message 2")));
    expect(notices(ms)).toHaveLength(1);
    expect((await app.store.conversation.listRecentMessages(pid, 100)).filter((m) => m.role === "user").map((m) => m.text)).toEqual(
      expect.arrayContaining(["message 3", "message 4", "message 5"]),
    );

    // After the person's midnight: the kept messages are answered, the reminder arrives.
    await runDueAt(app, clock, midnight.plus({ seconds: 1 }).toJSDate(), 30_000);
    ms = await app.repliesUntil("ana", (x) => x.some((m) => m.text === "Reminder: stretch!") && x.some((m) => m.text.startsWith("noted: message")) && x.filter((m) => m.text.startsWith("noted:")).length >= 2, 30_000);
    const later = model.requests.slice(3);
    expect(later.some((r) => isWake(r, "stretch"))).toBe(true);
    const answered = later.filter((r) => !isWake(r, "stretch")).flatMap((r) => userTexts(r));
    for (const m of ["message 3", "message 4", "message 5"]) expect(answered.join("\n")).toContain(m);
    expect(notices(ms)).toHaveLength(1);
    expect(await app.store.usage.getModelUsage(pid, midnight.toISODate()!)).toMatchObject({ calls: later.length });
  });

  it("counts the notification judge's calls too, and an activation the budget stops between two calls goes on from its journal after midnight", async () => {
    const clock = new TestClock();
    const nineAm = DateTime.fromJSDate(clock.now(), { zone: ZONE }).plus({ days: 1 }).set({ hour: 9, minute: 0, second: 0, millisecond: 0 });
    clock.reach(nineAm.toJSDate());
    const checkAt = nineAm.plus({ hours: 1 });
    const midnight = nineAm.plus({ days: 1 }).startOf("day");
    const hasToolResult = (r: RecordedRequest) => r.messages.at(-1)?.role === "tool";
    model = await startFakeOpenAI({
      judge: text(JSON.stringify({ decision: "send", reason: "new" }), { usage: { promptTokens: 10, completionTokens: 5 } }),
      fallback: (r: RecordedRequest) => {
        if (isWake(r, "parcel")) return text("The parcel left Osaka this morning.", { usage });
        const last = userTexts(r).at(-1) ?? "";
        if (last.startsWith("check the parcel")) {
          return hasToolResult(r) ? text("I'll check at 10:00.", { usage }) : { ...toolCall("schedule_wakeup", { note: "parcel status", at: checkAt.toISO()!, notify: "if_worthwhile" }), usage };
        }
        if (last.startsWith("note that")) {
          return hasToolResult(r) ? text("Saved.", { usage }) : { ...toolCall("remember", { kind: "fact", text: "Ana's parcel number is 4711" }), usage: { promptTokens: 1000, completionTokens: 0 } };
        }
        return text("ok", { usage });
      },
    });
    dataDir = mkdtempSync(join(tmpdir(), "familiar-budget-e2e-"));
    app = await startTestApp({ DATA_DIR: dataDir, OPENAI_BASE_URL: model.url, MODEL_BUDGET_TOKENS_PER_DAY: "2000" }, { clock });
    await app.say("ana", `/timezone ${ZONE}`);
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.includes(ZONE)));
    await app.say("ana", "check the parcel at 10:00");
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text === "I'll check at 10:00."));
    const pid = (await app.store.persons.findIdentity("local", "ana"))!.personId;

    // The wake-up's message goes through the judge; its call is the person's too.
    await runDueAt(app, clock, checkAt.toJSDate());
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.includes("left Osaka")));
    expect(model.judgeRequests.length).toBeGreaterThan(0);
    const today = nineAm.toISODate()!;
    expect(await app.store.usage.getModelUsage(pid, today)).toMatchObject({ calls: model.requests.length + model.judgeRequests.length, promptTokens: 900 + 10 * model.judgeRequests.length });

    // The tool call's answer takes the day over the budget: the model is not asked again today.
    await app.say("ana", "note that my parcel number is 4711");
    await app.repliesUntil("ana", (ms) => notices(ms).length === 1);
    const calls = model.requests.length;
    expect((await app.store.memory.listMemory(pid)).items.map((m) => m.text)).toEqual(["Ana's parcel number is 4711"]);
    await runDueAt(app, clock, nineAm.plus({ hours: 3 }).toJSDate());
    expect(model.requests).toHaveLength(calls);

    // After midnight it goes on where it stopped: the tool call is not made again, the answer comes.
    await runDueAt(app, clock, midnight.plus({ seconds: 1 }).toJSDate(), 30_000);
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text === "Saved."), 30_000);
    expect(model.requests).toHaveLength(calls + 1);
    expect(model.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "tool" });
    expect((await app.store.memory.listMemory(pid)).items).toHaveLength(1);
  });
});
