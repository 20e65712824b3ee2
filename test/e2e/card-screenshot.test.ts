/**
 * The approval card in the web chat, in real Chromium (Debian's, driven by playwright-core) at a
 * phone's 360 px width: a new user opens the page, the card for a long, encoded request arrives,
 * nothing overflows to the right, a screenshot is written to `test-results/approval-card-360.png`,
 * and the person approves it with a tap.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { lastTool, recordingServer } from "../helpers/e2e.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const SCREENSHOT = join(process.cwd(), "test-results", "approval-card-360.png");

describe("the approval card in the web chat at 360 px (real Chromium)", () => {
  let browser: Browser | null = null;
  let app: TestApp | null = null;
  let model: FakeOpenAIServer | null = null;
  let outside: Awaited<ReturnType<typeof recordingServer>> | null = null;

  afterEach(async () => {
    await browser?.close();
    await app?.close();
    await model?.close();
    await outside?.close();
  });

  it("fits the screen without horizontal overflow, says what will be sent, and takes a tap", async () => {
    expect(existsSync(CHROMIUM), `Chromium is needed at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it)`).toBe(true);
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

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    const page = await browser.newPage({ viewport: { width: 360, height: 800 }, deviceScaleFactor: 2 });
    await page.goto(app.url);
    await page.fill("#text", "save my grocery note");
    await page.press("#text", "Enter");
    await page.waitForSelector(".card", { timeout: 20_000 });
    await page.waitForSelector(".card-msg .buttons button");

    // Nothing sticks out to the right, in the page or inside the card.
    // Evaluated in the page (a string: this project's TypeScript has no DOM types), parsed on return.
    const layout = z
      .object({ width: z.number(), scrollWidth: z.number(), chatScroll: z.number(), overflowing: z.array(z.string()) })
      .parse(
        await page.evaluate(`(() => {
          const width = document.documentElement.clientWidth;
          const card = document.querySelector(".card-msg");
          const overflowing = [...card.querySelectorAll("*")].filter((el) => el.getBoundingClientRect().right > width + 0.5).map((el) => el.tagName + "." + el.className);
          return { width, scrollWidth: document.documentElement.scrollWidth, chatScroll: document.querySelector(".chat").scrollWidth, overflowing };
        })()`),
      );
    expect(layout.width).toBe(360);
    expect(layout.scrollWidth).toBeLessThanOrEqual(360);
    expect(layout.chatScroll).toBeLessThanOrEqual(360);
    expect(layout.overflowing).toEqual([]);

    // It says what will be sent, in full and decoded.
    const cardText = await page.textContent(".card");
    expect(cardText).toContain("Familiar wants to send data to");
    // The full destination; a run of 80 equal characters is shown as one plus its count.
    expect(cardText).toContain(`${outside.url}${longPath.replace("x".repeat(80), "x⟨×80⟩")}`);
    expect(cardText).toContain(`"Ana's PIN is 4921"`);
    expect(cardText).toContain("⟦U+202E⟧");
    const labels = await page.$$eval(".card-msg .buttons button", (bs) => bs.map((b) => b.textContent));
    expect(labels).toEqual(["Approve once", "This task", "This session (ends after 2 h away)", "For 24 h", "Always", "Deny"]);

    mkdirSync(join(process.cwd(), "test-results"), { recursive: true });
    // The whole card on one phone-width screen: as tall as the card needs, still 360 px wide.
    const cardHeight = await page.$eval(".card-msg", (el) => el.getBoundingClientRect().height);
    await page.setViewportSize({ width: 360, height: Math.ceil(cardHeight) + 260 });
    await page.$eval(".card-msg", (el) => el.scrollIntoView({ block: "end" }));
    expect(z.number().parse(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(360);
    await page.screenshot({ path: SCREENSHOT });
    expect(existsSync(SCREENSHOT)).toBe(true);

    // A tap approves it once: the card shows the decision, the request runs once.
    await page.click('.card-msg .buttons button:has-text("Approve once")');
    await page.waitForSelector(".card-status", { timeout: 15_000 });
    expect(await page.textContent(".card-status")).toContain("Approved once");
    await page.waitForSelector("text=Saved your note.", { timeout: 15_000 });
    expect(outside.received).toHaveLength(1);
  }, 90_000);
});
