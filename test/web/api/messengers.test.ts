import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../../fakes/openai-server.js";
import { FakeTelegramApi, updates } from "../../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { signIn } from "../../helpers/web.js";

const ANA = 42;


describe("the web app with messengers", () => {
  let fake: FakeTelegramApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  afterEach(async () => {
    await app?.close();
    await fake?.close();
    await model?.close();
    app = fake = model = null;
  });

  it("shows each messenger's needs and the token check's result, and refuses to override a model set in the environment", async () => {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI();
    // A token the Bot API refuses: Telegram fails to start, the rest runs.
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: "999:refused-token", TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url });
    const session = await signIn(app, "ana");
    const setup = (await (await fetch(`${app.url}/api/web/setup`, { headers: { cookie: session.cookie } })).json()) as {
      model: { source: string; envVars: string[]; configured: boolean };
      messengers: { channel: string; needs: string[]; readme: string; state: string }[];
    };
    expect(setup.model).toMatchObject({ source: "environment", envVars: ["OPENAI_BASE_URL"], configured: true });
    const telegram = setup.messengers.find((m) => m.channel === "telegram")!;
    expect(telegram.needs).toEqual(["TELEGRAM_BOT_TOKEN"]);
    expect(telegram.state).toMatch(/^failed to start: .*(401|Unauthorized|refused)/i);
    expect(setup.messengers.find((m) => m.channel === "slack")!.state).toBe("not configured");
    // The README link leads to the section.
    const readme = await (await fetch(`${app.url}${telegram.readme.split("#")[0]}`)).text();
    expect(readme).toContain(`id="${telegram.readme.split("#")[1]}"`);

    const override = await fetch(`${app.url}/api/web/setup/model`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: session.cookie, "x-familiar-csrf": session.csrf },
      body: JSON.stringify({ provider: "compatible", baseURL: model.url, model: "fake-model" }),
    });
    expect(override.status).toBe(409);
    expect(((await override.json()) as { error: string }).error).toContain("OPENAI_BASE_URL");
  });

  it("takes a Telegram token on the setup page: checked, started without a restart, kept encrypted, used again after a restart", async () => {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback: text("Hi from Familiar") });
    const env = { TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}` };
    app = await startTestApp(env);
    const session = await signIn(app, "owner");
    const post = (body: unknown) =>
      fetch(`${app!.url}/api/web/setup/messengers/telegram`, { method: "POST", headers: { "content-type": "application/json", cookie: session.cookie, "x-familiar-csrf": session.csrf }, body: JSON.stringify(body) });

    expect((await post({ token: "not a token" })).status).toBe(400);
    const refused = await post({ token: "999:refused-token" });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toMatch(/telegram did not start: .*(401|Unauthorized)/i);

    const accepted = await post({ token: fake.token });
    expect(accepted.status).toBe(200);
    const setup = (await (await fetch(`${app.url}/api/web/setup`, { headers: { cookie: session.cookie } })).json()) as { messengers: { channel: string; state: string; fromEnvironment: boolean }[] };
    expect(setup.messengers.find((m) => m.channel === "telegram")).toMatchObject({ state: "running", fromEnvironment: false });
    // Live: a Telegram message is answered at once.
    fake.push(updates.text(ANA, "hello"));
    await fake.waitFor(() => fake!.messages.some((m) => m.text === "Hi from Familiar"), 15_000, "the reply");
    expect(readFileSync(join(app.dataDir, "vault.json"), "utf8")).not.toContain(fake.token);

    // After a restart the stored token starts Telegram again.
    const dataDir = app.dataDir;
    await app.stop();
    app = await startTestApp({ ...env, DATA_DIR: dataDir });
    const again = await signIn(app, "owner");
    const after = (await (await fetch(`${app.url}/api/web/setup`, { headers: { cookie: again.cookie } })).json()) as { messengers: { channel: string; state: string }[] };
    expect(after.messengers.find((m) => m.channel === "telegram")!.state).toBe("running");
    fake.push(updates.text(ANA, "still there?"));
    await fake.waitFor(() => fake!.messages.filter((m) => m.text === "Hi from Familiar").length >= 2, 15_000, "the second reply");
  });

  it("a Telegram person signs in with a /web link sent on Telegram and sees their Telegram conversation, marked as such", async () => {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback: text("Hello from Familiar") });
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}` });
    fake.push(updates.text(ANA, "hi <there> from Telegram"));
    await fake.waitFor(() => fake!.messages.some((m) => m.text === "Hello from Familiar"), 15_000, "the reply");
    fake.push(updates.text(ANA, "/web"));
    await fake.waitFor(() => fake!.messages.some((m) => m.text.includes("#token=")), 15_000, "the sign-in link");
    const token = /#token=([A-Za-z0-9_-]+)/.exec(fake.messages.find((m) => m.text.includes("#token="))!.text)![1];

    const signedIn = await fetch(`${app.url}/api/web/session/link`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) });
    expect(signedIn.status).toBe(200);
    const cookie = signedIn.headers.getSetCookie()[0]!.split(";")[0]!;
    const { csrf } = (await signedIn.json()) as { csrf: string };
    const chat = (await (await fetch(`${app.url}/api/web/chat`, { headers: { cookie } })).json()) as { items: { role: string; channel: string; text: string }[] };
    expect(chat.items.map((i) => [i.role, i.channel, i.text])).toEqual([
      ["user", "telegram", "hi <there> from Telegram"],
      ["assistant", "telegram", "Hello from Familiar"],
      ["user", "telegram", "/web"],
      ["assistant", "telegram", expect.stringContaining("to sign in")],
    ]);
    // Said from the web, answered on the web: the same conversation, now with both channels.
    const sent = await fetch(`${app.url}/api/web/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-familiar-csrf": csrf },
      body: JSON.stringify({ text: "and now from the web", clientMessageId: "m1" }),
    });
    expect(sent.status).toBe(202);
    const deadline = Date.now() + 15_000;
    let items: { role: string; channel: string; text: string }[] = [];
    while (Date.now() < deadline) {
      items = ((await (await fetch(`${app.url}/api/web/chat`, { headers: { cookie } })).json()) as { items: typeof items }).items;
      if (items.length >= 6) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(items.slice(4).map((i) => [i.role, i.channel])).toEqual([
      ["user", "local"],
      ["assistant", "local"],
    ]);
    // The model saw the Telegram turns before the web one: one conversation.
    expect(model.requests.at(-1)!.messages.some((m) => m.role === "user" && String(m.content).includes("from Telegram"))).toBe(true);

    // Messengers tab: the Telegram account (and the web one) are listed; Telegram is unlinked, the last one stays.
    const headers = { cookie, "x-familiar-csrf": csrf };
    const linked = (await (await fetch(`${app.url}/api/web/messengers`, { headers })).json()) as { items: { channel: string; accountId: string; running: string }[] };
    expect(linked.items.map((i) => [i.channel, i.running])).toEqual([
      ["telegram", "running"],
      ["local", "running"],
    ]);
    const local = linked.items[1]!;
    expect((await fetch(`${app.url}/api/web/messengers/telegram/${ANA}`, { method: "DELETE", headers })).status).toBe(200);
    expect(await app.store.persons.findIdentity("telegram", String(ANA))).toBeNull();
    expect((await fetch(`${app.url}/api/web/messengers/local/${local.accountId}`, { method: "DELETE", headers })).status).toBe(409);
    expect((await fetch(`${app.url}/api/web/messengers/telegram/${ANA}`, { method: "DELETE", headers })).status).toBe(404);
  });
});
