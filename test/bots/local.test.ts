import { MESSAGE_TEXT_MAX, formatCount } from "../../web/shared/message-limit.js";
import { send } from "../helpers/send.js";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { HttpServer } from "../../web/http/server.js";
import { isClientAllowed, isLoopbackAddress } from "../../web/http/loopback.js";
import { LocalChannel } from "../../bots/local/channel.js";
import { localChatRouter, type LocalMessageJson } from "../../web/local/chat-routes.js";
import type { InboundEvent } from "../../core/channels/port.js";
import type { Clock } from "../../core/clock.js";
import { createLogger } from "../../core/log/logger.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import type { LocalMailboxRepository } from "../../core/storage/ports.js";
import { InMemoryLocalMailbox } from "../fakes/local-mailbox.js";

const { logger } = createLogger({ level: "silent" });

interface ListBody {
  messages: LocalMessageJson[];
  cursor: string;
  typing: boolean;
}

/** A clock the test moves by hand. */
function manualClock(start = Date.parse("2025-03-01T09:00:00Z")): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => new Date(now), advance: (ms) => void (now += ms) };
}

const servers: HttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * Starts the real HTTP server on 127.0.0.1 with the local chat router. `spoofRemote` lets a test
 * pretend a request came from another address (the socket's, as the guard reads it) by sending
 * the `x-test-remote` header; nothing leaves 127.0.0.1.
 */
async function setup(options: { allowRemote?: boolean; start?: boolean; mailbox?: LocalMailboxRepository; extra?: express.Router } = {}) {
  const store = options.mailbox ?? new InMemoryLocalMailbox();
  // Lets a test wait until a long-poll has read the mailbox (and so is waiting) before acting.
  let readWaiters: (() => void)[] = [];
  const mailbox: LocalMailboxRepository = {
    putLocalMessage: (input) => store.putLocalMessage(input),
    editLocalMessage: (id, patch, now) => store.editLocalMessage(id, patch, now),
    getLocalMessage: (id) => store.getLocalMessage(id),
    listLocalMessagesBefore: (user, beforeSeq, limit) => store.listLocalMessagesBefore(user, beforeSeq, limit),
    listLocalMessages: async (user, afterSeq, limit) => {
      const result = await store.listLocalMessages(user, afterSeq, limit);
      const waiting = readWaiters;
      readWaiters = [];
      for (const resolve of waiting) resolve();
      return result;
    },
  };
  const nextRead = () => new Promise<void>((resolve) => readWaiters.push(resolve));
  const clock = manualClock();
  const channel = new LocalChannel(mailbox, { clock, typingMs: 5_000 });
  const events: InboundEvent[] = [];
  if (options.start !== false) {
    await channel.start(async (event) => {
      events.push(event);
      return event.kind === "press" && event.buttonId.endsWith(":late") ? { status: "handled", notice: "This request expired." } : { status: "accepted" };
    });
  }
  const server = new HttpServer(logger, []);
  server.app.use((req, _res, next) => {
    // Shadow the socket's remoteAddress getter per request (keep-alive sockets are reused).
    const spoof = req.headers["x-test-remote"];
    if (typeof spoof === "string") Object.defineProperty(req.socket, "remoteAddress", { value: spoof, configurable: true });
    else delete (req.socket as { remoteAddress?: string }).remoteAddress;
    next();
  });
  server.mount(localChatRouter(channel, { allowRemote: options.allowRemote ?? false, logger, clock }));
  if (options.extra) server.mount(options.extra);
  servers.push(server);
  const port = await server.listen("127.0.0.1", 0);
  const base = `http://127.0.0.1:${port}`;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const list = async (query: string): Promise<ListBody> => {
    const res = await fetch(`${base}/api/local/messages?${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as ListBody;
  };
  /** Starts a long-poll (25 s) and resolves once it has read the mailbox, i.e. is now waiting. */
  const startPoll = async (query: string): Promise<{ result: Promise<ListBody> }> => {
    const read = nextRead();
    const result = list(`${query}&wait=25000`);
    await read;
    return { result }; // wrapped: an async function returning the promise itself would await it
  };
  return { base, channel, mailbox: store, events, clock, post, list, startPoll };
}

const alice = { accountId: "alice", address: "alice" };

describe("local chat: inbound messages", () => {
  it("hands a posted message to the sink as an InboundMessage and answers 202", async () => {
    const { post, events } = await setup();
    const res = await post("/api/local/messages", { user: "alice", text: "remind me at 5", clientMessageId: "c-1" });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: true, updateId: "alice:c-1", outcome: "accepted" });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: "message",
      channel: "local",
      updateId: "alice:c-1",
      accountId: "alice",
      address: "alice",
      text: "remind me at 5",
    });
    expect(events[0]?.at).toBeInstanceOf(Date);
  });

  it("gives each message without a clientMessageId a fresh update id", async () => {
    const { post, events } = await setup();
    const a = (await (await post("/api/local/messages", { user: "bob", text: "one" })).json()) as { updateId: string };
    const b = (await (await post("/api/local/messages", { user: "bob", text: "one" })).json()) as { updateId: string };
    expect(a.updateId).not.toBe(b.updateId);
    expect(events.map((e) => e.updateId)).toEqual([a.updateId, b.updateId]);
  });

  it("rejects bad input with 400 listing every problem, without calling the sink", async () => {
    const { post, base, events } = await setup();
    const res = await post("/api/local/messages", { user: "al ice", text: "" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; issues: string[] };
    expect(body.issues.some((i) => i.startsWith("user:"))).toBe(true);
    expect(body.issues.some((i) => i.startsWith("text:"))).toBe(true);
    expect(body.error).toContain("user");

    for (const bad of [
      { user: "x".repeat(65), text: "hi" },
      { user: "alice", text: "   " },
      { user: "alice" },
      ["alice", "hi"],
    ]) {
      expect((await post("/api/local/messages", bad)).status).toBe(400);
    }
    const notJson = await fetch(`${base}/api/local/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: string }).error).toMatch(/JSON/);
    const noType = await fetch(`${base}/api/local/messages`, { method: "POST", body: "user=alice&text=hi" });
    expect(noType.status).toBe(400);
    expect(events).toEqual([]);
  });

  it("accepts the longest allowed user name and text", async () => {
    const { post, events } = await setup();
    // The stated limit, in multi-byte characters (the body limit leaves room for them).
    const text = "é".repeat(MESSAGE_TEXT_MAX - 1) + "\u0001";
    const res = await post("/api/local/messages", { user: "a.b_c-d@e" + "x".repeat(55), text });
    expect(res.status).toBe(202);
    expect(events).toHaveLength(1);
    expect(events[0]!.kind === "message" && events[0]!.text).toBe(text);
  });

  it("refuses a text over the stated limit whole, with the limit in words (never cut)", async () => {
    const { post, events } = await setup();
    const res = await post("/api/local/messages", { user: "alice", text: "y".repeat(MESSAGE_TEXT_MAX + 1) });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: string; limit: number };
    expect(body.limit).toBe(MESSAGE_TEXT_MAX);
    expect(body.error).toContain(formatCount(MESSAGE_TEXT_MAX));
    expect(body.error).toContain(formatCount(MESSAGE_TEXT_MAX + 1));
    expect(events).toEqual([]);
  });

  it("answers 503 while the core has not started the channel", async () => {
    const { post } = await setup({ start: false });
    expect((await post("/api/local/messages", { user: "alice", text: "hi" })).status).toBe(503);
  });
});

describe("local chat: Familiar's messages", () => {
  it("lists only messages after the cursor, for that user, with buttons only when present", async () => {
    const { channel, list } = await setup();
    await send(channel, alice, { text: "Good morning", buttons: [] });
    await send(channel, { accountId: "bob", address: "bob" }, { text: "not for alice", buttons: [] });
    const card = await send(channel, alice, { text: "Send the email?", buttons: [{ id: "a1:yes", label: "Yes" }] });

    const first = await list("user=alice");
    expect(first.messages.map((m) => m.text)).toEqual(["Good morning", "Send the email?"]);
    expect(first.messages[0]).not.toHaveProperty("buttons");
    expect(first.messages[1]).toEqual({
      id: card.platformIds[0],
      text: "Send the email?",
      buttons: [{ id: "a1:yes", label: "Yes" }],
      at: "2025-03-01T09:00:00.000Z",
    });
    expect(first.typing).toBe(false);

    const again = await list(`user=alice&after=${first.cursor}`);
    expect(again).toEqual({ messages: [], cursor: first.cursor, typing: false });

    await send(channel, alice, { text: "Done.", buttons: [] });
    const next = await list(`user=alice&after=${first.cursor}`);
    expect(next.messages.map((m) => m.text)).toEqual(["Done."]);
    expect(Number(next.cursor)).toBeGreaterThan(Number(first.cursor));
  });

  it("rejects a bad query with 400", async () => {
    const { base } = await setup();
    for (const q of ["", "user=a%20b", "user=alice&after=-1", "user=alice&after=x", "user=alice&wait=soon", "user=alice&typing=yes"]) {
      expect((await fetch(`${base}/api/local/messages?${q}`)).status).toBe(400);
    }
  });

  // These long-polls ask for 25 s and the test allows 15 s: only a wake-up can make them pass.
  it("long-poll wakes when a message is sent", { timeout: 15_000 }, async () => {
    const { channel, startPoll } = await setup();
    const polled = await startPoll("user=alice&after=0");
    await send(channel, { accountId: "bob", address: "bob" }, { text: "for bob", buttons: [] });
    await send(channel, alice, { text: "woken", buttons: [] });
    const body = await polled.result;
    expect(body.messages.map((m) => m.text)).toEqual(["woken"]);
    expect(body.cursor).not.toBe("0");
  });

  it("long-poll wakes when typing starts", { timeout: 15_000 }, async () => {
    const { channel, startPoll } = await setup();
    const polled = await startPoll("user=alice&after=0");
    await channel.typing(alice);
    expect(await polled.result).toEqual({ messages: [], cursor: "0", typing: true });
  });

  it("long-poll answers at once when Familiar is typing and the page does not show it yet", { timeout: 15_000 }, async () => {
    const { channel, list } = await setup();
    await channel.typing(alice);
    expect(await list("user=alice&after=0&wait=25000")).toEqual({ messages: [], cursor: "0", typing: true });
    expect(await list("user=alice&after=0&wait=25000&typing=0")).toMatchObject({ typing: true });
  });

  it("long-poll answers an empty list at its deadline", async () => {
    const { list } = await setup();
    expect(await list("user=alice&after=0&wait=30")).toEqual({ messages: [], cursor: "0", typing: false });
  });

  it("shows an edited card again after the cursor, with its new text and no buttons", { timeout: 15_000 }, async () => {
    const { channel, list, startPoll } = await setup();
    const receipt = await send(channel, alice, { text: "Pay €20?", buttons: [{ id: "p:ok", label: "Approve" }] });
    const seen = await list("user=alice");
    const polled = await startPoll(`user=alice&after=${seen.cursor}`);
    await channel.edit(alice, receipt.platformIds, { text: "Pay €20? — approved", buttons: [] });
    const body = await polled.result;
    expect(body.messages).toHaveLength(1);
    expect(body.messages[0]?.id).toBe(receipt.platformIds[0]);
    expect(body.messages[0]?.text).toBe("Pay €20? — approved");
    expect(body.messages[0]).not.toHaveProperty("buttons");
  });

  it("refuses to edit another user's message", async () => {
    const { channel } = await setup();
    const receipt = await send(channel, alice, { text: "mine", buttons: [] });
    await expect(channel.edit({ accountId: "bob", address: "bob" }, receipt.platformIds, { text: "x", buttons: [] })).rejects.toMatchObject({
      code: "CHANNEL_ERROR",
      outcome: "payload_rejected",
    });
  });

  it("reports typing until it expires or a message arrives", async () => {
    const { channel, list, clock } = await setup();
    await channel.typing(alice);
    expect((await list("user=alice")).typing).toBe(true);
    expect((await list("user=bob")).typing).toBe(false);
    clock.advance(5_001);
    expect((await list("user=alice")).typing).toBe(false);
    await channel.typing(alice);
    await send(channel, alice, { text: "here", buttons: [] });
    expect((await list("user=alice")).typing).toBe(false);
  });
});

describe("local chat on the SQLite store", () => {
  it("sends, lists after the cursor, shows an edit again and takes a press", async () => {
    const store = openSqliteStore({ path: ":memory:" });
    try {
      const { channel, list, post, events } = await setup({ mailbox: store.localMailbox });
      await send(channel, alice, { text: "hello", buttons: [] });
      const card = await send(channel, alice, { text: "Allow?", buttons: [{ id: "apr3:once", label: "Once" }] });
      const first = await list("user=alice");
      expect(first.messages.map((m) => [m.text, m.buttons?.length ?? 0])).toEqual([["hello", 0], ["Allow?", 1]]);
      expect((await post("/api/local/actions", { user: "alice", messageId: card.platformIds[0], buttonId: "apr3:once" })).status).toBe(202);
      expect(events).toMatchObject([{ kind: "press", accountId: "alice", messageRef: card.platformIds[0] }]);
      await channel.edit(alice, card.platformIds, { text: "Allowed once.", buttons: [] });
      const after = await list(`user=alice&after=${first.cursor}`);
      expect(after.messages).toEqual([{ id: card.platformIds[0], text: "Allowed once.", at: "2025-03-01T09:00:00.000Z" }]);
      expect((await list(`user=alice&after=${after.cursor}`)).messages).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe("local chat: button presses", () => {
  it("hands a press to the sink with the presser's identity", async () => {
    const { channel, post, events } = await setup();
    const receipt = await send(channel, alice, { text: "Allow?", buttons: [{ id: "apr1:once", label: "Once" }] });
    const messageId = receipt.platformIds[0];
    const res = await post("/api/local/actions", { user: "alice", messageId, buttonId: "apr1:once", clientActionId: "press-1" });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: true, updateId: "alice:press-1", outcome: "accepted" });
    expect(events).toEqual([
      expect.objectContaining({
        kind: "press",
        channel: "local",
        updateId: "alice:press-1",
        accountId: "alice",
        address: "alice",
        buttonId: "apr1:once",
        messageRef: messageId,
      }),
    ]);
  });

  it("passes the core's notice about a press back to the page", async () => {
    const { channel, post } = await setup();
    const receipt = await send(channel, alice, { text: "Allow?", buttons: [{ id: "apr2:late", label: "Once" }] });
    const res = await post("/api/local/actions", { user: "alice", messageId: receipt.platformIds[0], buttonId: "apr2:late" });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ accepted: true, outcome: "handled", notice: "This request expired." });
  });

  it("answers 404 for another user's or an unknown message, 400 for a missing button", async () => {
    const { channel, post, events } = await setup();
    const receipt = await send(channel, alice, { text: "Allow?", buttons: [{ id: "ok", label: "OK" }] });
    const messageId = receipt.platformIds[0];
    expect((await post("/api/local/actions", { user: "mallory", messageId, buttonId: "ok" })).status).toBe(404);
    expect((await post("/api/local/actions", { user: "alice", messageId: "nope", buttonId: "ok" })).status).toBe(404);
    expect((await post("/api/local/actions", { user: "alice", messageId, buttonId: "other" })).status).toBe(400);
    expect((await post("/api/local/actions", { user: "alice", messageId })).status).toBe(400);
    expect(events).toEqual([]);
  });
});

describe("local chat: who may connect", () => {
  it("allows only loopback addresses unless remote access is on", () => {
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"]) {
      expect(isLoopbackAddress(address), address).toBe(true);
      expect(isClientAllowed(address, false), address).toBe(true);
    }
    for (const address of ["10.0.0.1", "::ffff:10.0.0.1", "128.0.0.1", "::2", "fe80::1", "localhost", "", undefined]) {
      expect(isLoopbackAddress(address), String(address)).toBe(false);
      expect(isClientAllowed(address, false), String(address)).toBe(false);
      expect(isClientAllowed(address, true), String(address)).toBe(true);
    }
  });

  it("refuses a non-loopback socket with 403 naming the setting, whatever X-Forwarded-For says", async () => {
    const { base, post, events } = await setup();
    const res = await fetch(`${base}/`, { headers: { "x-test-remote": "::ffff:10.0.0.1", "x-forwarded-for": "127.0.0.1" } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toContain("LOCAL_CHAT_ALLOW_REMOTE");
    const sent = await post("/api/local/messages", { user: "alice", text: "hi" }, { "x-test-remote": "10.0.0.1" });
    expect(sent.status).toBe(403);
    expect(events).toEqual([]);
  });

  it("serves remote clients when allowRemote is on, and leaves other routes alone", async () => {
    const extra = express.Router();
    extra.post("/hooks/raw", express.text({ type: "*/*" }), (req, res) => void res.json({ got: req.body }));
    const { base, post } = await setup({ allowRemote: false, extra });
    const hook = await fetch(`${base}/hooks/raw`, { method: "POST", headers: { "content-type": "application/json", "x-test-remote": "10.0.0.1" }, body: '{"a":1}' });
    expect(await hook.json()).toEqual({ got: '{"a":1}' });

    const open = await setup({ allowRemote: true });
    expect((await open.post("/api/local/messages", { user: "alice", text: "hi" }, { "x-test-remote": "10.0.0.1" })).status).toBe(202);
    expect((await post("/api/local/messages", { user: "alice", text: "hi" }, { "x-test-remote": "10.0.0.1" })).status).toBe(403);
  });
});

describe("local chat: the page", () => {
  it("serves the chat page and its assets", async () => {
    const { base } = await setup();
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toMatch(/<ol id="messages"[^>]*aria-live="polite"/);
    expect(html).toContain('<label for="name">');
    for (const asset of ["app.js", "app.css", "marked.js", "purify.js"]) {
      const res = await fetch(`${base}/local/${asset}`);
      expect(res.status, asset).toBe(200);
      expect((await res.text()).length, asset).toBeGreaterThan(500);
    }
    expect((await fetch(`${base}/local/package.json`)).status).toBe(404);
  });
});
