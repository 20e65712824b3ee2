/**
 * The approval card in the web chat, in real Chromium (Debian's, driven by playwright-core) at a
 * phone's 360 px width: a new user signs in on this machine, the card for a long, encoded request
 * arrives drawn from Sentinel's structured view, nothing overflows to the right, a screenshot is
 * written to `test-artifacts/webapp/approval-card-360.png`, and the person approves it with a tap.
 */
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildWebUi } from "../../webui/build.mjs";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchChromium, newContext, signInAsNew, screenshot } from "../helpers/browser.js";
import { lastTool, recordingServer } from "../helpers/e2e.js";

describe("the approval card in the web chat at 360 px (real Chromium)", () => {
  let browser: Browser | null = null;
  let app: TestApp | null = null;
  let model: FakeOpenAIServer | null = null;
  let outside: Awaited<ReturnType<typeof recordingServer>> | null = null;

  beforeAll(async () => {
    await buildWebUi();
  }, 60_000);
  afterEach(async () => {
    await browser?.close();
    await app?.close();
    await model?.close();
    await outside?.close();
  });

  it("fits the screen without horizontal overflow, says what will be sent, and takes a tap", async () => {
    outside = await recordingServer(() => ({ status: 200, body: "saved", type: "text/plain" }));
    const longPath = `/v1/notes/${"segment-".repeat(12)}end?ref=${"x".repeat(80)}`;
    const body = JSON.stringify({ title: "Groceries", items: ["milk", "eggs"], blob: Buffer.from("Ana's PIN is 4921").toString("base64"), note: "hi \u202Eevil\u202C" });
    model = await startFakeOpenAI({
      fallback: (r) => {
        const note = r.messages.at(-1);
        if (note?.role === "system" && String(note.content).includes("approved")) {
          return toolCall("http_request", { method: "POST", url: `${outside!.url}${longPath}`, body, headers: { "Content-Type": "application/json" } });
        }
        const tool = lastTool(r);
        if (tool === null) return toolCall("http_request", { method: "POST", url: `${outside!.url}${longPath}`, body, headers: { "Content-Type": "application/json" } });
        return text(tool.includes("approval_required") ? "I need your OK first." : "Saved your note.");
      },
    });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, PRIVATE_HOSTS_ALLOWED: outside.hostPort });

    browser = await launchChromium();
    const page = await (await newContext(browser, "phone")).newPage();
    await page.goto(app.url);
    await signInAsNew(page, "ana");
    await page.waitForURL("**/chat");
    await page.fill("#text", "save my grocery note");
    await page.click(".composer button[type=submit]");
    await page.waitForSelector(".approval-card", { timeout: 20_000 });
    await page.waitForSelector(".msg.approval .card-buttons button");

    // Nothing sticks out to the right, in the page or inside the card.
    // Evaluated in the page (a string: this project's TypeScript has no DOM types), parsed on return.
    const layout = z
      .object({ width: z.number(), scrollWidth: z.number(), chatScroll: z.number(), overflowing: z.array(z.string()) })
      .parse(
        await page.evaluate(`(() => {
          const width = document.documentElement.clientWidth;
          const card = document.querySelector(".msg.approval");
          const overflowing = [...card.querySelectorAll("*")].filter((el) => el.getBoundingClientRect().right > width + 0.5).map((el) => el.tagName + "." + el.className);
          const scroller = document.querySelector(".scroller");
          return { width, scrollWidth: document.documentElement.scrollWidth, chatScroll: scroller ? scroller.scrollWidth : 0, overflowing };
        })()`),
      );
    expect(layout.width).toBe(360);
    expect(layout.scrollWidth).toBeLessThanOrEqual(360);
    expect(layout.chatScroll).toBeLessThanOrEqual(360);
    expect(layout.overflowing).toEqual([]);

    // It says what will be sent, in full and decoded.
    const cardText = await page.textContent(".approval-card");
    expect(cardText).toContain("Familiar wants to send data to");
    // The full destination; a run of 80 equal characters is shown as one plus its count.
    expect(cardText).toContain(`${outside.url}${longPath.replace("x".repeat(80), "x⟨×80⟩")}`);
    expect(cardText).toContain(`"Ana's PIN is 4921"`);
    expect(cardText).toContain("⟦U+202E⟧");
    const labels = await page.$$eval(".msg.approval .card-buttons button", (bs) => bs.map((b) => b.textContent));
    expect(labels).toEqual(["Approve once", "Allow for this task", "Allow for this session (until 2 h away)", "Allow for 24 h", expect.stringMatching(/^Always allow (reading|sending data to) /), "Deny"]);

    // The whole card on one phone-width screen: as tall as the card needs, still 360 px wide.
    const cardHeight = await page.$eval(".msg.approval", (el) => el.getBoundingClientRect().height);
    await page.setViewportSize({ width: 360, height: Math.ceil(cardHeight) + 320 });
    await page.$eval(".msg.approval", (el) => el.scrollIntoView({ block: "end" }));
    expect(z.number().parse(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(360);
    const shot = await screenshot(page, "approval-card-360");
    expect(existsSync(shot)).toBe(true);

    // A tap approves it once: the card shows the decision, the request runs once.
    await page.click('.msg.approval .card-buttons button:has-text("Approve once")');
    await page.waitForSelector(".approval-card .ac-status", { timeout: 15_000 });
    expect(await page.textContent(".approval-card .ac-status")).toContain("Approved once");
    await page.waitForSelector("text=Saved your note.", { timeout: 15_000 });
    expect(outside.received).toHaveLength(1);
  }, 90_000);
});
