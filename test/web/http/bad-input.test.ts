/**
 * Bad input at every HTTP door gets a clear 4xx and costs nothing (issue 18 item 10): a Telegram
 * webhook with the right secret but the wrong Content-Type or a body that is not an Update; a body
 * that claims a content coding it is not in; a vault owner that is no person; an endless chunked body
 * without a length, cut at the limit while it streams — on the routes that read bodies and on those
 * that answer before reading one.
 */
import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { readBody, type Refusal, type WithRawBody } from "../../../web/http/body.js";
import { FakeTelegramApi } from "../../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";

/** Streams `times` × `chunk` (chunked, no Content-Length); resolves, once the connection is gone, with the status and how many chunks were written in all (the server stops them by closing). */
function postChunked(url: string, chunk: Buffer, times: number, headers: Record<string, string> = {}): Promise<{ status: number; sent: number }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked", ...headers } });
    let sent = 0;
    let status = 0;
    req.on("response", (res) => {
      status = res.statusCode ?? 0;
      res.resume();
    });
    req.on("error", () => undefined);
    req.on("close", () => resolve({ status, sent }));
    const pump = () => {
      while (sent < times && !req.destroyed) {
        sent++;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!req.destroyed) req.end();
    };
    pump();
  });
}

const MiB = 1024 * 1024;
/** 20 MiB offered in 64 KiB chunks. */
const TWENTY_MIB = { chunk: Buffer.alloc(64 * 1024, 0x20), times: (20 * MiB) / (64 * 1024) };

describe("content codings (web/http/body.ts readBody)", () => {
  let server: ReturnType<ReturnType<typeof express>["listen"]> | null = null;
  afterEach(() => void server?.close());

  it("decodes gzip, refuses a body that claims gzip but is not (400), an unknown coding (415) and a bomb past the limit (413)", async () => {
    const refusals: Refusal[] = [];
    const app = express();
    app.post("/in", readBody({ limit: 4096, source: "test", onRefused: (r) => void refusals.push(r) }), (req: express.Request & WithRawBody, res) => {
      res.json({ text: req.rawBody!.toString("utf8") });
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server!.once("listening", r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/in`;
    const post = (body: Buffer | string, encoding: string) => fetch(url, { method: "POST", headers: { "content-type": "application/json", "content-encoding": encoding }, body });

    const real = await post(gzipSync(Buffer.from('{"a":1}')), "gzip");
    expect(real.status).toBe(200);
    expect(await real.json()).toEqual({ text: '{"a":1}' });
    const fake = await post('{"a":1}', "gzip");
    expect(fake.status).toBe(400);
    expect(((await fake.json()) as { error: string }).error).toMatch(/gzip/);
    expect((await post('{"a":1}', "compress")).status).toBe(415);
    expect((await post('{"a":1}', "gzip, br")).status).toBe(415);
    // 1 MiB of spaces is about 1 KiB gzipped: under the limit as sent, far over it decoded.
    const bomb = gzipSync(Buffer.alloc(MiB, 0x20));
    expect(bomb.length).toBeLessThan(4096);
    expect((await post(bomb, "gzip")).status).toBe(413);
    expect((await post('{"a":1}', "identity")).status).toBe(200);
    expect(refusals.map((r) => r.reason)).toEqual(["bad_encoding", "bad_encoding", "bad_encoding", "too_large"]);
  });
});

describe("bad input at the doors of a running app", () => {
  let app: TestApp | null = null;
  let telegram: FakeTelegramApi | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
    await telegram?.close();
    telegram = null;
  });

  it("Telegram webhook, right secret: text/plain is 415, a claimed gzip that is not is 400, JSON that is no Update is 400 — never 500", async () => {
    telegram = await FakeTelegramApi.start();
    const secret = "Tg-webhook_bad1nput_7Qk2";
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, TELEGRAM_WEBHOOK_URL: "https://familiar.example/tg/hook", TELEGRAM_WEBHOOK_SECRET: secret });
    const url = `${app.url}/tg/hook`;
    const update = JSON.stringify({ update_id: 7, message: { message_id: 1, date: 1, chat: { id: 5, type: "private" }, from: { id: 5, is_bot: false, first_name: "T" }, text: "hi" } });
    const post = (body: string, headers: Record<string, string>) => fetch(url, { method: "POST", headers: { "x-telegram-bot-api-secret-token": secret, ...headers }, body });

    const plain = await post(update, { "content-type": "text/plain" });
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as { error: string }).error).toMatch(/Content-Type/);
    expect((await post(update, {})).status).toBe(415);
    expect((await post(update, { "content-type": "application/json", "content-encoding": "gzip" })).status).toBe(400);
    for (const notAnUpdate of ["[]", '"hi"', "{}", '{"update_id":"7"}', "null"]) {
      expect((await post(notAnUpdate, { "content-type": "application/json" })).status, notAnUpdate).toBe(400);
    }
    // A real gzip body of a real update is taken.
    const gz = await fetch(url, { method: "POST", headers: { "x-telegram-bot-api-secret-token": secret, "content-type": "application/json", "content-encoding": "gzip" }, body: gzipSync(Buffer.from(update)) });
    expect(gz.status).toBe(200);
  }, 30_000);

  it("PUT /api/secrets: an owner that is no person (__proto__, constructor, a made-up id) is 400 and stores nothing; a person's and shared are stored", async () => {
    app = await startTestApp({});
    const put = (owner: string) =>
      fetch(`${app!.url}/api/secrets`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ owner, name: "API", value: "sk-test-value-98765", origins: ["https://api.example.com"] }) });
    for (const owner of ["__proto__", "constructor", "prototype", "person_does_not_exist"]) {
      const res = await put(owner);
      expect(res.status, owner).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/unknown owner/);
    }
    const listed = async () => ((await (await fetch(`${app!.url}/api/secrets`)).json()) as { items: { owner: string }[] }).items.map((i) => i.owner);
    expect(await listed()).toEqual([]);
    const person = await app.store.persons.createPerson({ displayName: "Ana" });
    expect((await put(person.id)).status).toBe(204);
    expect((await put("shared")).status).toBe(204);
    expect((await listed()).sort()).toEqual([person.id, "shared"].sort());
  }, 30_000);

  it("a chunked 20 MiB body without a length is cut at the limit while it streams, on every kind of route", async () => {
    telegram = await FakeTelegramApi.start();
    const secret = "Tg-webhook_bad1nput_7Qk2";
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, TELEGRAM_WEBHOOK_URL: "https://familiar.example/tg/hook", TELEGRAM_WEBHOOK_SECRET: secret });
    const { chunk, times } = TWENTY_MIB;
    const routes: { path: string; headers?: Record<string, string>; status: number }[] = [
      // Routes that read a body: 413 at their limit.
      { path: "/tg/hook", headers: { "x-telegram-bot-api-secret-token": secret }, status: 413 },
      { path: "/api/local/messages", status: 413 },
      { path: "/api/secrets", status: 413 },
      { path: "/hooks/hook_0123456789abcdef", status: 413 },
      { path: "/secret/some-token", headers: { "content-type": "application/x-www-form-urlencoded" }, status: 413 },
      { path: "/api/web/chat", status: 413 },
      // Routes that answer before reading a body (no such route, a form sent as JSON): answered, and the rest is not read.
      { path: "/no/such/route", status: 404 },
      { path: "/api/no-such-api", status: 404 },
    ];
    for (const route of routes) {
      const result = await postChunked(`${app.url}${route.path}`, chunk, times, route.headers);
      expect(result.status, route.path).toBe(route.status);
      // The connection is closed before 4 MiB of the 20 were written (the limits are at most 1 MiB; the rest is socket buffers).
      expect(result.sent, route.path).toBeLessThan(64);
    }
  }, 60_000);
});
