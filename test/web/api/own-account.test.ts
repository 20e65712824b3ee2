import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../../fakes/openai-server.js";
import { FAKE_BOT, FakeTelegramApi, updates } from "../../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { getJson, postJson, signIn, type WebSession } from "../../helpers/web.js";

/** Issue 19 item 7: the owner connects their own Telegram from the setup page (no pairing, no second person); others' requests reach the owner as a card. */


interface ChatItem {
  id: string;
  role: string;
  channel: string;
  text: string;
  buttons: { id: string; label: string }[];
}



async function chatUntil(app: TestApp, s: WebSession, predicate: (items: ChatItem[]) => boolean, what: string): Promise<ChatItem[]> {
  const end = Date.now() + 15_000;
  for (;;) {
    const { items } = await getJson<{ items: ChatItem[] }>(app, s, "/api/web/chat");
    if (predicate(items)) return items;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(items.map((i) => i.text))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

type SetupJson = { messengers: { channel: string; state: string; bot: { name: string; handle: string | null; url: string | null } | null; yourAccounts: string[] }[] };

describe("connecting one's own messenger from the setup page", () => {
  let fake: FakeTelegramApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  afterEach(async () => {
    await app?.close();
    await fake?.close();
    await model?.close();
    app = fake = model = null;
  });

  it("names the bot, gives a code whose t.me link joins the owner's own Telegram account to the same person, with no pairing", async () => {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback: text("Hello again") });
    app = await startTestApp({ TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url });
    const owner = await signIn(app, "Ana");
    expect((await postJson(app, owner, "/api/web/setup/messengers/telegram/code", {})).status).toBe(409); // not running yet
    expect((await postJson(app, owner, "/api/web/setup/messengers/telegram", { token: fake.token })).status).toBe(200);

    const setup = await getJson<SetupJson>(app, owner, "/api/web/setup");
    const telegram = setup.messengers.find((m) => m.channel === "telegram")!;
    expect(telegram).toMatchObject({ state: "running", yourAccounts: [], bot: { name: FAKE_BOT.first_name, handle: `@${FAKE_BOT.username}`, url: `https://t.me/${FAKE_BOT.username}` } });

    const answer = await postJson(app, owner, "/api/web/setup/messengers/telegram/code", {});
    expect(answer.status).toBe(200);
    const code = (await answer.json()) as { code: string; openUrl: string; expiresInMinutes: number };
    expect(code.openUrl).toBe(`https://t.me/${FAKE_BOT.username}?start=${code.code}`);
    expect(code.expiresInMinutes).toBe(10);

    // Opening the link and pressing Start sends "/start CODE" from the owner's own (unknown) account.
    fake.push(updates.text(4242, `/start ${code.code}`));
    await fake.waitFor(() => fake!.messages.some((m) => m.chatId === "4242" && m.text.startsWith("Linked!")), 15_000, "the link confirmation");
    expect(fake.messages.some((m) => /pairing code/i.test(m.text))).toBe(false);
    const after = await getJson<SetupJson>(app, owner, "/api/web/setup");
    expect(after.messengers.find((m) => m.channel === "telegram")!.yourAccounts).toEqual(["4242"]);

    // One person: what Ana says on Telegram is in her web conversation, and the model sees both.
    await postJson(app, owner, "/api/web/chat", { text: "said on the web first", clientMessageId: "w1" });
    await chatUntil(app, owner, (items) => items.some((i) => i.role === "assistant" && i.channel === "local"), "the web reply");
    fake.push(updates.text(4242, "and now from my phone"));
    await fake.waitFor(() => fake!.messages.some((m) => m.chatId === "4242" && m.text === "Hello again"), 15_000, "the Telegram reply");
    expect(model.requests.at(-1)!.messages.some((m) => m.role === "user" && String(m.content).includes("said on the web first"))).toBe(true);
    const chat = await chatUntil(app, owner, (items) => items.some((i) => i.channel === "telegram" && i.text === "and now from my phone"), "the Telegram message in the web chat");
    expect(chat.filter((i) => i.role === "user").map((i) => i.channel)).toEqual(expect.arrayContaining(["local", "telegram"]));
  });

  it("asks the owner with a card in the web chat when someone else writes; Approve pairs them, Decline does not, and /pair lists codes", async () => {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback: text("Hi") });
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url });
    const owner = await signIn(app, "Ana");
    await postJson(app, owner, "/api/web/chat", { text: "hello", clientMessageId: "w1" });
    await chatUntil(app, owner, (items) => items.some((i) => i.role === "assistant"), "the first reply");

    fake.push(updates.text(501, "hi, I'm Ben", { name: "Ben" }));
    await fake.waitFor(() => fake!.messages.some((m) => m.chatId === "501" && /pairing code is [A-Z0-9]{8}/.test(m.text)), 15_000, "Ben's pairing code");
    const benCode = /pairing code is ([A-Z0-9]{8})/.exec(fake.messages.find((m) => m.chatId === "501")!.text)![1]!;
    fake.push(updates.text(502, "hello?", { name: "Cleo" }));
    await fake.waitFor(() => fake!.messages.some((m) => m.chatId === "502" && /pairing code/.test(m.text)), 15_000, "Cleo's pairing code");

    const cards = await chatUntil(app, owner, (items) => items.filter((i) => i.buttons.some((b) => b.id.startsWith("pair:"))).length === 2, "two pairing cards");
    const benCard = cards.find((i) => i.text.includes("Ben"))!;
    expect(benCard.text).toMatch(/Ben wants to talk to Familiar on telegram/);
    expect(benCard.buttons.map((b) => b.label)).toEqual(["Approve pairing", "Decline"]);

    // /pair alone lists who waits, each with the code that approves them.
    await postJson(app, owner, "/api/web/chat", { text: "/pair", clientMessageId: "w2" });
    const listed = await chatUntil(app, owner, (items) => items.some((i) => i.text.startsWith("Waiting to be paired")), "the /pair list");
    const list = listed.find((i) => i.text.startsWith("Waiting to be paired"))!.text;
    expect(list).toContain(`Ben on telegram (501): /pair ${benCode}`);
    expect(list).toMatch(/Cleo on telegram \(502\): \/pair [A-Z0-9]{8}/);

    const approve = await postJson(app, owner, "/api/web/chat/press", { messageId: benCard.id, buttonId: benCard.buttons[0]!.id, clientActionId: "p1" });
    expect(((await approve.json()) as { notice: string }).notice).toBe("Paired Ben (telegram).");
    await fake.waitFor(() => fake!.messages.some((m) => m.chatId === "501" && m.text === "You're paired — say hello!"), 15_000, "Ben is told");
    fake.push(updates.text(501, "great, hello"));
    await fake.waitFor(() => fake!.messages.some((m) => m.chatId === "501" && m.text === "Hi"), 15_000, "Ben is answered");
    // The card shows the outcome and has no buttons left.
    await chatUntil(app, owner, (items) => items.some((i) => i.text === "Paired Ben (telegram)." && i.buttons.length === 0), "Ben's card edited");

    const cleoCard = (await getJson<{ items: ChatItem[] }>(app, owner, "/api/web/chat")).items.find((i) => i.text.includes("Cleo") && i.buttons.length > 0)!;
    const decline = await postJson(app, owner, "/api/web/chat/press", { messageId: cleoCard.id, buttonId: cleoCard.buttons[1]!.id, clientActionId: "p2" });
    expect(((await decline.json()) as { notice: string }).notice).toMatch(/^Declined: Cleo/);
    const before = fake.messages.filter((m) => m.chatId === "502").length;
    fake.push(updates.text(502, "still there?"));
    // Declined: Cleo is a stranger again (a new code, never a model reply).
    await fake.waitFor(() => fake!.messages.filter((m) => m.chatId === "502").length > before, 15_000, "Cleo's new pairing code");
    expect(fake.messages.filter((m) => m.chatId === "502").every((m) => /pairing code/.test(m.text))).toBe(true);
  });
});
