/**
 * Request bodies at the door: limited before any signature check reads them (declared and chunked),
 * JSON depth bounded, refusals reported — for the generic reader and for the Telegram webhook and
 * Slack's events endpoint in a running app.
 */
import { request as httpRequest } from "node:http";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { SqliteStore } from "../../../core/storage/sqlite/store.js";
import { boundedJson, jsonDepth, MAX_JSON_DEPTH, parseBoundedJson, type Refusal } from "../../../web/http/body.js";
import { FakeTelegramApi } from "../../fakes/telegram-api.js";
import { FakeSlackApi } from "../../fakes/slack-api.js";
import { postSigned } from "../../fakes/slack-events.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { waitFor } from "../../helpers/wait.js";

/** Streams `chunks` (chunked transfer encoding, no Content-Length) and reports status and whether the server closed early. */
function postChunked(url: string, chunk: Buffer, times: number, headers: Record<string, string> = {}): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked", ...headers } });
    let sent = 0;
    let status = 0;
    req.on("response", (res) => {
      status = res.statusCode ?? 0;
      res.resume();
      res.on("end", () => resolve({ status, sent }));
    });
    req.on("error", (err) => (status ? resolve({ status, sent }) : reject(err)));
    const pump = () => {
      while (sent < times) {
        sent++;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

describe("bounded bodies (web/http/body.ts)", () => {
  let server: ReturnType<ReturnType<typeof express>["listen"]> | null = null;
  afterEach(() => void server?.close());

  it("measures JSON depth outside strings and refuses deep JSON", () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[[{{{{"}]}')).toBe(3);
    expect(parseBoundedJson("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))).toMatchObject({ ok: false, reason: "too_deep" });
    expect(parseBoundedJson('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseBoundedJson("{nope")).toMatchObject({ ok: false, reason: "bad_json" });
  });

  it("refuses a declared oversized body without reading it, aborts an endless chunked body at the limit, and reports both", async () => {
    const refusals: Refusal[] = [];
    let reached = 0;
    const app = express();
    app.post("/in", ...boundedJson({ limit: 1024, source: "test", onRefused: (r) => void refusals.push(r) }), (req, res) => {
      reached++;
      res.json({ got: req.body as unknown });
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server!.once("listening", r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/in`;

    const declared = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ pad: "x".repeat(5000) }) });
    expect(declared.status).toBe(413);
    // 64 KiB chunks, up to 4 GiB offered: the server stops at the first chunk past 1 KiB.
    const chunked = await postChunked(url, Buffer.alloc(64 * 1024, 0x20), 65_536);
    expect(chunked.status).toBe(413);
    expect(chunked.sent).toBeLessThan(1000);
    const deep = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "[".repeat(100) + "]".repeat(100) });
    expect(deep.status).toBe(400);
    const fine = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":[1,2]}' });
    expect(await fine.json()).toEqual({ got: { a: [1, 2] } });
    expect(reached).toBe(1);
    expect(refusals.map((r) => r.reason)).toEqual(["too_large", "too_large", "too_deep"]);
  });
});

describe("webhooks at the door (running app)", () => {
  let app: TestApp | null = null;
  let telegram: FakeTelegramApi | null = null;
  let slack: FakeSlackApi | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
    await telegram?.close();
    telegram = null;
    await slack?.close();
    slack = null;
  });

  it("Telegram: a wrong secret is refused before the body is read; an oversized or too deep body is refused; all audited", async () => {
    telegram = await FakeTelegramApi.start();
    const secret = "Tg-webhook_9fQ2xK7mZ3pL8vR4";
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, TELEGRAM_WEBHOOK_URL: "https://familiar.example/tg/hook", TELEGRAM_WEBHOOK_SECRET: secret });
    const url = `${app.url}/tg/hook`;
    // An endless body with a wrong secret: answered 401 at once, without reading it.
    const wrong = await postChunked(url, Buffer.alloc(64 * 1024, 0x20), 65_536, { "x-telegram-bot-api-secret-token": "nope" });
    expect(wrong.status).toBe(401);
    expect(wrong.sent).toBeLessThan(1000);
    const big = await postChunked(url, Buffer.alloc(64 * 1024, 0x20), 65_536, { "x-telegram-bot-api-secret-token": secret });
    expect(big.status).toBe(413);
    const deep = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret }, body: `{"update_id":1,"x":${"[".repeat(200)}${"]".repeat(200)}}` });
    expect(deep.status).toBe(400);
    const telegramRefusals = ["telegram:bad_signature", "telegram:too_large", "telegram:too_deep"];
    await waitFor(() => telegramRefusals.every((r) => auditedRefusals(app!).includes(r)), "the refusals to be audited");
  }, 30_000);

  it("Slack: an oversized body is refused before its signature is checked; a bad or stale signature is refused; all audited", async () => {
    const botToken = "xoxb-test-door-1";
    slack = new FakeSlackApi({ botToken });
    await slack.listen();
    const signingSecret = "Sl4ck-s1gn_Qz8xK2mP7vL3rT9w";
    app = await startTestApp({ SLACK_BOT_TOKEN: botToken, SLACK_SIGNING_SECRET: signingSecret, SLACK_API_URL: slack.apiUrl });
    const url = `${app.url}/slack/events`;
    const big = await postChunked(url, Buffer.alloc(64 * 1024, 0x20), 65_536, { "x-slack-signature": "v0=00", "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)) });
    expect(big.status).toBe(413);
    expect(big.sent).toBeLessThan(1000);
    const body = JSON.stringify({ type: "event_callback", event_id: "Ev1", event: { type: "message", channel: "D1", user: "U1", text: "hi", ts: "1.1" } });
    expect((await postSigned(url, body, "application/json", { signingSecret, signWith: "wrong-secret" })).status).toBe(401);
    expect((await postSigned(url, body, "application/json", { signingSecret, timestampSec: Math.floor(Date.now() / 1000) - 3600 })).status).toBe(401);
    const deep = `{"type":"event_callback","x":${"[".repeat(200)}${"]".repeat(200)}}`;
    expect((await postSigned(url, deep, "application/json", { signingSecret })).status).toBe(400);
    const slackRefusals = ["slack:too_large", "slack:bad_signature", "slack:stale", "slack:too_deep"];
    await waitFor(() => slackRefusals.every((r) => auditedRefusals(app!).includes(r)), "the refusals to be audited");
  }, 30_000);
});

/** `source:reason` of every audited refusal (they belong to no person, so the SQLite file is read directly). */
function auditedRefusals(app: TestApp): string[] {
  if (!(app.store instanceof SqliteStore)) throw new Error("these tests run on the embedded SQLite store");
  const rows = z.array(z.object({ data: z.string() })).parse(app.store.db.prepare("SELECT data FROM audit WHERE kind = 'inbound.refused' AND person_id IS NULL ORDER BY at").all());
  return rows.map((r) => {
    const d = z.object({ source: z.string(), reason: z.string() }).parse(JSON.parse(r.data));
    return `${d.source}:${d.reason}`;
  });
}
