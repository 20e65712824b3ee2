import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../fakes/openai-server.js";
import { runDueAt, startTestApp, TestClock, type TestApp } from "../helpers/app.js";
import { sleep, userTexts } from "../helpers/e2e.js";

/**
 * Issue 18 item 7: the inbound rate limit, through the local web chat API (real HTTP) with the
 * scripted OpenAI fake. A flood from one sender gives at most the limit's model calls in the
 * window and one "slow down" notice; nothing is lost: the rest is answered when the window opens.
 */

const SLOW_DOWN = "faster than I can read them";

describe("inbound rate limit (issue 18 item 7)", () => {
  let app: TestApp | null = null;
  let model: FakeOpenAIServer | null = null;

  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
  });

  /** Waits until the model has been quiet for `quietMs` and no task is running. */
  async function settle(quietMs = 600): Promise<void> {
    let seen = -1;
    for (;;) {
      const now = model!.requests.length;
      if (now === seen && app!.familiar.taskLoop.active === 0) return;
      seen = now;
      await sleep(quietMs);
    }
  }

  it("200 messages from one sender: at most the limit's model calls in the window, exactly one notice, the rest answered when the window opens", async () => {
    const clock = new TestClock();
    model = await startFakeOpenAI({ fallback: () => text("noted") });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, INBOUND_LIMIT_PER_SENDER: "5", INBOUND_LIMIT_PER_CHAT: "50", INBOUND_LIMIT_GLOBAL: "50", INBOUND_LIMIT_WINDOW_SECONDS: "60" }, { clock });

    for (let i = 1; i <= 200; i++) {
      const res = await app.say("ana", `message ${i}`);
      expect(res.status).toBeLessThan(300);
    }
    await settle();

    expect(model.requests.length).toBeGreaterThan(0);
    expect(model.requests.length).toBeLessThanOrEqual(5);
    const replies = await app.repliesUntil("ana", (m) => m.some((x) => x.text.includes(SLOW_DOWN)));
    expect(replies.filter((m) => m.text.includes(SLOW_DOWN))).toHaveLength(1);
    // Every message is kept in the conversation, none dropped.
    const identity = await app.store.persons.findIdentity("local", "ana");
    const history = await app.store.conversation.listRecentMessages(identity!.personId, 1000);
    expect(history.filter((m) => m.role === "user")).toHaveLength(200);

    // The window opens: the waiting turn runs once and reads the last message of the flood.
    const before = model.requests.length;
    await runDueAt(app, clock, new Date(clock.now().getTime() + 61_000));
    await settle();
    expect(model.requests.length).toBe(before + 1);
    expect(userTexts(model.requests.at(-1)!).join("\n")).toContain("message 200");
    const after = await app.repliesUntil("ana", (m) => m.filter((x) => x.text === "noted").length > 0);
    expect(after.filter((m) => m.text.includes(SLOW_DOWN))).toHaveLength(1);
  });
});
