import { send } from "../helpers/send.js";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  createTelegramChannel,
  type TelegramChannel,
  type TelegramChannelOptions,
} from "../../bots/telegram/channel.js";
import { HttpServer } from "../../web/http/server.js";
import { DeliveryError, type InboundOutcome } from "../../core/channels/port.js";
import { FakeTelegramApi, TEXT_LIMIT, updates } from "../fakes/telegram-api.js";
import { storeUpdateJournal } from "../../bots/telegram/journal.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import { captureLogger, dedupeSink, deferred, durableDedupeSink, recordingSink, memoryJournal } from "../fakes/telegram-sinks.js";

/** Field cases T1–T6 (shared/cases/field-bugs.md): the real grammY client against the fake Bot API. */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
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

describe("T1 long reply", () => {
  it("splits a 6,000-character answer into ordered messages within 4,096 visible characters, buttons on the last", async () => {
    const { fake, channel } = await setup();
    const paragraph = (i: number) => `Paragraph P${String(i).padStart(2, "0")}: ${"Fish & chips <3 beat a salad > soup; ".repeat(15).trim()}`;
    const bullets = Array.from({ length: 20 }, (_, i) => `- item B${String(i).padStart(2, "0")} with **bold** & more`).join("\n");
    const markdown = [0, 1, 2, 3, 4, 5].map(paragraph).concat(bullets, [6, 7, 8, 9, 10].map(paragraph)).join("\n\n");
    expect(markdown.length).toBeGreaterThanOrEqual(6_000);
    const buttons = [
      { id: "ap:01HX:once", label: "Approve once" },
      { id: "ap:01HX:deny", label: "Deny" },
    ];

    const receipt = await send(channel, chat(42), { text: markdown, buttons });

    const sent = fake.messages.filter((m) => m.chatId === "42");
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(fake.callsOf("sendMessage")).toHaveLength(sent.length); // nothing refused, nothing resent
    expect(receipt.platformIds).toEqual(sent.map((m) => String(m.messageId)));
    for (const message of sent) expect(message.text.length).toBeLessThanOrEqual(TEXT_LIMIT);
    // Split by what Telegram counts, not by payload size: escaping makes a full part's HTML longer than 4,096.
    expect(Math.max(...sent.map((m) => m.html.length))).toBeGreaterThan(TEXT_LIMIT);
    const shown = sent.map((m) => m.text).join("\n");
    const markers = [...shown.matchAll(/\b([PB]\d\d)\b/g)].map((m) => m[1]);
    expect(markers).toEqual([0, 1, 2, 3, 4, 5].map((i) => `P0${i}`).concat(Array.from({ length: 20 }, (_, i) => `B${String(i).padStart(2, "0")}`), ["P06", "P07", "P08", "P09", "P10"]));
    expect(shown).toContain("Fish & chips <3 beat a salad > soup;");
    expect(sent.slice(0, -1).every((m) => m.replyMarkup === null)).toBe(true);
    expect(sent.at(-1)!.replyMarkup!.inline_keyboard.flat().map((b) => b.callback_data)).toEqual(["ap:01HX:once", "ap:01HX:deny"]);
  });

  it("treats Telegram's 'message is too long' as a rejected payload (re-rendered by the outbox), never resent as it was", async () => {
    const { fake, channel } = await setup();
    fake.failNext("sendMessage", { error_code: 400, description: "Bad Request: message is too long" }, { chatId: "43", times: 5 });
    const error = await send(channel, chat(43), { text: "A reply", buttons: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).outcome).toBe("payload_rejected");
    expect((error as DeliveryError).message).toContain("message is too long");
    expect(fake.callsOf("sendMessage")).toHaveLength(1);
  });
});

describe("T2 reserved characters", () => {
  const fills: [string, string][] = [
    ["<Ana & Bo>", "<42>"],
    ["Ana & Bo", "42"],
    ["<b>Bo</b> &amp; </pre>", "3 < 4 & 5 > 2"],
  ];
  it.each(fills)("sends the plan for %s / %s as one formatted message, accepted the first time", async (name, n) => {
    const { fake, channel } = await setup();
    const receipt = await send(channel, chat(42), { text: `Plan\n\n---\n\n1. Call ${name} (mon-fri).\n2. Pay #${n}!`, buttons: [] });

    expect(fake.callsOf("sendMessage")).toHaveLength(1);
    expect(fake.callsOf("sendMessage")[0]!.payload.parse_mode).toBe("HTML");
    expect(fake.messages).toHaveLength(1);
    expect(receipt.platformIds).toEqual([String(fake.messages[0]!.messageId)]);
    expect(fake.messages[0]!.text).toBe(`Plan\n\n──────────\n\n1. Call ${name} (mon-fri).\n2. Pay #${n}!`);
  });
});

describe("T3 late button answer", () => {
  it("answers a press within 1 s while a message's sink is still pending, and logs a 'query is too old' answer", async () => {
    const { fake, channel, log, journal } = await setup();
    // The message's sink stands for a 30 s turn; it is released once the assertions are done.
    const slowTurn = deferred<InboundOutcome>();
    const { sink, events } = recordingSink((e) => (e.kind === "message" ? slowTurn.promise : { status: "handled", notice: "Approved once" }));
    await channel.start(sink);

    const message = fake.push(updates.text(42, "book the flight"));
    await fake.waitFor(() => events.length === 1, 5_000, "the message to reach the sink");
    // A fixed wait on purpose: it models time passing while the turn is slow (the press must still be answered at once).
    await sleep(2_000);
    const press = fake.push(updates.press(42, "ap:01HX:once", { queryId: "press-1", messageId: 5 }));
    const pressedAt = Date.now();
    await fake.waitFor(() => fake.callsOf("answerCallbackQuery").length === 1, 3_000, "answerCallbackQuery");

    const answer = fake.callsOf("answerCallbackQuery")[0]!;
    expect(answer.at - pressedAt).toBeLessThan(1_000);
    expect(answer.payload).toMatchObject({ callback_query_id: "press-1", text: "Approved once" });
    expect(events[1]).toMatchObject({ kind: "press", updateId: String(press.update_id), accountId: "42", address: "42", buttonId: "ap:01HX:once", messageRef: "5" });
    // The pending message stays in the journal until its sink resolved (a crash now hands it over again at the next start).
    expect(journal.held.has(message.update_id)).toBe(true);

    fake.failNext("answerCallbackQuery", { error_code: 400, description: "Bad Request: query is too old and response timeout expired or query ID is invalid" });
    const late = fake.push(updates.press(42, "ap:01HX:deny", { queryId: "press-2" }));
    await fake.waitFor(() => log.lines.some((l) => l.level === 40 && l.msg.includes("too old")), 3_000, "the stale answer to be logged");
    expect(events.map((e) => e.updateId)).toEqual([message, press, late].map((u) => String(u.update_id)));

    slowTurn.resolve({ status: "accepted" });
    await fake.waitFor(() => fake.confirmedOffset > late.update_id && journal.held.size === 0, 5_000, "every update to be handled and confirmed");
    expect(log.lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});

describe("T4 webhook redelivery", () => {
  const secret = "s3cret-token_0123456789";
  async function webhookSetup(sink: Parameters<TelegramChannel["start"]>[0]) {
    const log = captureLogger();
    const http = new HttpServer(log.logger, []);
    const { fake, channel } = await setup({ webhook: { url: "https://familiar.example/telegram/webhook", secret, http } });
    const port = await http.listen("127.0.0.1", 0);
    cleanups.push(() => http.close());
    await channel.start(sink);
    const post = async (body: unknown, secretHeader: string | null) => {
      const started = Date.now();
      const response = await fetch(`http://127.0.0.1:${port}/telegram/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(secretHeader === null ? {} : { "x-telegram-bot-api-secret-token": secretHeader }) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5_000),
      });
      return { status: response.status, ms: Date.now() - started };
    };
    return { fake, channel, post };
  }

  it("answers 200 within 1 s to an update and its redeliveries while the turn runs: one turn, one reply", async () => {
    const turn = deferred<void>();
    const replies: Promise<unknown>[] = [];
    let channel: TelegramChannel | null = null;
    const { sink, outcomes } = dedupeSink((event) => {
      // The turn (a 45 s model call in the field case) runs after the sink resolved.
      replies.push(turn.promise.then(() => send(channel!, { accountId: event.accountId, address: event.address }, { text: "Booked.", buttons: [] })));
    });
    const setup = await webhookSetup(sink);
    const { fake, post } = setup;
    channel = setup.channel;
    expect(fake.webhook).toEqual({ url: "https://familiar.example/telegram/webhook", secretToken: secret, allowedUpdates: ["message", "callback_query"] });

    const body = fake.build(updates.text(42, "book it"));
    // Telegram's redeliveries (+10 s, +22 s) arrive while the turn still runs; the adapter has no timers, so they are posted back to back.
    const answers = [await post(body, secret), await post(body, secret), await post(body, secret)];
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.ms).toBeLessThan(1_000);
    }
    expect(outcomes.map((o) => o.status)).toEqual(["accepted", "duplicate", "duplicate"]);
    turn.resolve();
    await Promise.all(replies);
    expect(fake.messages.map((m) => [m.chatId, m.text])).toEqual([["42", "Booked."]]);
  });

  it("refuses a wrong or missing secret with 401 without reaching the sink", async () => {
    const { sink, events } = recordingSink();
    const { fake, post } = await webhookSetup(sink);
    const body = fake.build(updates.text(42, "hi"));
    expect((await post(body, "wrong-secret_0123456789")).status).toBe(401);
    expect((await post(body, null)).status).toBe(401);
    expect(events).toEqual([]);
    expect((await post(body, secret)).status).toBe(200);
    expect(events).toHaveLength(1);
  });
});

describe("T5 redelivered after restart", () => {
  /** Runs the channel in a child process on the SQLite file `db` until `ready` shows in its output, then kills it (SIGKILL). */
  async function killedChild(fake: FakeTelegramApi, db: string, stall: "after-record" | "before-record", ready: string): Promise<void> {
    const childPath = fileURLToPath(new URL("../fakes/telegram-child.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", childPath], {
      env: { ...process.env, TG_API_ROOT: fake.apiRoot, TG_TOKEN: fake.token, TG_DB: db, TG_STALL: stall },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    cleanups.push(() => void child.kill("SIGKILL"));
    await fake.waitFor(() => output.includes(ready), 20_000, `the child to print ${ready}`);
    // The child keeps polling while the update is being handled: it confirms the update (the journal holds it).
    await fake.waitFor(() => fake.confirmedOffset > Number(/\d+/.exec(ready)![0]), 5_000, "the child to confirm the held update");
    child.kill("SIGKILL");
    await exited;
  }

  /** Resolves once the journal in `store` holds nothing (the handled update was released); throws after 5 s. */
  async function heldEmpty(store: { inbound: { listHeldUpdates(channel: "telegram"): Promise<unknown[]> } }): Promise<void> {
    for (const deadline = Date.now() + 5_000; (await store.inbound.listHeldUpdates("telegram")).length > 0; ) {
      if (Date.now() > deadline) throw new Error("the handled update was never released from the journal");
      await sleep(20);
    }
  }

  async function restart(fake: FakeTelegramApi, db: string) {
    const restarted = durableDedupeSink(db);
    cleanups.push(() => restarted.close());
    const store = openSqliteStore({ path: db });
    cleanups.push(() => store.close());
    const channel = createTelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, logger: captureLogger().logger, journal: storeUpdateJournal(store.inbound, captureLogger().logger) });
    cleanups.push(() => channel.stop());
    await channel.start(restarted.sink);
    return { restarted, store };
  }

  it("ignores an update that a killed process recorded: handed over again from the journal, dropped as a duplicate", async () => {
    const fake = await FakeTelegramApi.start();
    cleanups.push(() => fake.close());
    const dir = mkdtempSync(join(tmpdir(), "familiar-tg-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = join(dir, "familiar.db");
    const update = fake.push(updates.text(42, "/pause"));
    await killedChild(fake, db, "after-record", `"recorded":"${update.update_id}","status":"accepted"`);

    const { restarted, store } = await restart(fake, db);
    await fake.waitFor(() => restarted.outcomes.length === 1, 5_000, "the held update to be handed over again");
    expect(restarted.outcomes).toEqual([{ updateId: String(update.update_id), status: "duplicate" }]);
    await heldEmpty(store);
    expect(fake.fetchCount.get(update.update_id)).toBe(1); // confirmed by the first process, never fetched again
  });

  it("handles an update a killed process had confirmed but not recorded yet: the journal kept it", async () => {
    const fake = await FakeTelegramApi.start();
    cleanups.push(() => fake.close());
    const dir = mkdtempSync(join(tmpdir(), "familiar-tg-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = join(dir, "familiar.db");
    const update = fake.push(updates.text(42, "a message whose file was still downloading"));
    await killedChild(fake, db, "before-record", `"received":"${update.update_id}"`);

    const { restarted, store } = await restart(fake, db);
    await fake.waitFor(() => restarted.outcomes.length === 1, 5_000, "the held update to be handed over again");
    expect(restarted.outcomes).toEqual([{ updateId: String(update.update_id), status: "accepted" }]);
    await heldEmpty(store);
  });
});

describe("T6 blocked by the user", () => {
  it("reports A as gone, delivers B's in the same minute, and keeps running", async () => {
    const { fake, channel } = await setup();
    const { sink, events } = recordingSink();
    await channel.start(sink);
    fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" }, { chatId: "101", times: 5 });

    const [toA, toB] = await Promise.allSettled([
      send(channel, chat(101), { text: "Your daily check-in", buttons: [] }),
      send(channel, chat(202), { text: "Your daily check-in", buttons: [] }),
    ]);
    expect(toA.status).toBe("rejected");
    const error = (toA as PromiseRejectedResult).reason as DeliveryError;
    expect(error).toBeInstanceOf(DeliveryError);
    expect(error.outcome).toBe("recipient_gone");
    expect(error.message).toContain("bot was blocked by the user");
    expect(toB.status).toBe("fulfilled");
    expect(fake.messages.map((m) => m.chatId)).toEqual(["202"]);
    expect(fake.callsOf("sendMessage").filter((c) => String(c.payload.chat_id) === "101")).toHaveLength(1);

    fake.push(updates.text(202, "thanks"));
    await fake.waitFor(() => events.length === 1, 5_000, "the next update to reach the sink");
    await send(channel, chat(202), { text: "You're welcome", buttons: [] });
    expect(fake.messages.map((m) => m.text)).toEqual(["Your daily check-in", "You're welcome"]);
  });
});
