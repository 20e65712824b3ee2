import { send } from "../helpers/send.js";
import { afterEach, describe, expect, it } from "vitest";
import { createTelegramChannel, type TelegramChannelOptions } from "../../bots/telegram/channel.js";
import { HttpServer } from "../../web/http/server.js";
import { DeliveryError, type InboundMessage } from "../../core/channels/port.js";
import { FakeTelegramApi, FAKE_BOT, updates } from "../fakes/telegram-api.js";
import { captureLogger, deferred, recordingSink, memoryJournal } from "../fakes/telegram-sinks.js";

/** The Telegram channel beyond the field cases: which chats are read, start errors, limits, edits. */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: Partial<TelegramChannelOptions> = {}) {
  const fake = await FakeTelegramApi.start();
  const log = captureLogger();
  const journal = memoryJournal();
  const channel = createTelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, logger: log.logger, polling: { timeoutSeconds: 5 }, journal: journal.journal, ...options });
  cleanups.push(() => fake.close());
  cleanups.push(() => channel.stop());
  return { fake, channel, log, journal };
}

const chat = (id: number) => ({ accountId: String(id), address: String(id) });
const mention = `@${FAKE_BOT.username}`;

describe("inbound", () => {
  it("reads every DM, and group messages only in ALLOW_GROUPS chats that mention the bot", async () => {
    const { fake, channel, journal } = await setup({ groups: ["-100123"] });
    const { sink, events } = recordingSink();
    await channel.start(sink);

    fake.push(updates.text(42, "hello", { name: "Ana" }));
    fake.push(updates.text(55, "just chatting", { chatId: -100123 }));
    fake.push(updates.text(55, `${mention}  what's up?`, { chatId: -100123, entities: [{ type: "mention", offset: 0, length: mention.length }] }));
    fake.push(updates.text(55, `${mention} hi`, { chatId: -100999, entities: [{ type: "mention", offset: 0, length: mention.length }] }));
    fake.push(updates.text(55, `/status${mention}`, { chatId: -100123, entities: [{ type: "bot_command", offset: 0, length: 7 + mention.length }] }));
    fake.push(updates.press(55, "ap:x:once", { chatId: -100999, queryId: "stranger" }));
    const last = fake.push(updates.text(42, "done"));
    // The press from a group Familiar does not read is answered (its spinner stops) and dropped.
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").length === 1, 3_000, "the stranger's press to be answered");
    await fake.waitFor(() => fake.confirmedOffset > last.update_id && journal.held.size === 0, 5_000, "every update to be handled");

    const messages = events as InboundMessage[];
    const byChat = (address: string) => messages.filter((e) => e.address === address).map((e) => [e.accountId, e.text]);
    expect(messages).toHaveLength(4); // chats run concurrently; order holds within a chat
    expect(byChat("42")).toEqual([["42", "hello"], ["42", "done"]]);
    // Group mentions are answered in the sender's private chat (their user id), never in the group.
    expect(byChat("55")).toEqual([["55", "what's up?"], ["55", "/status"]]);
    expect(messages[0]).toMatchObject({ channel: "telegram", kind: "message", displayName: "Ana" });
    expect(fake.callsOf("answerCallbackQuery")[0]!.payload).toEqual({ callback_query_id: "stranger" });
  });

  it("hands one chat's messages to the sink in order, the next only after the previous resolved", async () => {
    const { fake, channel } = await setup();
    const first = deferred<{ status: "accepted" }>();
    const order: string[] = [];
    const { sink } = recordingSink(async (e) => {
      const text = (e as InboundMessage).text;
      order.push(`start ${text}`);
      if (text === "one") await first.promise;
      order.push(`end ${text}`);
      return { status: "accepted" };
    });
    await channel.start(sink);
    fake.push(updates.text(42, "one"));
    fake.push(updates.text(42, "two"));
    fake.push(updates.text(7, "other chat"));
    await fake.waitFor(() => order.includes("end other chat"), 3_000, "the other chat's message");
    expect(order).toEqual(["start one", "start other chat", "end other chat"]);
    first.resolve({ status: "accepted" });
    await fake.waitFor(() => order.includes("end two"), 3_000, "the second message");
    expect(order.slice(3)).toEqual(["end one", "start two", "end two"]);
  });

  it("keeps a minimum gap between empty polls against a Bot API that answers getUpdates at once", async () => {
    const { fake, channel } = await setup({ polling: { timeoutSeconds: 5, minEmptyPollGapMs: 200 } });
    fake.answerAtOnce = true;
    const { sink, events } = recordingSink();
    await channel.start(sink);
    const polls = () => fake.callsOf("getUpdates").length;
    const before = polls();
    // A fixed wait on purpose: it counts polls in a period (that NO more than a few happen).
    await new Promise((r) => setTimeout(r, 1_000));
    const during = polls() - before;
    // 1 s / 200 ms = 5 polls; allow a generous margin for a slow machine. Without the gap: hundreds.
    expect(during).toBeGreaterThanOrEqual(1);
    expect(during).toBeLessThanOrEqual(12);
    // An update is still picked up on the next poll.
    fake.push(updates.text(42, "still listening"));
    await fake.waitFor(() => events.length === 1, 3_000, "the update after empty polls");
  });

  it("polls at most about once a second by default when getUpdates returns at once", async () => {
    const { fake, channel } = await setup();
    fake.answerAtOnce = true;
    await channel.start(recordingSink().sink);
    const before = fake.callsOf("getUpdates").length;
    // A fixed wait on purpose: it counts polls in a period (that NO more than a few happen).
    await new Promise((r) => setTimeout(r, 1_500));
    expect(fake.callsOf("getUpdates").length - before).toBeLessThanOrEqual(6);
  });

  it("answers 500 in webhook mode when the core cannot record the update, so Telegram redelivers it", async () => {
    const log = captureLogger();
    const http = new HttpServer(log.logger, []);
    const { fake, channel } = await setup({ webhook: { url: "https://familiar.example/tg", secret: "s3cret-token_0123456789", http } });
    const port = await http.listen("127.0.0.1", 0);
    cleanups.push(() => http.close());
    const url = `http://127.0.0.1:${port}/tg`;
    const post = () =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret-token_0123456789" }, body: JSON.stringify(fake.build(updates.text(42, "hi"))) });
    expect((await post()).status).toBe(503); // not started yet
    await channel.start(async () => {
      throw new Error("store unavailable");
    });
    expect((await post()).status).toBe(500);
  });
});

describe("start", () => {
  it("names TELEGRAM_BOT_TOKEN, never the token, when Telegram rejects it", async () => {
    const fake = await FakeTelegramApi.start();
    cleanups.push(() => fake.close());
    const token = "999999:WRONG-token_value_xyz";
    const channel = createTelegramChannel({ token, apiRoot: fake.apiRoot, logger: captureLogger().logger, journal: memoryJournal().journal });
    const error = (await channel.start(recordingSink().sink).catch((e: unknown) => e)) as Error & { code?: string };
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("TELEGRAM_BOT_TOKEN");
    expect(error.message).toContain("401");
    expect(error.message).not.toContain(token);
  });

  it("names TELEGRAM_API_ROOT when the Bot API cannot be reached", async () => {
    const fake = await FakeTelegramApi.start();
    const apiRoot = fake.apiRoot;
    await fake.close();
    const token = "123456:TEST-token_abcdefghij";
    const channel = createTelegramChannel({ token, apiRoot, logger: captureLogger().logger, journal: memoryJournal().journal });
    const error = (await channel.start(recordingSink().sink).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("TELEGRAM_API_ROOT");
    expect(error.message).not.toContain(token);
  });
});

describe("outbound", () => {
  it("retries a short 429 (auto-retry) and reports a long one as retryable with retryAfterMs", async () => {
    const { fake, channel } = await setup();
    fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 1", parameters: { retry_after: 1 } });
    await send(channel, chat(42), { text: "first", buttons: [] });
    expect(fake.callsOf("sendMessage")).toHaveLength(2);

    fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 30", parameters: { retry_after: 30 } });
    const error = (await send(channel, chat(42), { text: "second", buttons: [] }).catch((e: unknown) => e)) as DeliveryError;
    expect(error).toBeInstanceOf(DeliveryError);
    expect(error.outcome).toBe("rate_limited");
    expect(error.retryAfterMs).toBe(30_000);
    expect(fake.callsOf("sendMessage")).toHaveLength(3);
  });

  it("refuses a button id over 64 bytes before calling Telegram, and lays out six buttons in rows of two", async () => {
    const { fake, channel } = await setup();
    const tooLong = "é".repeat(33); // 33 characters, 66 bytes
    const error = (await send(channel, chat(42), { text: "card", buttons: [{ id: tooLong, label: "Go" }] }).catch((e: unknown) => e)) as DeliveryError;
    expect(error.outcome).toBe("payload_rejected");
    expect(error.message).toContain("66 bytes");
    expect(fake.calls.filter((c) => c.method === "sendMessage")).toHaveLength(0);

    const buttons = ["once", "task", "session", "8h", "always", "deny"].map((s) => ({ id: `ap:01HX:${s}`, label: s }));
    buttons[0]!.id = "é".repeat(32); // 64 bytes: the most Telegram takes
    await send(channel, chat(42), { text: "Approve?", buttons });
    expect(fake.messages[0]!.replyMarkup!.inline_keyboard.map((row) => row.map((b) => b.callback_data))).toEqual([
      ["é".repeat(32), "ap:01HX:task"],
      ["ap:01HX:session", "ap:01HX:8h"],
      ["ap:01HX:always", "ap:01HX:deny"],
    ]);
  });

  it("edits a card's text and removes its buttons; repeating the edit is harmless", async () => {
    const { fake, channel } = await setup();
    const receipt = await send(channel, chat(42), { text: "Send the invoice?", buttons: [{ id: "ap:1:once", label: "Approve" }] });
    const edited = { text: "Send the invoice? — **approved once**", buttons: [] };
    await channel.edit(chat(42), receipt.platformIds, edited);
    await channel.edit(chat(42), receipt.platformIds, edited);
    expect(fake.messages).toHaveLength(1);
    expect(fake.messages[0]!.text).toBe("Send the invoice? — approved once");
    expect(fake.messages[0]!.replyMarkup).toEqual({ inline_keyboard: [] });
    const gone = (await channel.edit(chat(42), ["999"], edited).catch((e: unknown) => e)) as DeliveryError;
    expect(gone.outcome).toBe("payload_rejected");
    expect(gone.message).toContain("message to edit not found");
  });

  it("shows typing with sendChatAction", async () => {
    const { fake, channel } = await setup();
    await channel.typing(chat(42));
    expect(fake.callsOf("sendChatAction").map((c) => c.payload)).toEqual([{ chat_id: "42", action: "typing" }]);
  });
});
