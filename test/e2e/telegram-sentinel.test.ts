/**
 * Sentinel's rules through Telegram: the real grammY client against the fake Bot API. Presses are
 * raw callback queries here, so a forged `callback_data`, a press replayed on another message, and
 * who may act at the door (pairings, groups, the webhook) are tested the way an attacker would try.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { FakeTelegramApi, TEXT_LIMIT, updates, type FakeMessage } from "../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { lastTool, recordingServer, sleep } from "../helpers/e2e.js";

const ANA = 42; // the owner (first ALLOW_FROM entry)
const CARL = 43; // allowed, not the owner
const STRANGER = 99;
const GROUP = -1001234;

const runtimeNote = (r: RecordedRequest): string | null => {
  const last = r.messages.at(-1);
  return last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:") ? last.content : null;
};
const lastUser = (r: RecordedRequest) => String([...r.messages].reverse().find((m) => m.role === "user")?.content ?? "");

describe("Sentinel through Telegram (real grammY against the fake Bot API)", () => {
  let fake: FakeTelegramApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let outside: Awaited<ReturnType<typeof recordingServer>> | null = null;

  afterEach(async () => {
    await app?.close();
    app = null;
    await fake?.close();
    await model?.close();
    await outside?.close();
  });

  /** Tool arguments the scripted model writes itself, by name (`CALL <tool> @<name>`). */
  const prepared = new Map<string, Record<string, unknown>>();

  /** A model that runs `CALL <tool> <json>` from the person's message and repeats its call after an approval. */
  async function start(env: Record<string, string> = {}) {
    fake = await FakeTelegramApi.start();
    outside = await recordingServer(() => ({ status: 200, body: "ok", type: "text/plain" }));
    model = await startFakeOpenAI({
      fallback: (r) => {
        const note = runtimeNote(r);
        if (note && /approved/.test(note)) {
          const call = [...r.messages].reverse().find((m) => m.role === "assistant" && m.tool_calls?.length);
          const fn = call?.role === "assistant" ? call.tool_calls![0]! : null;
          if (fn?.type === "function") return toolCall(fn.function.name, fn.function.arguments);
        }
        if (note) return text("noted");
        const tool = lastTool(r);
        if (tool !== null) return text(tool.includes("approval_required") ? "I need your OK first." : `result: ${/HTTP \d+/.exec(tool)?.[0] ?? "?"}`);
        const m = /^CALL (\w+) (.*)$/s.exec(lastUser(r));
        if (!m) return text(`echo: ${lastUser(r)}`);
        // `@name`: arguments prepared by the test (the model writes them: longer than a Telegram message may be).
        return toolCall(m[1]!, m[2]!.startsWith("@") ? prepared.get(m[2]!.slice(1))! : m[2]!);
      },
    });
    app = await startTestApp({
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
      OPENAI_BASE_URL: model.url,
      ALLOW_FROM: `telegram:${ANA},telegram:${CARL}`,
      ALLOW_GROUPS: `telegram:${GROUP}`,
      PRIVATE_HOSTS_ALLOWED: outside.hostPort,
      ...env,
    });
    return { fake, app, outside };
  }
  const inChat = (chat: number): FakeMessage[] => fake!.messages.filter((m) => m.chatId === String(chat));
  async function messageIn(chat: number, match: (m: FakeMessage) => boolean, what: string, timeoutMs = 15_000): Promise<FakeMessage> {
    await fake!.waitFor(() => inChat(chat).some(match), timeoutMs, `${what} in chat ${chat}; have ${JSON.stringify(inChat(chat).map((m) => m.text.slice(0, 80)))}`);
    return inChat(chat).find(match)!;
  }
  const cards = (chat: number) => inChat(chat).filter((m) => (m.replyMarkup?.inline_keyboard.length ?? 0) > 0);
  const button = (card: FakeMessage, label: string) => card.replyMarkup!.inline_keyboard.flat().find((b) => b.text.startsWith(label))!.callback_data!;
  const call = (tool: string, args: Record<string, unknown>) => `CALL ${tool} ${JSON.stringify(args)}`;

  it("approve once, then another method or path asks again; forged and replayed presses change nothing", async () => {
    const { fake, outside } = await start();
    fake.push(updates.text(ANA, call("http_request", { method: "POST", url: `${outside.url}/notes`, body: "milk" })));
    const first = await messageIn(ANA, (m) => (m.replyMarkup?.inline_keyboard.length ?? 0) > 0, "the first card");
    expect(first.text).toContain("Familiar wants to send data to");
    expect(first.text).toContain(`Destination: ${outside.url}/notes`);
    const once = button(first, "Approve once");
    const always = button(first, "Always");

    // Forged callback data on the card: unknown button, nothing decided.
    fake.push(updates.press(ANA, "ap:AAAAAAAAAAAAAAAAAAAAAA", { messageId: first.messageId, queryId: "forged" }));
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").some((c) => c.payload.callback_query_id === "forged"));
    expect(fake.callsOf("answerCallbackQuery").find((c) => c.payload.callback_query_id === "forged")!.payload.text).toBe("This button is not recognized; nothing was done.");
    // A real button of this card pressed on another message (another message id): refused.
    fake.push(updates.press(ANA, always, { messageId: first.messageId + 1000, queryId: "moved" }));
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").some((c) => c.payload.callback_query_id === "moved"));
    expect(fake.callsOf("answerCallbackQuery").find((c) => c.payload.callback_query_id === "moved")!.payload.text).toBe("That button does not belong to this message; nothing was done.");
    // Pressed from a group chat (same message id): refused too.
    fake.push(updates.press(ANA, always, { messageId: first.messageId, chatId: GROUP, queryId: "group" }));
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").some((c) => c.payload.callback_query_id === "group"));
    await sleep(300);
    expect(outside.received).toHaveLength(0);

    fake.push(updates.press(ANA, once, { messageId: first.messageId, queryId: "once" }));
    await messageIn(ANA, (m) => m.text === "result: HTTP 200", "the approved call's result");
    expect(outside.received).toEqual([{ method: "POST", path: "/notes" }]);
    // A replay of the same press after the decision: told so, nothing runs again.
    fake.push(updates.press(ANA, once, { messageId: first.messageId, queryId: "replay" }));
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").some((c) => c.payload.callback_query_id === "replay"));
    expect(fake.callsOf("answerCallbackQuery").find((c) => c.payload.callback_query_id === "replay")!.payload.text).toBe("This request was already approved.");

    // Another method and path on the same host, with another body and an extra header: a new card.
    fake.push(updates.text(ANA, call("http_request", { method: "DELETE", url: `${outside.url}/account/delete`, body: "everything", headers: { "X-Extra": "1" } })));
    await fake.waitFor(() => cards(ANA).length === 1 && cards(ANA)[0]!.messageId !== first.messageId, 15_000, "a second card");
    expect(cards(ANA)[0]!.text).toContain("Familiar wants to delete");
    await sleep(300);
    expect(outside.received).toHaveLength(1);
    const audit = await app!.store.audit.listAudit((await app!.store.persons.findIdentity("telegram", String(ANA)))!.personId, { kinds: ["approval.press_rejected"], limit: 50 });
    expect(audit.items.map((e) => (e.data as { refusal: string }).refusal).sort()).toEqual(["already_decided", "unknown_button", "wrong_place", "wrong_place"]);
  }, 60_000);

  it("the card for a padded, encoded, bidi-laced request shows the real destination and body within Telegram's limits", async () => {
    const { fake, outside } = await start();
    const body = `${" ".repeat(20_000)}{"msg":"\u202Edlrow olleh\u202C","data":"${Buffer.from("Ana's PIN is 4921").toString("base64")}"}`;
    // The model writes the request (as it would after reading a page that told it to): 20,000 characters of padding.
    prepared.set("padded", { method: "POST", url: `${outside.url}/x\u202E/y`, body });
    fake.push(updates.text(ANA, "CALL http_request @padded"));
    const card = await messageIn(ANA, (m) => (m.replyMarkup?.inline_keyboard.length ?? 0) > 0, "the card");
    expect(card.text.length).toBeLessThanOrEqual(TEXT_LIMIT);
    expect(card.text).toContain(`Destination: ${outside.url}/x%E2%80%AE/y`);
    expect(card.text).toContain('"msg": "⟦U+202E⟧dlrow olleh⟦U+202C⟧"');
    expect(card.text).toContain(`data: base64 → "Ana's PIN is 4921"`);
    expect(card.text).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B]/);
    expect(card.html).not.toContain("<a ");
  }, 60_000);

  it("only the owner approves pairings; a person paired in a DM is not served in a group until the owner adds them", async () => {
    const { fake, app } = await start();
    fake.push(updates.text(STRANGER, "hi", { name: "Bo" }));
    const offer = await messageIn(STRANGER, (m) => /pairing code is [A-Z0-9]{8}/.test(m.text), "the pairing code");
    const code = /pairing code is ([A-Z0-9]{8})/.exec(offer.text)![1]!;

    // Carl is allowed to talk, but not the owner: his /pair is refused (and audited).
    fake.push(updates.text(CARL, `/pair ${code}`, { name: "Carl" }));
    await messageIn(CARL, (m) => m.text.startsWith("Only the owner"), "the refusal");
    expect(await app.store.persons.findIdentity("telegram", String(STRANGER))).toBeNull();
    fake.push(updates.text(ANA, `/pair ${code}`, { name: "Ana" }));
    await messageIn(ANA, (m) => m.text === "Paired Bo (telegram).", "the owner's pairing");
    await messageIn(STRANGER, (m) => m.text === "You're paired — say hello!", "the paired notice");

    // Bo is served in his DM, not in the group.
    const mention = (from: number, words: string) => updates.text(from, `@familiar_test_bot ${words}`, { chatId: GROUP, entities: [{ type: "mention", offset: 0, length: 18 }], name: "x" });
    fake.push(mention(STRANGER, "what's up"));
    fake.push(updates.text(STRANGER, "and in private?", { name: "Bo" }));
    await messageIn(STRANGER, (m) => m.text === "echo: and in private?", "the DM answer");
    await sleep(500);
    expect(inChat(STRANGER).some((m) => m.text === "echo: what's up")).toBe(false);
    // The owner is served in the group by default; Carl, allowed in DMs, is not.
    fake.push(mention(ANA, "owner here"));
    await messageIn(ANA, (m) => m.text === "echo: owner here", "the owner's answer");
    fake.push(mention(CARL, "me too"));
    await sleep(800);
    expect(inChat(CARL).some((m) => m.text === "echo: me too")).toBe(false);

    // The owner adds Bo to the group's member list: now he is served there.
    fake.push(updates.text(ANA, `/group add telegram:${GROUP} telegram:${STRANGER}`, { name: "Ana" }));
    await messageIn(ANA, (m) => m.text.startsWith("Done:"), "the group change");
    fake.push(mention(STRANGER, "now?"));
    await messageIn(STRANGER, (m) => m.text === "echo: now?", "Bo's group answer");
    const refused = await app.store.audit.listAudit((await app.store.persons.findIdentity("telegram", String(CARL)))!.personId, { kinds: ["pairing.refused", "inbound.refused"] });
    expect(refused.items.map((e) => e.kind).sort()).toEqual(["inbound.refused", "pairing.refused"]);
  }, 60_000);
});
