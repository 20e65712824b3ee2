import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer } from "../../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { getJson, postJson, signIn } from "../../helpers/web.js";
import { activityLines } from "../../../web/api/activity-lines.js";
import { scheduleInWords } from "../../../web/api/goal-words.js";
import type { AuditEvent } from "../../../core/audit/index.js";

/** Issue 19 item 8: Activity one line per action in a sentence, a short filter of categories; Now says what is next; Goals say the schedule in words. */



let seq = 0;
const event = (kind: string, at: number, data: Record<string, unknown>, summary = kind): AuditEvent => ({ id: `aud_${++seq}`, personId: "per_1", kind, summary, data, at: new Date(at) }) as unknown as AuditEvent;

describe("plain words on the dashboard", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  afterEach(async () => {
    await app?.close();
    await model?.close();
    app = model = null;
  });

  it("folds a tool call's decision, approval and result into one sentence, and an asked-then-run call into two", () => {
    const key = "task_1:3";
    const events = [
      // newest first, as the audit log lists them
      event("tool.result", 5_000, { tool: "http_request", ok: true, idempotencyKey: key }),
      event("sentinel.decision", 5_000, { tool: "http_request", method: "POST", destinations: ["shop.example/orders"], effect: "allow", ruleId: "allow-granted", idempotencyKey: key, args: {} }),
      event("approval.decided", 4_000, { approvalId: "apr_1" }, "Approved once via local"),
      event("approval.requested", 3_000, { approvalId: "apr_1", idempotencyKey: key }),
      event("sentinel.decision", 3_000, { tool: "http_request", method: "POST", destinations: ["shop.example/orders"], effect: "ask", ruleId: "ask-write", idempotencyKey: key, args: {} }),
      event("tool.result", 2_000, { tool: "remember", ok: true, idempotencyKey: "task_1:1" }),
      event("sentinel.decision", 2_000, { tool: "remember", method: null, destinations: [], effect: "allow", ruleId: "allow-internal", idempotencyKey: "task_1:1", args: { kind: "fact", text: "Allergic to peanuts" } }),
    ];
    const lines = activityLines(events);
    expect(lines.map((l) => l.summary)).toEqual(["Sent data to shop.example/orders", "Approved once via the web chat", "Asked you before sending data to shop.example/orders", "Remembered “Allergic to peanuts”"]);
    expect(lines[0]!.why).toBe("you allowed this before");
    expect(lines[2]!.why).toBe("it changes or sends something");
    const failed = activityLines([event("tool.result", 1, { tool: "run_code", ok: false, code: "timeout", idempotencyKey: "k" }), event("sentinel.decision", 1, { tool: "run_code", effect: "allow", ruleId: "allow-internal", idempotencyKey: "k", args: { language: "python" } })]);
    expect(failed).toMatchObject([{ summary: "Tried: ran python code in its sandbox — it failed (timeout)", problem: true }]);
  });

  it("says a check-in schedule in words, in the goal's zone", () => {
    expect(scheduleInWords({ cron: "0 9 * * 5", timeZone: "Europe/Berlin" })).toBe("Checks in at 09:00, only on Friday (Europe/Berlin)");
    expect(scheduleInWords({ cron: "30 18 * * 1-5", timeZone: "America/Chicago" })).toBe("Checks in at 18:30, Monday through Friday (America/Chicago)");
  });

  it("Now lists the next wake-ups with times and Goals the schedule; Activity filters by category, one line per action", async () => {
    model = await startFakeOpenAI();
    app = await startTestApp({ OPENAI_BASE_URL: model.url });
    const ana = await signIn(app, "Ana");
    model.push(
      toolCall("create_goal", { title: "Weekend baking project", checkIn: { cron: "0 9 * * 5", timezone: "Europe/Berlin" } }),
      toolCall("remember", { kind: "fact", text: "Allergic to peanuts" }),
      toolCall("schedule_wakeup", { note: "pay invoice INV-2231", at: new Date(Date.now() + 3_600_000).toISOString() }),
      text("Done: a goal, a memory and a reminder."),
    );
    await postJson(app, ana, "/api/web/chat", { text: "plan baking every Friday; I'm allergic to peanuts; remind me to pay the invoice in an hour", clientMessageId: "m1" });
    const deadline = Date.now() + 15_000;
    type Now = { status: string; next: { at: string; words: string }[]; running: string[]; waitingOnYou: unknown[]; watching: string[] };
    let now: Now = await getJson<Now>(app, ana, "/api/web/now");
    while (now.next.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      now = await getJson<Now>(app, ana, "/api/web/now");
    }
    expect(now.next.map((n) => n.words)).toEqual(["Wake-up: “pay invoice INV-2231”", "Check-in: “Weekend baking project”"]);
    expect(new Date(now.next[1]!.at).getUTCDay()).toBe(5);
    expect(JSON.stringify(now)).not.toMatch(/conversation turn|on local/);

    const goals = await getJson<{ items: { title: string; checkIns: { schedule: string; next: string; past: unknown[] } }[] }>(app, ana, "/api/web/goals");
    expect(goals.items[0]!.checkIns).toMatchObject({ schedule: "Checks in at 09:00, only on Friday (Europe/Berlin)", next: now.next[1]!.at, past: [] });

    type Lines = { items: { summary: string; decision: string | null }[] };
    const all = await getJson<Lines>(app, ana, "/api/web/activity?limit=50");
    const summaries = all.items.map((i) => i.summary);
    expect(summaries).toEqual(expect.arrayContaining(["Remembered “Allergic to peanuts”", "Started the goal “Weekend baking project”", "Set a reminder: “pay invoice INV-2231”"]));
    // One line per action: no separate lines for the permission check and the result.
    expect(summaries.filter((s) => /peanuts/.test(s))).toHaveLength(1);
    expect(summaries.some((s) => /succeeded|Permission check|Tool result/.test(s))).toBe(false);
    const done = await getJson<Lines>(app, ana, "/api/web/activity?category=done&limit=50");
    expect(done.items.length).toBe(3);
    expect(done.items.every((i) => i.decision === "allow")).toBe(true);
    const messages = await getJson<Lines>(app, ana, "/api/web/activity?category=messages&limit=50");
    expect(messages.items.some((i) => i.summary.startsWith("Sent in the web chat: “Done: a goal"))).toBe(true);
    expect(messages.items.some((i) => /peanuts/.test(i.summary))).toBe(false);
    expect((await fetch(`${app.url}/api/web/activity?category=nope`, { headers: { cookie: ana.cookie } })).status).toBe(400);
  });
});
