/**
 * The browser end to end, in real Chromium: a scripted model opens a loopback page (asking first),
 * takes a screenshot (an artifact) and sends it; the person receives it as a real photo on Telegram
 * (fake Bot API, multipart sendPhoto) and as an inline image in the web chat. The artifact is listed
 * in the API with its metadata.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { FakeTelegramApi, updates } from "../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { lastTool, recordingServer } from "../helpers/e2e.js";

const ANA = 42;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** The model: open the page, screenshot it, send the screenshot, say so; repeats a call after approval. */
function browsingModel(pageUrl: string) {
  return (r: RecordedRequest) => {
    const note = r.messages.findLast((m) => m.role === "system" && typeof m.content === "string" && m.content.startsWith("Runtime:"));
    const tool = lastTool(r);
    if (tool === null && note && /approved/.test(String(note.content))) return toolCall("browser_open", { url: pageUrl });
    if (tool === null) return toolCall("browser_open", { url: pageUrl });
    if (tool.includes("approval_required")) return text("I need your OK to open that page.");
    if (tool.includes("Opened")) return toolCall("browser_screenshot", {});
    const artifact = /artifact (art_[0-9a-f]{28})/.exec(tool)?.[1];
    if (artifact && tool.includes("Screenshot")) return toolCall("artifact_send", { id: artifact, text: "Here is the page." });
    return text("Done — I sent you the screenshot.");
  };
}

describe("browser end to end: a screenshot reaches the person as a real attachment", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let fake: FakeTelegramApi | null = null;
  let page: Awaited<ReturnType<typeof recordingServer>> | null = null;

  afterEach(async () => {
    await app?.close();
    await model?.close();
    await fake?.close();
    await page?.close();
    app = null;
    model = null;
    fake = null;
    page = null;
  });

  it("in the web chat: approve once, the screenshot arrives as an inline image the page can fetch, and /api lists it", async () => {
    page = await recordingServer("<html><head><title>Permit slots</title></head><body><h1>Permit office</h1><p>Next slot: Friday 9:00</p></body></html>");
    model = await startFakeOpenAI({ fallback: browsingModel(`${page.url}/slots`) });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, PRIVATE_HOSTS_ALLOWED: page.hostPort });
    await app.say("ana", "show me the permit page");
    const asked = await app.repliesUntil("ana", (ms) => ms.some((m) => m.buttons?.some((b) => b.label === "Approve once")), 60_000);
    expect(page.received).toHaveLength(0);
    const card = asked.find((m) => m.buttons?.some((b) => b.label === "Approve once"))!;
    expect(card.text).toContain("Open 127.0.0.1");
    await app.press("ana", card.id, card.buttons!.find((b) => b.label === "Approve once")!.id);

    const replies = await app.repliesUntil("ana", (ms) => ms.some((m) => (m.attachments?.length ?? 0) > 0), 60_000);
    const withFile = replies.find((m) => m.attachments?.length)!;
    const attachment = withFile.attachments![0]!;
    expect(attachment).toMatchObject({ mimeType: "image/png" });
    const res = await fetch(`${app.url}${attachment.url}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 4)).toEqual(PNG);
    expect(bytes.length).toBe(attachment.size);
    // Another local user cannot fetch it.
    const other = await fetch(`${app.url}${attachment.url.replace("user=ana", "user=bob")}`);
    expect(other.status).toBe(404);

    const identity = (await app.store.persons.findIdentity("local", "ana"))!;
    const listed = (await (await fetch(`${app.url}/api/persons/${identity.personId}/artifacts`)).json()) as { items: unknown[] };
    expect(listed.items).toEqual([expect.objectContaining({ id: attachment.id, mimeType: "image/png", size: bytes.length, source: expect.stringContaining(`screenshot of ${page.url}/slots`) })]);
  }, 120_000);

  it("on Telegram: the screenshot is sent with sendPhoto as a real photo", async () => {
    page = await recordingServer("<html><head><title>Hoodie</title></head><body><h1>Kids hoodie</h1><p>€39</p></body></html>");
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback: browsingModel(`${page.url}/hoodie`) });
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}`, PRIVATE_HOSTS_ALLOWED: page.hostPort });
    fake.push(updates.text(ANA, "send me a picture of the hoodie page"));
    await fake.waitFor(() => fake!.messages.some((m) => m.replyMarkup?.inline_keyboard.flat().some((b) => b.text === "Approve once")), 60_000, "an approval card");
    const card = fake.messages.find((m) => m.replyMarkup?.inline_keyboard.flat().some((b) => b.text === "Approve once"))!;
    const data = card.replyMarkup!.inline_keyboard.flat().find((b) => b.text === "Approve once")!.callback_data!;
    fake.push(updates.press(ANA, data, { messageId: card.messageId }));
    await fake.waitFor(() => fake!.files.length > 0, 60_000, "a photo");
    const photo = fake.files[0]!;
    expect(photo).toMatchObject({ method: "sendPhoto", chatId: String(ANA) });
    expect(photo.name).toMatch(/\.png$/);
    expect(photo.bytes.subarray(0, 4)).toEqual(PNG);
    await fake.waitFor(() => fake!.messages.some((m) => m.text.includes("Here is the page.")), 20_000, "the text with it");
  }, 120_000);
});
