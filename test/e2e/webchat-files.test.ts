/**
 * Files in the web chat, in real Chromium with a scripted model (issue 19, item 2): the person
 * attaches a photo with the attach button — the model sees it (an image part) and sends it back
 * as an artifact, which shows inline; drops a text file on the chat — it is kept in the workspace
 * and comes back as a document, shown as a download link; attaches a voice recording — it is
 * transcribed; a file over MAX_ATTACHMENT_BYTES is not uploaded and answered honestly, as on a
 * messenger (and one sent past the page is refused the same way).
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildWebUi } from "../../webui/build.mjs";
import { imageUrls, startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchChromium, newContext, screenshot, signInAsNew } from "../helpers/browser.js";
import { lastTool, userTexts } from "../helpers/e2e.js";

const LIMIT = 64 * 1024;
const OGG = Buffer.concat([Buffer.from("OggS"), Buffer.alloc(600, 7)]);

/** The model: sends a photo or a kept file back as an artifact; repeats what a voice note said. */
function filesModel() {
  return (r: RecordedRequest) => {
    const tool = lastTool(r);
    const said = userTexts(r).at(-1) ?? "";
    if (tool === null) {
      const transcript = /transcript: "([^"]*)"/.exec(said)?.[1];
      if (transcript) return text(`You said: ${transcript}`);
      const path = /saved in the person's workspace as ([^\s,;)\]]+)/.exec(said)?.[1];
      if (path && said.includes("send it back")) {
        const kind = path.endsWith(".png") ? "image" : "document";
        return toolCall("artifact_create", { kind, title: kind === "image" ? "Your photo" : "Your notes", from: { path } });
      }
      return text(`echo: ${said.slice(0, 60)}`);
    }
    const kept = /as (art_[0-9a-f]{28}), version 1/.exec(tool)?.[1];
    if (kept) return toolCall("artifact_send", { id: kept });
    return text(tool.includes("Your photo") ? "Sent your photo back." : "Sent your notes back.");
  };
}

async function openChat(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await signInAsNew(page, "ana");
  await page.waitForURL(/\/(chat|setup)$/);
  await page.goto(`${url}/chat`);
  await page.locator("#text").waitFor();
}

describe("files in the web chat, in real Chromium", () => {
  let browser: Browser;
  let model: FakeOpenAIServer;
  let app: TestApp;

  beforeAll(async () => {
    await buildWebUi();
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await app?.close();
    await model?.close();
  });

  it("takes photos, files and voice notes by the attach button and drag-and-drop, and shows the files Familiar sends", async () => {
    model = await startFakeOpenAI({ fallback: filesModel(), transcribe: () => "water the tomatoes at seven" });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, MAX_ATTACHMENT_BYTES: String(LIMIT) });
    const page = await (await newContext(browser, "desktop")).newPage();
    await openChat(page, app.url);
    const png = await page.screenshot({ clip: { x: 0, y: 0, width: 12, height: 9 } });

    // A photo by the attach button, with words: the model sees it and sends it back; it shows inline.
    await page.setInputFiles(".composer input[type=file]", { name: "garden.png", mimeType: "image/png", buffer: png });
    await page.getByRole("list", { name: "Files to send" }).getByText("garden.png").waitFor();
    await page.fill("#text", "what is this? send it back to me");
    await page.click(".composer button[type=submit]");
    await page.getByText("Sent your photo back.").waitFor({ timeout: 60_000 });
    const seen = model.requests.find((r) => imageUrls(r).length > 0)!;
    expect(imageUrls(seen)[0]).toBe(`data:image/png;base64,${png.toString("base64")}`);
    const image = page.locator(".msg.them .attachments img");
    await image.waitFor();
    await expect.poll(() => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(12);
    expect(await image.getAttribute("alt")).toMatch(/\.png$/);
    // The person's own message shows the photo's line and the words.
    await page.locator(".msg.me", { hasText: "what is this? send it back to me" }).getByText("[photo: garden.png]").waitFor();

    // A file dropped on the chat: kept in the workspace, sent back as a document — a download link.
    const dropped = await page.evaluateHandle(() => {
      const g = globalThis as unknown as { DataTransfer: new () => { items: { add(f: unknown): void } }; File: new (parts: string[], name: string, options: { type: string }) => unknown };
      const data = new g.DataTransfer();
      data.items.add(new g.File(["# Shopping\n\n- basil\n- twine\n"], "notes.md", { type: "text/markdown" }));
      return data;
    });
    await page.dispatchEvent("main.chat", "drop", { dataTransfer: dropped });
    await page.getByRole("list", { name: "Files to send" }).getByText("notes.md").waitFor();
    await page.fill("#text", "keep these and send it back");
    await page.click(".composer button[type=submit]");
    await page.getByText("Sent your notes back.").waitFor({ timeout: 60_000 });
    const link = page.locator(".msg.them .attachments .file").last().getByRole("link", { name: "Download Your-notes.md" });
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(readFileSync(await download.path(), "utf8")).toContain("- twine");
    // Its artifact page opens from the chat too.
    const open = await page.locator(".msg.them .attachments .file").last().getByRole("link", { name: "Open Your-notes.md" }).getAttribute("href");
    const artifactPage = await page.request.get(`${app.url}${open}`);
    expect(artifactPage.status()).toBe(200);
    expect(await artifactPage.text()).toContain("Your notes");
    const person = (await app.store.persons.listPersons({ limit: 10 })).items.find((p) => p.displayName === "ana")!;

    // A voice recording: transcribed through the endpoint, the model answers what it says.
    await page.setInputFiles(".composer input[type=file]", { name: "memo.ogg", mimeType: "audio/ogg", buffer: OGG });
    await page.click(".composer button[type=submit]");
    await page.getByText("You said: water the tomatoes at seven").waitFor({ timeout: 60_000 });
    expect(model.transcriptions).toHaveLength(1);
    expect(model.transcriptions[0]!.bytes.equals(OGG)).toBe(true);

    // Over the limit: not uploaded, answered as a messenger's file would be; no model call for it.
    const calls = model.requests.length;
    await page.setInputFiles(".composer input[type=file]", { name: "huge.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(LIMIT + 1, 1) });
    await page.click(".composer button[type=submit]");
    await page.getByText("I take files up to 64 KB, so I didn't keep it.").waitFor({ timeout: 30_000 });
    expect(model.requests.length).toBe(calls);
    await screenshot(page, "chat-files");
    // On a 360 px phone the composer (paperclip, box, Send) and the files fit the width.
    const phone = await (await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, storageState: await page.context().storageState() })).newPage();
    await phone.goto(`${app.url}/chat`);
    await phone.getByText("Sent your notes back.").waitFor();
    await phone.setInputFiles(".composer input[type=file]", { name: "a-rather-long-file-name-for-a-phone.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF-1.4") });
    expect(await phone.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    expect((await phone.locator(".composer button[type=submit]").boundingBox())!.x + 10).toBeLessThanOrEqual(360);
    await screenshot(phone, "chat-files-phone");
    await phone.close();

    // Past the page (a script posting the file itself): the server holds the same limit.
    const direct = await page.evaluate(async (size) => {
      const g = globalThis as unknown as { FormData: new () => { append(k: string, v: unknown, n?: string): void }; Blob: new (parts: unknown[]) => unknown; fetch: typeof fetch };
      const session = (await (await g.fetch("/api/web/session")).json()) as { csrf: string };
      const form = new g.FormData();
      form.append("clientMessageId", "direct-1");
      form.append("file", new g.Blob([new Uint8Array(size)]), "sneaky.bin");
      const res = await g.fetch("/api/web/chat/files", { method: "POST", headers: { "x-familiar-csrf": session.csrf }, body: form as never });
      return { status: res.status, body: (await res.json()) as { notice: string | null } };
    }, LIMIT + 10);
    expect(direct).toEqual({ status: 202, body: { outcome: "handled", notice: null } });
    await expect.poll(() => page.getByText("I take files up to 64 KB, so I didn't keep it.").count(), { timeout: 30_000 }).toBe(2);
    // Without the page's CSRF token an upload is refused.
    const forged = await page.evaluate(async () => (await fetch("/api/web/chat/files", { method: "POST", body: new FormData() })).status);
    expect(forged).toBe(403);

    // The files are in the workspace's inbox, as a messenger's would be.
    const workspace = join(app.dataDir, "persons", person.id, "workspace");
    const photo = model.requests.map((r) => /saved in the person's workspace as ([^\s,;)\]]+\.png)/.exec(userTexts(r).join("\n"))?.[1]).find(Boolean)!;
    expect(photo).toMatch(/^inbox\//);
    expect(readFileSync(join(workspace, photo)).equals(png)).toBe(true);
    const kept = readdirSync(join(workspace, photo, "..")).sort();
    expect(kept).toEqual(["garden.png", "memo.ogg", "notes.md"]);
  }, 240_000);
});
