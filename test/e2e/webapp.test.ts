import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildWebUi } from "../../webui/build.mjs";
import {
  startFakeOpenAI,
  text,
  toolCall,
  type FakeOpenAIServer,
  type RecordedRequest,
} from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchChromium, newContext, signInAsNew, notificationProbe, screenshot } from "../helpers/browser.js";
import { lastTool, recordingServer, until } from "../helpers/e2e.js";
import { MESSAGE_TEXT_MAX, formatCount } from "../../web/shared/message-limit.js";

const KEY = "sk-fake-web-setup-0123456789";

function systemText(r: RecordedRequest): string {
  return r.messages.filter((m) => m.role === "system").map((m) => String(m.content)).join("\n");
}

/**
 * A scripted model for the whole walk: it remembers a preference, creates a goal with a wake-up
 * tomorrow, fetches a page (which asks for approval first and is repeated once approved), and
 * echoes anything else.
 */
function scriptedModel(pageUrl: () => string) {
  return startFakeOpenAI({
    apiKey: KEY,
    fallback: (r) => {
      const last = r.messages.at(-1);
      if (last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:")) {
        const call = [...r.messages].reverse().find((m) => m.role === "assistant" && m.tool_calls?.length);
        const fn = call && call.role === "assistant" ? call.tool_calls![0]! : null;
        if (!/denied|expired/.test(last.content) && fn && fn.type === "function") return toolCall(fn.function.name, fn.function.arguments);
        return text("Understood.");
      }
      const user = r.lastUserText ?? "";
      const tool = lastTool(r);
      if (user.includes("tea")) return tool === null ? toolCall("remember", { kind: "preference", text: "Likes tea" }) : text("Noted: you wrote <angle brackets> & **tea**.");
      if (user.includes("plants")) {
        if (tool === null) return toolCall("create_goal", { title: "Water the plants" });
        const goalId = /created goal (\S+)/.exec(tool)?.[1];
        if (goalId) return toolCall("schedule_wakeup", { note: "water the plants", at: new Date(Date.now() + 86_400_000).toISOString(), goalId, notify: "always" });
        return text("I'll remind you tomorrow.");
      }
      if (user.includes("deals")) {
        if (tool === null) return toolCall("http_fetch", { url: `${pageUrl()}/deals` });
        if (tool.includes("approval_required")) return text("I need your OK first.");
        return text("Fetched the deals.");
      }
      return text(`echo: ${user}`);
    },
  });
}

/** The chat bubbles' visible text, in order. */
const bubbles = (page: Page) => page.locator(".messages .bubble").allInnerTexts();

/** Waits until the tab's title is `title` (the page's CSP forbids waitForFunction's string eval). */
async function titleIs(page: Page, title: string): Promise<void> {
  const end = Date.now() + 15_000;
  while ((await page.title()) !== title) {
    if (Date.now() > end) throw new Error(`title stayed "${await page.title()}", expected "${title}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function say(page: Page, words: string): Promise<void> {
  await page.fill("#text", words);
  await page.click(".composer button[type=submit]");
}

describe("the web app in real Chromium", () => {
  let browser: Browser;
  let model: FakeOpenAIServer;
  let app: TestApp;
  let site: Awaited<ReturnType<typeof recordingServer>>;

  beforeAll(async () => {
    await buildWebUi();
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await app?.close();
    await model?.close();
    await site?.close();
  });

  it("walks first-run setup, every dashboard tab with live data, and the chat from a second browser", async () => {
    site = await recordingServer("<html><body><h1>Deals</h1><p>Lisbon €89.</p></body></html>");
    model = await scriptedModel(() => site.url);
    // No model in the environment: the setup page is the way in.
    app = await startTestApp({ PRIVATE_HOSTS_ALLOWED: site.hostPort });
    const desktop = await newContext(browser, "desktop");
    const page = await desktop.newPage();
    await page.goto(app.url);

    // Sign in by name (this machine), then the setup page opens because no model is configured.
    await signInAsNew(page, "ana");
    await page.waitForURL("**/setup");
    await page.getByRole("heading", { name: "Set up Familiar" }).waitFor();
    await page.getByText("Familiar needs a language model").waitFor();
    await screenshot(page, "setup-desktop");

    await page.getByLabel("OpenAI-compatible server").check();
    await page.fill("#base-url", model.url);
    await page.fill("#api-key", KEY);
    await page.getByRole("button", { name: "Test connection" }).click();
    await page.locator("#model").waitFor();
    expect(await page.locator("#model option").allInnerTexts()).toEqual(["fake-model"]);
    await page.getByRole("button", { name: "Use this model" }).click();
    await page.getByText("Familiar now uses fake-model").waitFor();
    expect(model.requests).toHaveLength(1); // the one tiny test call
    // The key is in the vault, encrypted; not in the setup file, not in the logs.
    expect(readFileSync(join(app.dataDir, "vault.json"), "utf8")).not.toContain(KEY);
    expect(readFileSync(join(app.dataDir, "setup.json"), "utf8")).not.toContain(KEY);
    expect(app.logs.join("")).not.toContain(KEY);

    // Used without a restart: the chat answers through the model just chosen.
    // Coming back to setup: the choice in use is shown, and the way to the chat is at the top.
    await page.reload();
    await page.getByText("via OpenAI-compatible server").waitFor();
    expect(await page.getByLabel("OpenAI-compatible server").isChecked()).toBe(true);
    expect(await page.locator("#base-url").inputValue()).toBe(model.url);
    expect(await page.locator("#api-key").inputValue()).toBe("");
    expect(await page.locator("#api-key").getAttribute("placeholder")).toContain("A key is stored");
    const start = page.getByRole("link", { name: "Start chatting" });
    expect((await start.boundingBox())!.y).toBeLessThan(300);
    // A wrong key typed on the page is blamed on the page, not on an environment variable.
    await page.fill("#api-key", "sk-wrong-key-000000000000");
    await page.getByRole("button", { name: "Test connection" }).click();
    await page.getByRole("button", { name: "Use this model" }).click();
    const refusal = await page.getByRole("alert").innerText();
    expect(refusal).toMatch(/API key entered on this page/);
    expect(refusal).not.toContain("OPENAI_API_KEY");
    // With the stored key (the box left empty) the test passes again.
    await page.getByRole("button", { name: "Back" }).click();
    await page.fill("#api-key", "");
    await page.getByRole("button", { name: "Test connection" }).click();
    await page.locator("#model").waitFor();
    await start.click();
    await page.waitForURL("**/chat");
    await say(page, "I like <angle brackets> & tea");
    await page.getByText("Noted: you wrote").waitFor();
    const said = await bubbles(page);
    expect(said).toContain("I like <angle brackets> & tea");
    expect(said.some((t) => t.includes("Noted: you wrote <angle brackets> & tea."))).toBe(true);
    expect(await page.locator(".messages .bubble strong", { hasText: "tea" }).count()).toBe(1);
    expect(await page.locator(".messages .bubble angle").count()).toBe(0);
    expect(model.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);

    await say(page, "remind me to water the plants tomorrow");
    await page.getByText("I'll remind you tomorrow.").waitFor();
    await say(page, "what's on the deals page?");
    // The approval card shows in the chat with its buttons; it is approved from the dashboard.
    await page.getByRole("button", { name: "Always" }).waitFor();
    await screenshot(page, "chat-desktop");

    // Settings first, so the goal's wake-up shows in the new time zone.
    await page.goto(`${app.url}/dashboard/settings`);
    // Mistakes are told in sentences, never as a library's wording.
    await page.fill("#s-name", "");
    await page.fill("#s-tz", "Nowhere Land");
    await page.getByRole("button", { name: "Save settings" }).click();
    const wrong = await page.getByRole("alert").innerText();
    expect(wrong).toContain("Please enter a name.");
    expect(wrong).toContain("is not a time zone Familiar knows");
    expect(wrong).not.toMatch(/displayName|timeZone|expected|Too small/);
    await page.fill("#s-name", "ana");
    // A city in any case is enough.
    await page.fill("#s-tz", "tokyo");
    await page.fill("#s-persona", "Jeeves");
    await page.fill("#s-style", "formal, one short paragraph");
    await page.selectOption("#s-pro", "low");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await page.locator("#s-tz").inputValue()).toBe("Asia/Tokyo");

    await page.getByRole("link", { name: "Now" }).click();
    await page.locator(".status-line", { hasText: "Waiting for your approval" }).waitFor();
    await page.getByRole("link", { name: "Goals" }).click();
    const goal = page.locator(".card", { hasText: "Water the plants" });
    await goal.getByText("next wake-up").waitFor();
    expect(await goal.innerText()).toContain("(Asia/Tokyo)");
    await goal.getByRole("button", { name: "Pause" }).click();
    await page.getByText("is now paused").waitFor();
    // A paused goal's check-in shows as paused, without a next wake-up.
    await goal.getByText("will not wake while the goal is paused").waitFor();
    expect(await goal.locator(".tasks").innerText()).not.toMatch(/pending|next wake-up/);
    await goal.getByRole("button", { name: "Resume" }).click();
    await page.getByText("is now active").waitFor();
    await goal.getByText("next wake-up").waitFor();
    await screenshot(page, "dashboard-goals-desktop");

    await page.goto(`${app.url}/dashboard/approvals`);
    const card = page.locator(".card", { hasText: "Approve once" });
    await card.waitFor();
    await screenshot(page, "dashboard-approvals-desktop");
    await card.getByRole("button", { name: "Always" }).click();
    await page.getByText("Nothing is waiting for your approval.").waitFor();
    await until(() => site.received.length > 0, "the approved fetch");
    await page.goto(`${app.url}/chat`);
    await page.getByText("Fetched the deals.").waitFor();
    // The card in the chat was edited to the decision: its buttons are gone.
    expect(await page.locator(".messages .card-buttons").count()).toBe(0);

    await page.goto(`${app.url}/dashboard/permissions`);
    const grant = page.locator(".card", { hasText: "always" });
    await grant.waitFor();
    // In words: the method and where, and the web chat by name (no capability ids or arrows).
    const grantText = await grant.innerText();
    expect(grantText).toMatch(/^Read \(GET\) 127\.0\.0\.1:\d+/);
    expect(grantText).toContain("in the web chat");
    expect(grantText).not.toMatch(/web\.fetch|→|local/);
    await grant.getByRole("button", { name: "Revoke" }).click();
    await page.getByText("You have not allowed anything lasting.").waitFor();
    const identity = (await app.store.persons.findIdentity("local", "ana"))!;
    expect(await app.store.grants.listActiveGrants(identity.personId, new Date())).toEqual([]);

    await page.goto(`${app.url}/dashboard/activity`);
    await page.locator(".lines li", { hasText: "Revoked read" }).waitFor();
    // Every line reads as words: no dotted kinds, no rule ids, the web chat by name, what was sent.
    const lines = await page.locator(".lines li").allInnerTexts();
    for (const line of lines) expect(line).not.toMatch(/\b[a-z]+\.[a-z_]+\b(?![./])|\b(allow|deny|ask)-[a-z-]+|\bon local\b/);
    expect(lines.some((l) => l.includes("Sent in the web chat: “Fetched the deals."))).toBe(true);
    // A short filter of human categories; a tool call is one line, in a sentence.
    expect(await page.locator(".filters select >> nth=0 >> option").count()).toBeLessThanOrEqual(8);
    await page.selectOption(".filters select >> nth=0", "done");
    await page.locator(".lines li", { hasText: "because you allowed this before" }).first().waitFor();
    await expect.poll(() => page.locator(".lines li", { hasText: "Revoked read" }).count(), { timeout: 15_000 }).toBe(0);
    await screenshot(page, "dashboard-activity-desktop");

    await page.goto(`${app.url}/dashboard/memory`);
    const memory = page.locator(".card", { hasText: "Likes tea" });
    await memory.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Edit what Familiar remembers").fill("");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Please write what Familiar should remember").waitFor();
    await page.getByLabel("Edit what Familiar remembers").fill("Likes green tea");
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator(".card", { hasText: "Likes green tea" }).waitFor();
    expect((await app.store.memory.listMemory(identity.personId)).items.map((m) => m.text)).toEqual(["Likes green tea"]);
    expect(await page.locator(".card", { hasText: "Likes green tea" }).innerText()).toContain("in the web chat");

    await page.goto(`${app.url}/dashboard/messengers`);
    await page.getByText("account ana").waitFor();

    // The settings are in the next model request.
    const before = model.requests.length;
    await page.goto(`${app.url}/chat`);
    await say(page, "hello again");
    await page.getByText("echo: hello again").waitFor();
    const next = model.requests.slice(before).find((r) => r.lastUserText === "hello again")!;
    expect(systemText(next)).toContain("You are Jeeves");
    expect(systemText(next)).toContain("formal, one short paragraph");
    expect(systemText(next)).toContain("Asia/Tokyo");
    expect(systemText(next)).toContain("Proactivity low");
    expect(systemText(next)).toContain("Likes green tea");

    // A second browser (a phone) sees the whole conversation, both sides, from the server.
    const phone = await newContext(browser, "phone", "dark");
    await phone.grantPermissions(["notifications"], { origin: app.url });
    await phone.addInitScript(notificationProbe);
    const mobile = await phone.newPage();
    await mobile.goto(app.url);
    // The same person whatever the spelling: capitals and spaces around it do not matter.
    await mobile.fill("#name", "  ANA ");
    await mobile.click("button[type=submit]");
    await mobile.waitForURL("**/chat");
    await mobile.getByText("echo: hello again").waitFor();
    const history = await bubbles(mobile);
    expect(history).toContain("I like <angle brackets> & tea");
    expect(history).toContain("remind me to water the plants tomorrow");
    expect(history.some((t) => t.includes("Fetched the deals."))).toBe(true);
    // Short time lines: the time of day for today's messages; the channel only when it is not this chat.
    expect(await mobile.locator(".msg.me .meta").first().innerText()).toMatch(/^\d{1,2}:\d{2}( [AP]M)?$/);
    await screenshot(mobile, "chat-phone");
    // Nothing is wider than the 360-px screen.
    expect(Number(await mobile.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(360);

    // A proactive message while the tab is hidden: a notification and an unread count in the title.
    await mobile.evaluate("window.__setHidden(true)");
    await app.store.outbox.enqueueOutbound({ personId: identity.personId, deliveryKey: "test:proactive:1", text: "Reminder: water the plants", channel: "local" }, new Date());
    app.familiar.outboxLoop.poke();
    await titleIs(mobile, "(1) Familiar");
    const notes: unknown = await mobile.evaluate("window.__notes");
    expect(notes).toEqual([{ title: "Familiar", body: "Reminder: water the plants" }]);
    await mobile.evaluate("window.__setHidden(false)");
    await titleIs(mobile, "Familiar");

    await mobile.goto(`${app.url}/dashboard/goals`);
    await mobile.getByRole("heading", { name: /Water the plants/ }).waitFor();
    await screenshot(mobile, "dashboard-goals-phone");
    // Every dashboard tab is on screen at 360 px (the bar wraps), the active one included.
    for (const tab of ["goals", "messengers"]) {
      await mobile.goto(`${app.url}/dashboard/${tab}`);
      await mobile.locator(".tabs a[aria-current=page]").waitFor();
      const boxes = await mobile.locator(".tabs a").evaluateAll((links) => links.map((l) => l.getBoundingClientRect()).map((r) => ({ left: r.left, right: r.right, top: r.top })));
      expect(boxes).toHaveLength(10);
      for (const b of boxes) expect(b.left >= 0 && b.right <= 360).toBe(true);
    }
    await screenshot(mobile, "dashboard-messengers-phone");
    expect(Number(await mobile.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(360);
    await mobile.goto(`${app.url}/setup`);
    await mobile.getByText("Using").waitFor();
    await screenshot(mobile, "setup-phone");
    await phone.close();
    await desktop.close();
  }, 180_000);

  it("answers an approval card in the chat on a 360-px phone, through the same decision path as a messenger button", async () => {
    site = await recordingServer("<html><body><p>Lisbon €89.</p></body></html>");
    model = await scriptedModel(() => site.url);
    app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: KEY, PRIVATE_HOSTS_ALLOWED: site.hostPort });
    const phone = await newContext(browser, "phone");
    const page = await phone.newPage();
    await page.goto(app.url);
    await signInAsNew(page, "cy");
    await page.waitForURL("**/chat");
    await say(page, "what's on the deals page?");
    const card = page.locator(".msg", { has: page.locator(".card-buttons") });
    await card.waitFor();
    await page.getByText("I need your OK first.").waitFor();
    // What was said shows once: the sending bubble gave way to the logged message.
    expect((await bubbles(page)).filter((t) => t === "what's on the deals page?")).toHaveLength(1);
    expect(await page.locator(".msg.pending").count()).toBe(0);
    await screenshot(page, "chat-card-phone");
    // The card and all its buttons fit the phone's width.
    const box = await card.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(360);
    for (const button of await card.locator("button").all()) {
      const b = await button.boundingBox();
      expect(b!.x + b!.width).toBeLessThanOrEqual(360);
    }
    expect(site.received).toHaveLength(0);
    const cardIndex = async () => (await page.locator(".messages > .msg").evaluateAll((els) => els.map((e) => e.classList.contains("approval")))).indexOf(true);
    const shownAt = await cardIndex();
    expect(shownAt).toBeGreaterThanOrEqual(0);
    await card.getByRole("button", { name: "Approve once" }).click();
    await page.getByText("Fetched the deals.").waitFor();
    expect(site.received).toHaveLength(1);
    // The card now shows the decision, without buttons; the decision is audited like any press.
    await page.locator(".messages .bubble", { hasText: "Approved" }).waitFor();
    expect(await page.locator(".messages .card-buttons").count()).toBe(0);
    // The decided card stays where it was first shown, live and after a reload.
    expect(await cardIndex()).toBe(shownAt);
    await page.reload();
    await page.getByText("Fetched the deals.").waitFor();
    expect(await cardIndex()).toBe(shownAt);
    const identity = (await app.store.persons.findIdentity("local", "cy"))!;
    const audit = await app.store.audit.listAudit(identity.personId, { limit: 50 });
    expect(audit.items.map((e) => e.kind)).toContain("approval.decided");
    await phone.close();
  }, 90_000);

  it("never cuts a long message: the box grows, counts near the limit, refuses over it; the API answers 413", async () => {
    model = await startFakeOpenAI({ apiKey: KEY });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: KEY });
    const context = await newContext(browser, "desktop");
    const page = await context.newPage();
    await page.goto(app.url);
    await signInAsNew(page, "dee");
    await page.waitForURL("**/chat");
    const box = page.locator("#text");
    const oneLine = (await box.boundingBox())!.height;
    await box.fill("line\n".repeat(6));
    const sixLines = (await box.boundingBox())!.height;
    expect(sixLines).toBeGreaterThan(oneLine * 2);
    expect(await page.locator("#text-count").count()).toBe(0);

    // Over the limit: a counter, a clear refusal, the text stays, nothing is sent.
    const tooLong = "This is a long message. ".repeat(2_000); // 48,000 characters
    await box.fill(tooLong);
    const viewport = page.viewportSize()!.height;
    const grown = (await box.boundingBox())!.height;
    expect(grown).toBeGreaterThan(sixLines);
    expect(grown).toBeLessThanOrEqual(viewport * 0.45); // a max height, then it scrolls
    expect(await page.locator("#text-count").innerText()).toBe(`${formatCount(tooLong.length)} / ${formatCount(MESSAGE_TEXT_MAX)}`);
    await page.click(".composer button[type=submit]");
    await page.getByRole("alert").filter({ hasText: `at most ${formatCount(MESSAGE_TEXT_MAX)}` }).waitFor();
    expect(await box.inputValue()).toBe(tooLong);
    expect(await page.locator(".msg").count()).toBe(0);

    // Just under the limit: sent and stored whole.
    const long = tooLong.slice(0, MESSAGE_TEXT_MAX - 10).trim();
    await box.fill(long);
    expect(await page.getByRole("alert").count()).toBe(0);
    await page.click(".composer button[type=submit]");
    await until(() => model.requests.some((r) => r.lastUserText?.includes(long.slice(0, 200))), "the long message reaching the model");
    await expect.poll(() => page.locator(".msg.me:not(.pending) .bubble").first().innerText().catch(() => ""), { timeout: 15_000 }).toBe(long);
    expect(await box.inputValue()).toBe("");

    // The API states the limit: an over-limit request is refused whole (413), nothing stored.
    const session = (await (await page.request.get(`${app.url}/api/web/session`)).json()) as { csrf: string };
    const before = model.requests.length;
    const res = await page.request.post(`${app.url}/api/web/chat`, { data: { text: tooLong, clientMessageId: "api-long-1" }, headers: { "x-familiar-csrf": session.csrf } });
    expect(res.status()).toBe(413);
    const body = (await res.json()) as { error: string; limit: number; length: number };
    expect(body).toMatchObject({ limit: MESSAGE_TEXT_MAX, length: tooLong.length });
    expect(body.error).toContain(formatCount(MESSAGE_TEXT_MAX));
    expect(model.requests.length).toBe(before);

    // A URL inside JSON-like text links only the URL; the quotes and the rest stay text.
    await say(page, '{"url":"http://127.0.0.1:9/order","method":"POST"}');
    await page.getByText("echo: {").waitFor();
    const linked = await page.locator(".messages .bubble a").allInnerTexts();
    expect(linked.length).toBeGreaterThanOrEqual(2);
    for (const l of linked) expect(l).toBe("http://127.0.0.1:9/order");
    await context.close();
  }, 90_000);

  it("keeps a draft and failed sends across a reload, sends them again by itself, and a message that did arrive is not said twice", async () => {
    model = await startFakeOpenAI({ apiKey: KEY });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: KEY });
    const context = await newContext(browser, "desktop");
    const page = await context.newPage();
    // The live log stays away until the reload (so only the send's own answer could confirm it).
    await page.route("**/api/web/chat/live*", (route) => route.abort("failed"));
    await page.goto(app.url);
    // A name with a space and accents is fine; an over-long one is refused in words, not cut.
    await page.fill("#name", "É".repeat(70));
    await page.click("button[type=submit]");
    await page.getByText("A name can be at most 64 characters; this one has 70.").waitFor();
    await signInAsNew(page, "Ève Marín");
    await page.waitForURL("**/chat");

    // One send never reaches the server; another reaches it but its answer is lost on the way back.
    let mode: "drop" | "lose-answer" | "pass" = "drop";
    await page.route("**/api/web/chat", async (route) => {
      if (route.request().method() !== "POST" || mode === "pass") return route.continue();
      if (mode === "lose-answer") await route.fetch();
      return route.abort("failed");
    });
    await say(page, "never arrived");
    await page.getByRole("button", { name: "Retry" }).waitFor();
    expect(await page.locator(".msg.pending .meta").innerText()).toContain("sent again when Familiar is back");
    // The answer is lost and the live log is away too: the page cannot know it arrived.
    mode = "lose-answer";
    await say(page, "arrived unconfirmed");
    await until(() => model.requests.some((r) => r.lastUserText === "arrived unconfirmed"), "the unconfirmed message reaching the model");
    await page.getByRole("button", { name: "Retry" }).nth(1).waitFor();
    await page.fill("#text", "half-written thought");

    mode = "pass";
    await page.unroute("**/api/web/chat/live*");
    await page.reload();
    // Both unsent messages come back and are sent again by themselves once Familiar answers; the draft is back in the box.
    await page.getByText("echo: never arrived").waitFor();
    await expect.poll(() => page.locator(".msg.pending").count(), { timeout: 15_000 }).toBe(0);
    await screenshot(page, "chat-unsent-resent-after-reload");
    expect(await page.locator("#text").inputValue()).toBe("half-written thought");
    // The retry carried the same client id: the server recognised it, the model saw it once.
    expect(model.requests.filter((r) => r.lastUserText === "arrived unconfirmed")).toHaveLength(1);
    expect(model.requests.filter((r) => r.lastUserText === "never arrived")).toHaveLength(1);

    // Once accepted, nothing is kept: a reload shows no unsent messages.
    await page.reload();
    await page.getByText("echo: never arrived").waitFor();
    expect(await page.locator(".msg.pending").count()).toBe(0);
    expect(await page.locator("#text").inputValue()).toBe("half-written thought");
    await context.close();
  }, 90_000);

  it("retries a failed send with the same id, and reconnects after the server comes back", async () => {
    model = await startFakeOpenAI({ apiKey: KEY });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: KEY });
    const context = await newContext(browser, "desktop");
    const page = await context.newPage();
    await page.goto(app.url);
    await signInAsNew(page, "bo");
    await page.waitForURL("**/chat");
    // The environment configures the model: the setup page says so and offers no form.
    await page.goto(`${app.url}/setup`);
    await page.getByText("they win over this page").waitFor();
    expect(await page.locator("#base-url").count()).toBe(0);
    await page.goto(`${app.url}/chat`);

    // The first POST fails on the way (the network drops it): the message shows Retry.
    let failOnce = true;
    await page.route("**/api/web/chat", async (route) => {
      if (route.request().method() === "POST" && failOnce) {
        failOnce = false;
        return route.abort("failed");
      }
      return route.continue();
    });
    await say(page, "first try");
    await page.getByRole("button", { name: "Retry" }).click();
    await page.getByText("echo: first try").waitFor();
    expect(model.requests.filter((r) => r.lastUserText === "first try")).toHaveLength(1);

    // The server goes away and comes back on the same port and data: the page reconnects by itself.
    const port = new URL(app.url).port;
    const dataDir = app.dataDir;
    await app.stop();
    await page.getByText("Reconnecting…").waitFor();
    app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: KEY, DATA_DIR: dataDir, PORT: port });
    // Back within a second (polled every half second); the bound is generous for a shared machine.
    await page.getByText("Reconnecting…").waitFor({ state: "detached", timeout: 5_000 });
    await say(page, "still there?");
    await page.getByText("echo: still there?").waitFor();
    await context.close();
  }, 90_000);
});
