import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type FakeResponse, type RecordedRequest } from "../fakes/openai-server.js";
import { FakeTelegramApi, updates, type FakeMessage } from "../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { lastTool, recordingServer as pageServer, sleep, userTexts } from "../helpers/e2e.js";

/**
 * The whole product through Telegram: `startTestApp` with TELEGRAM_BOT_TOKEN / TELEGRAM_API_ROOT
 * pointing at the fake Bot API, so the real grammY client long-polls (or, in webhook mode, the app
 * serves its own webhook route) over real HTTP; the model is the scripted OpenAI fake.
 */

const ANA = 42;
const STRANGER = 99;
/** The runtime's note to a resumed or woken activation ("Runtime: …"), if this request has one. */
const runtimeNote = (r: RecordedRequest) => {
  const m = r.messages.findLast((x) => x.role === "system" && typeof x.content === "string" && x.content.startsWith("Runtime:"));
  return m ? String(m.content) : null;
};

describe("Familiar on Telegram end to end (real grammY over HTTP against the fake Bot API)", () => {
  let fake: FakeTelegramApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  const cleanups: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await app?.close();
    app = null;
    for (const c of cleanups.splice(0).reverse()) await c();
    await fake?.close();
    fake = null;
    await model?.close();
    model = null;
  });

  /** Starts the fake Bot API, the scripted model and the app (long polling unless `env` sets a webhook). */
  async function start(fallback: (r: RecordedRequest) => FakeResponse | Promise<FakeResponse>, env: Record<string, string> = {}) {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback });
    app = await startTestApp({
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
      OPENAI_BASE_URL: model.url,
      ALLOW_FROM: `telegram:${ANA}`,
      ...env,
    });
    return { fake, model, app };
  }

  /** Messages the fake accepted for `chat` (sent or edited; edits applied). */
  const inChat = (chat: number): FakeMessage[] => fake!.messages.filter((m) => m.chatId === String(chat));

  /** Waits until a message in `chat` satisfies `match`; returns it. */
  async function messageIn(chat: number, match: (m: FakeMessage) => boolean, what: string, timeoutMs = 15_000): Promise<FakeMessage> {
    await fake!.waitFor(() => inChat(chat).some(match), timeoutMs, `${what} in chat ${chat}; have ${JSON.stringify(inChat(chat).map((m) => m.text))}`);
    return inChat(chat).find(match)!;
  }

  it("holds a conversation with an allowed user: a person is created, replies are rendered as Telegram HTML, the second message continues the conversation", async () => {
    const { fake, model, app } = await start((r) =>
      userTexts(r).length === 1 ? text("**Hello, Ana!** Fish & chips <3 it is.") : text("Your _second_ message: `noted`."),
    );

    fake.push(updates.text(ANA, "hi, I'm Ana and I love fish & chips", { name: "Ana" }));
    const first = await messageIn(ANA, (m) => m.text.startsWith("Hello, Ana!"), "the first reply");
    // Rendered for Telegram: markdown as HTML (parsed strictly by the fake), reserved characters escaped.
    expect(first.html).toBe("<b>Hello, Ana!</b> Fish &amp; chips &lt;3 it is.");
    expect(first.text).toBe("Hello, Ana! Fish & chips <3 it is.");
    expect(fake.callsOf("sendMessage").at(-1)!.payload).toMatchObject({ chat_id: String(ANA), parse_mode: "HTML" });

    const identity = await app.store.persons.findIdentity("telegram", String(ANA));
    expect(identity).toMatchObject({ channel: "telegram", accountId: String(ANA), address: String(ANA) });
    expect((await app.store.persons.getPerson(identity!.personId))!.displayName).toBe("Ana");

    fake.push(updates.text(ANA, "what did I just say?"));
    const second = await messageIn(ANA, (m) => m.text.startsWith("Your second"), "the second reply");
    expect(second.html).toBe("Your <i>second</i> message: <code>noted</code>.");

    // One conversation: the second model request carries both user messages, in order.
    expect(model.requests).toHaveLength(2);
    expect(userTexts(model.requests[1]!)).toEqual(["hi, I'm Ana and I love fish & chips", "what did I just say?"]);
    const conversation = await app.store.conversation.listRecentMessages(identity!.personId, 10);
    expect(conversation.map((m) => [m.role, m.channel])).toEqual([
      ["user", "telegram"],
      ["assistant", "telegram"],
      ["user", "telegram"],
      ["assistant", "telegram"],
    ]);
    expect(inChat(ANA).map((m) => m.text)).toEqual([first.text, second.text]);
  }, 30_000);

  it("runs an approval round trip on an inline keyboard: Approve once → answered, card edited, task resumed; a second press is harmless", async () => {
    const page = await pageServer("<html><body><h1>Flight deals</h1><p>Lisbon €89.</p></body></html>");
    cleanups.push(page.close);
    const { fake, model, app } = await start(
      (r) => {
        const note = runtimeNote(r);
        const tool = lastTool(r);
        if (tool === null && note && /approved/.test(note)) {
          // Approved: repeat the call that asked.
          const call = r.messages.findLast((m) => m.role === "assistant" && m.tool_calls?.length);
          const fn = call?.role === "assistant" ? call.tool_calls![0]! : null;
          if (fn?.type === "function") return toolCall(fn.function.name, fn.function.arguments);
        }
        if (tool === null) return toolCall("http_fetch", { url: `${page.url}/deals` });
        if (tool.includes("approval_required")) return text("I need your OK first.");
        return text(tool.includes("Lisbon") ? "Deals: **Lisbon €89**." : `unexpected: ${tool.slice(0, 100)}`);
      },
      { PRIVATE_HOSTS_ALLOWED: page.hostPort },
    );

    fake.push(updates.text(ANA, "what's on the flight deals page?"));
    const card = await messageIn(ANA, (m) => (m.replyMarkup?.inline_keyboard.length ?? 0) > 0, "the approval card");
    await messageIn(ANA, (m) => m.text === "I need your OK first.", "the model's note");
    expect(card.text).toContain("Familiar wants to read");
    expect(card.text).toContain(`Destination: ${page.url}/deals`);
    // Native buttons: an inline keyboard whose callback_data fits Telegram's 64 bytes.
    const buttons = card.replyMarkup!.inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(expect.arrayContaining(["Approve once", "This task", "Deny"]));
    for (const b of buttons) expect(Buffer.byteLength(b.callback_data!, "utf8")).toBeLessThanOrEqual(64);
    expect(page.received).toHaveLength(0);
    const identity = (await app.store.persons.findIdentity("telegram", String(ANA)))!;
    expect(await app.store.approvals.listPendingApprovals(identity.personId)).toHaveLength(1);

    const approveOnce = buttons.find((b) => b.text === "Approve once")!.callback_data!;
    fake.push(updates.press(ANA, approveOnce, { messageId: card.messageId, queryId: "press-1" }));
    const pressedAt = Date.now();
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").length === 1, 5_000, "answerCallbackQuery");
    const answer = fake.callsOf("answerCallbackQuery")[0]!;
    expect(answer.payload).toMatchObject({ callback_query_id: "press-1", text: "Approved once." });
    expect(answer.at - pressedAt).toBeLessThan(1_500);

    // The card is edited in place to show the decision, with its keyboard removed.
    await messageIn(ANA, (m) => m.messageId === card.messageId && m.text.includes("✅ Approved once"), "the edited card");
    expect(inChat(ANA).find((m) => m.messageId === card.messageId)!.replyMarkup).toEqual({ inline_keyboard: [] });
    const edit = fake.callsOf("editMessageText").find((c) => c.payload.message_id === card.messageId);
    expect(edit?.payload.chat_id).toBe(String(ANA));

    // The task resumes, the page is fetched once, the reply arrives.
    const reply = await messageIn(ANA, (m) => m.text === "Deals: Lisbon €89.", "the resumed reply");
    expect(reply.html).toBe("Deals: <b>Lisbon €89</b>.");
    expect(page.received).toEqual([{ method: "GET", path: "/deals" }]);
    expect(await app.store.approvals.listPendingApprovals(identity.personId)).toHaveLength(0);

    // A second press on the same card: answered with a notice, nothing runs again.
    const requestsBefore = model.requests.length;
    const messagesBefore = inChat(ANA).map((m) => [m.messageId, m.text]);
    fake.push(updates.press(ANA, approveOnce, { messageId: card.messageId, queryId: "press-2" }));
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").length === 2, 5_000, "the second answerCallbackQuery");
    expect(fake.callsOf("answerCallbackQuery")[1]!.payload).toMatchObject({ callback_query_id: "press-2", text: "This request was already approved." });
    await sleep(1_000);
    expect(model.requests.length).toBe(requestsBefore);
    expect(page.received).toHaveLength(1);
    expect(inChat(ANA).map((m) => [m.messageId, m.text])).toEqual(messagesBefore);
    expect(inChat(ANA).filter((m) => m.text === "Deals: Lisbon €89.")).toHaveLength(1);
  }, 40_000);

  it("shows the arguments on the card exactly as the model gave them (markdown in them is not rendered), and Deny sends nothing", async () => {
    const outside = await pageServer("thanks");
    cleanups.push(outside.close);
    const body = "Ana*s daughter* is [Mia](http://evil.example) _see_ `x`";
    const { fake } = await start(
      (r) => {
        const tool = lastTool(r);
        if (runtimeNote(r)?.includes("denied")) return text("Understood, I did not send anything.");
        if (tool === null) return toolCall("http_request", { method: "POST", url: `${outside.url}/collect`, body });
        return text("I need your OK first.");
      },
      { PRIVATE_HOSTS_ALLOWED: outside.hostPort },
    );

    fake.push(updates.text(ANA, "post the note"));
    const card = await messageIn(ANA, (m) => (m.replyMarkup?.inline_keyboard.length ?? 0) > 0, "the approval card");
    // What the person approves is what runs: no link text hiding evil.example, no swallowed asterisks.
    expect(card.text).toContain(body);
    expect(card.html).not.toContain(`href="http://evil.example`);
    const deny = card.replyMarkup!.inline_keyboard.flat().find((b) => b.text === "Deny")!.callback_data!;
    fake.push(updates.press(ANA, deny, { messageId: card.messageId }));
    await messageIn(ANA, (m) => m.text === "Understood, I did not send anything.", "the model's answer after Deny");
    const edited = inChat(ANA).find((m) => m.messageId === card.messageId)!;
    expect(edited.text).toContain("❌ Denied");
    expect(edited.text).toContain(body);
    expect(fake.callsOf("answerCallbackQuery").at(-1)!.payload).toMatchObject({ text: "Denied. Nothing was done." });
    expect(outside.received).toHaveLength(0);
  }, 30_000);

  it("delivers a reminder Familiar sends on its own through Telegram", async () => {
    const { fake, model } = await start((r) => {
      const note = runtimeNote(r);
      if (note?.includes("stretch") && lastTool(r) === null) return text("⏰ Time to **stretch**!");
      if (lastTool(r) !== null) return text("Okay — I'll remind you in 2 seconds.");
      return toolCall("schedule_wakeup", { note: "stretch", at: new Date(Date.now() + 2_000).toISOString(), notify: "always" });
    });

    fake.push(updates.text(ANA, "remind me in 2 seconds to stretch"));
    await messageIn(ANA, (m) => m.text === "Okay — I'll remind you in 2 seconds.", "the confirmation");
    const reminder = await messageIn(ANA, (m) => m.text === "⏰ Time to stretch!", "the reminder", 20_000);
    expect(reminder.html).toBe("⏰ Time to <b>stretch</b>!");
    // Familiar wrote first: one inbound message, two outbound ones; the wake-up's model call had no new user text.
    const wake = model.requests.find((r) => runtimeNote(r)?.includes("stretch") && lastTool(r) === null)!;
    expect(userTexts(wake)).toEqual(["remind me in 2 seconds to stretch"]);
    expect(inChat(ANA).map((m) => m.text)).toEqual(["Okay — I'll remind you in 2 seconds.", "⏰ Time to stretch!"]);
    await sleep(1_500);
    expect(inChat(ANA).filter((m) => m.text === "⏰ Time to stretch!")).toHaveLength(1);
  }, 40_000);

  it("pairs an unknown user: a one-time code through Telegram, nothing reaches the model, /pair from the local chat lets them in", async () => {
    const { fake, model, app } = await start((r) => text(`Hi Bo, you said: ${r.lastUserText}`));

    fake.push(updates.text(STRANGER, "hello? who are you", { name: "Bo" }));
    const offer = await messageIn(STRANGER, (m) => /pairing code is [A-Z0-9]{8}\b/.test(m.text), "the pairing code");
    const code = /pairing code is ([A-Z0-9]{8})\b/.exec(offer.text)![1]!;
    expect(offer.text).toContain(`/pair ${code}`);
    // Writing again gets no second code and still nothing reaches the model.
    const again = fake.push(updates.text(STRANGER, "hello???", { name: "Bo" }));
    await fake.waitFor(() => fake.confirmedOffset > again.update_id, 5_000, "both updates handled and confirmed");
    expect(inChat(STRANGER)).toHaveLength(1);
    expect(model.requests).toHaveLength(0);
    expect(await app.store.persons.findIdentity("telegram", String(STRANGER))).toBeNull();

    expect((await app.say("owner", `/pair ${code.toLowerCase()}`)).status).toBe(202);
    const [confirmation] = await app.replies("owner", 1);
    expect(confirmation!.text).toBe("Paired Bo (telegram).");
    await messageIn(STRANGER, (m) => m.text === "You're paired — say hello!", "the paired notice");

    fake.push(updates.text(STRANGER, "hello again", { name: "Bo" }));
    await messageIn(STRANGER, (m) => m.text === "Hi Bo, you said: hello again", "the model's reply");
    // The message sent before pairing never reached the model.
    expect(model.requests).toHaveLength(1);
    expect(userTexts(model.requests[0]!)).toEqual(["hello again"]);
    const identity = (await app.store.persons.findIdentity("telegram", String(STRANGER)))!;
    expect((await app.store.persons.getPerson(identity.personId))!.displayName).toBe("Bo");
    // A used code cannot pair anyone again.
    await app.say("owner", `/pair ${code}`);
    const after = await app.replies("owner", 2);
    expect(after[1]!.text).not.toContain("Paired");
  }, 30_000);

  it("links a Telegram account to a local-chat person with /link: the model then sees the earlier local messages", async () => {
    const { fake, model, app } = await start((r) => text(`(${userTexts(r).length} messages so far) ok`));
    const CARLA = 55;

    await app.say("carla", "my sister's name is Dora");
    await app.replies("carla", 1);
    await app.say("carla", "/link");
    const replies = await app.replies("carla", 2);
    const code = /within 10 minutes: ([A-Z0-9]{6})$/.exec(replies[1]!.text)?.[1];
    expect(code, replies[1]!.text).toBeDefined();

    fake.push(updates.text(CARLA, code!, { name: "Carla" }));
    await messageIn(CARLA, (m) => m.text.startsWith("Linked!"), "the link confirmation");
    const local = (await app.store.persons.findIdentity("local", "carla"))!;
    expect((await app.store.persons.findIdentity("telegram", String(CARLA)))?.personId).toBe(local.personId);
    expect(model.requests).toHaveLength(1); // the code itself is not a turn

    fake.push(updates.text(CARLA, "what's my sister's name?", { name: "Carla" }));
    const reply = await messageIn(CARLA, (m) => m.text.endsWith(" ok"), "the reply on Telegram");
    expect(reply.text).toBe("(2 messages so far) ok");
    expect(userTexts(model.requests[1]!)).toEqual(["my sister's name is Dora", "what's my sister's name?"]);
    // The reply went to Telegram, where the person wrote last, not to the local chat.
    await sleep(300);
    expect((await app.store.localMailbox.listLocalMessages("carla", 0, 100)).map((m) => m.text)).toEqual([replies[0]!.text, replies[1]!.text]);
  }, 30_000);

  it("a /link code made on Telegram is used from the local chat: the browser joins the Telegram conversation", async () => {
    const { fake, model, app } = await start((r) => text(`(${userTexts(r).join(" | ")}) ok`));
    fake.push(updates.text(ANA, "my bike is blue", { name: "Ana" }));
    await messageIn(ANA, (m) => m.text.endsWith(" ok"), "the first reply");
    fake.push(updates.text(ANA, "/link"));
    const shown = await messageIn(ANA, (m) => /within 10 minutes: [A-Z0-9]{6}$/.test(m.text), "the code");
    const code = /([A-Z0-9]{6})$/.exec(shown.text)![1]!;

    await app.say("ana-browser", `/link ${code}`);
    const [linked] = await app.replies("ana-browser", 1);
    expect(linked!.text).toMatch(/^Linked! This local chat account now shares your conversation/);
    const telegram = (await app.store.persons.findIdentity("telegram", String(ANA)))!;
    expect((await app.store.persons.findIdentity("local", "ana-browser"))?.personId).toBe(telegram.personId);
    expect((await app.store.persons.listPersons()).items).toHaveLength(1);
    expect(model.requests).toHaveLength(1);

    await app.say("ana-browser", "what colour is my bike?");
    const replies = await app.replies("ana-browser", 2);
    expect(replies[1]!.text).toBe("(my bike is blue | what colour is my bike?) ok");
  }, 30_000);

  it("answers an unknown /command with the help text, without a model call", async () => {
    const { fake, model } = await start(() => text("model answer"));
    fake.push(updates.text(ANA, "/weather Lisbon"));
    const help = await messageIn(ANA, (m) => m.text.includes("/weather"), "the help text");
    expect(help.text).toMatch(/don't know the command \/weather/);
    expect(help.text).toContain("/link");
    await sleep(300);
    expect(model.requests).toHaveLength(0);
  }, 30_000);

  it("in webhook mode answers redeliveries of an update fast and runs one turn with one reply, also after a restart (T4, T5 on the real core)", async () => {
    const secret = "e2e-webhook-secret_0123456789";
    const dataDir = mkdtempSync(join(tmpdir(), "familiar-tg-e2e-"));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const env = { TELEGRAM_WEBHOOK_URL: "https://familiar.example.com/telegram/webhook", TELEGRAM_WEBHOOK_SECRET: secret, DATA_DIR: dataDir };
    const started = await start(async () => {
      await gate; // the turn is slow (45 s in the field case) until released
      return text("Booked: table for two at 8.");
    }, env);
    const { fake, model } = started;
    expect(fake.webhook).toMatchObject({ url: env.TELEGRAM_WEBHOOK_URL, secretToken: secret });
    expect(fake.callsOf("getUpdates")).toHaveLength(0);

    const post = async (body: unknown, secretHeader: string) => {
      const t0 = Date.now();
      const res = await fetch(`${app!.url}/telegram/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secretHeader },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5_000),
      });
      return { status: res.status, ms: Date.now() - t0 };
    };

    // No clock time in it: a person whose zone is only the default would first be asked for it.
    const body = fake.build(updates.text(ANA, "book a table for two, please"));
    expect((await post(body, "wrong-secret_0123456789")).status).toBe(401);
    const first = await post(body, secret);
    await fake.waitFor(() => model.requests.length === 1, 5_000, "the turn's model call");
    // Telegram redelivers while the turn still runs (+10 s, +22 s in the field case).
    const again = [await post(body, secret), await post(body, secret)];
    for (const a of [first, ...again]) {
      expect(a.status).toBe(200);
      expect(a.ms).toBeLessThan(1_000);
    }
    release();
    await messageIn(ANA, (m) => m.text === "Booked: table for two at 8.", "the reply");
    await sleep(500);
    expect(model.requests).toHaveLength(1);
    expect(inChat(ANA)).toHaveLength(1);

    // Restart on the same data; Telegram posts the very same update once more.
    await app!.stop();
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}`, ...env });
    const redelivered = await post(body, secret);
    expect(redelivered.status).toBe(200);
    await sleep(1_000);
    expect(model.requests).toHaveLength(1);
    expect(inChat(ANA).map((m) => m.text)).toEqual(["Booked: table for two at 8."]);
    const identity = (await app.store.persons.findIdentity("telegram", String(ANA)))!;
    const conversation = await app.store.conversation.listRecentMessages(identity.personId, 10);
    expect(conversation.map((m) => m.role)).toEqual(["user", "assistant"]);
  }, 40_000);
});
