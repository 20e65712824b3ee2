/**
 * Issue 11, point 7 on a real platform path: the Bot API answers a send with an error text that
 * echoes the bot token (and an Authorization header). The token must not reach the log lines, the
 * SQLite file (outbox error, audit, journal), or any API response.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../fakes/openai-server.js";
import { FakeTelegramApi, updates } from "../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

const ANA = 42;
const TOKEN = "7311223344:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ";

describe("a platform error that echoes the bot token is scrubbed everywhere (issue 11, point 7)", () => {
  let fake: FakeTelegramApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
    await fake?.close();
    await model?.close();
  });

  it("logs, the outbox error, the audit log and the activity API never hold the token", async () => {
    fake = await FakeTelegramApi.start(TOKEN);
    model = await startFakeOpenAI({ fallback: () => text("Hello Ana") });
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}`, LOG_LEVEL: "debug" });
    const echo = `Forbidden: bot was blocked by the user (POST https://api.telegram.org/bot${TOKEN}/sendMessage, Authorization: Bearer ${TOKEN})`;
    fake.failNext("sendMessage", { error_code: 403, description: echo }, { times: 20 });
    fake.push(updates.text(ANA, "hi", { name: "Ana" }));
    const identity = await (async () => {
      for (let i = 0; i < 100; i++) {
        const found = await app.store.persons.findIdentity("telegram", String(ANA));
        if (found) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("no person");
    })();
    // Wait until the send failed for good (a 403 "blocked" is permanent) and was recorded.
    let failed = false;
    for (let i = 0; i < 150 && !failed; i++) {
      const rows = await app.store.outbox.listOutbound(identity.personId, { limit: 10 });
      failed = rows.items.some((m) => m.lastError !== null);
      if (!failed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(failed).toBe(true);
    const rows = await app.store.outbox.listOutbound(identity.personId, { limit: 10 });
    expect(rows.items.find((m) => m.lastError !== null)!.lastError).toContain("Forbidden: bot was blocked");

    const secretPart = TOKEN.split(":")[1]!;
    const activity = await (await fetch(`${app.url}/api/persons/${identity.personId}/activity?limit=100`)).text();
    const db = join(app.dataDir, "familiar.db");
    const files = [db, `${db}-wal`].filter(existsSync).map((f) => readFileSync(f).toString("latin1")).join("");
    for (const [sink, content] of [["activity API", activity], ["SQLite", files], ["logs", app.logs.join("")]] as const) {
      expect(content.includes(secretPart), `the token reached ${sink}`).toBe(false);
    }
  }, 60_000);
});
