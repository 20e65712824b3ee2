/**
 * Sentinel at the browser's network layer, in real Chromium: a page served on an allowed loopback
 * site tries every way out to a forbidden loopback site — redirect, fetch, image, form post,
 * WebSocket, iframe, script, beacon, prefetch, EventSource — and to names that resolve to loopback
 * or metadata addresses. The forbidden site must record nothing (field case B1).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserRig, type BrowserRig } from "./helpers.js";
import { TestSite } from "./pages.js";

describe("browser egress: every request the page makes passes the egress check", () => {
  let allowed: TestSite;
  let forbidden: TestSite;
  let rig: BrowserRig;

  beforeAll(async () => {
    allowed = await TestSite.start();
    forbidden = await TestSite.start();
    forbidden.page("/", "<h1>internal admin</h1>").page("/img.png", "x").page("/post", "posted");
    const B = forbidden.origin;
    allowed
      .route("/redirect", (_req, _body, res) => res.writeHead(302, { location: `${B}/` }).end())
      .route("/redirect-name", (_req, _body, res) => res.writeHead(302, { location: `http://internal.test:${forbidden.port}/` }).end())
      .page(
        "/attack",
        `<h1>Attack page</h1>
        <img src="${B}/img.png">
        <img src="http://localhost:${forbidden.port}/img.png">
        <img src="http://[::1]:${forbidden.port}/img.png">
        <img src="http://internal.test:${forbidden.port}/img.png">
        <iframe src="${B}/"></iframe>
        <script src="${B}/script.js"></script>
        <link rel="prefetch" href="${B}/prefetch">
        <link rel="stylesheet" href="${B}/style.css">
        <form id="f" method="post" action="${B}/post"><input name="secret" value="memory of the person"><button id="send">Send</button></form>
        <script>
          fetch("${B}/fetch", { method: "POST", body: "exfil" }).catch(() => {});
          fetch("${B}/fetch-get?x=1").catch(() => {});
          navigator.sendBeacon("${B}/beacon", "exfil");
          try { const ws = new WebSocket("ws://127.0.0.1:${forbidden.port}/ws"); ws.onerror = () => {}; } catch (e) {}
          try { const es = new EventSource("${B}/events"); es.onerror = () => es.close(); } catch (e) {}
          try { new Worker("${B}/worker.js"); } catch (e) {}
          navigator.serviceWorker && navigator.serviceWorker.register("/sw.js").catch(() => {});
        </script>`,
      )
      .page("/sw.js", "self.addEventListener('fetch', () => {})", { headers: { "content-type": "application/javascript" } });
    rig = await browserRig({
      allowed: [allowed.hostPort],
      // internal.test is a "public" name that resolves to loopback; metadata.test to the metadata address.
      resolve: async (host) => {
        if (host === "internal.test") return [{ address: "127.0.0.1", family: 4 }];
        if (host === "metadata.test") return [{ address: "169.254.169.254", family: 4 }];
        throw new Error(`unknown host ${host} (tests never resolve real names)`);
      },
    });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await allowed?.close();
    await forbidden?.close();
  });

  it("opens the allowed test site (allowed only through PRIVATE_HOSTS_ALLOWED)", async () => {
    allowed.page("/hello", "<title>Hello</title><h1>Hello there</h1><a href='/attack'>next</a>");
    const result = await rig.run("browser_open", { url: `${allowed.origin}/hello` });
    expect(result).toMatchObject({ ok: true, untrusted: { source: `browser page ${allowed.origin}/hello` } });
    expect(result.ok && result.content).toContain("Hello there");
    expect(result.ok && result.content).toMatch(/link "next" \[ref=e\d+\]/);
  });

  it("refuses loopback, metadata and file URLs before anything is sent (structured tool error)", async () => {
    for (const url of [`${forbidden.origin}/`, `http://localhost:${forbidden.port}/`, `http://internal.test:${forbidden.port}/`, "http://169.254.169.254/latest/meta-data/", "http://metadata.test/latest/"]) {
      const result = await rig.run("browser_open", { url });
      expect(result, url).toMatchObject({ ok: false, code: "egress_denied" });
    }
    const file = await rig.run("browser_open", { url: "file:///etc/passwd" });
    expect(file.ok).toBe(false);
    expect(forbidden.hits).toEqual([]);
  });

  it("refuses a redirect to loopback, by address or by a name that resolves to it", async () => {
    for (const path of ["/redirect", "/redirect-name"]) {
      const result = await rig.run("browser_open", { url: `${allowed.origin}${path}` });
      expect(result, path).toMatchObject({ ok: false, code: "egress_denied" });
    }
    expect(forbidden.hits).toEqual([]);
  });

  it("a page's fetch, image, iframe, script, beacon, prefetch, EventSource, worker, WebSocket and form post never reach loopback", async () => {
    const result = await rig.run("browser_open", { url: `${allowed.origin}/attack` });
    expect(result.ok).toBe(true);
    expect(result.ok && result.content).toMatch(/Sentinel refused \d+ request/);
    // The form post: the click is an approved write in this test (no Sentinel around the tool), so
    // the network guard lets the POST through to the proxy, which refuses the address.
    const read = await rig.run("browser_read", {});
    const ref = /button "Send" \[ref=(\w+)\]/.exec(read.ok ? read.content : "")?.[1];
    expect(ref).toBeDefined();
    await rig.run("browser_click", { ref });
    // A fixed wait on purpose: it asserts that the form post does NOT reach loopback meanwhile.
    await new Promise((r) => setTimeout(r, 1500));
    expect(forbidden.hits).toEqual([]);
    // Service workers are blocked: the page could not register one.
    expect(allowed.hits.some((h) => h.url === "/sw.js")).toBe(false);
  });
});
