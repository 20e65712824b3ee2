/**
 * The web-page policy in real Chromium: a page served as the app serves an artifact (frame page +
 * sandboxed frame, the artifact's own CSP and guard) runs its script, but every way it tries to
 * reach a loopback listener fails: fetch, XHR, image, CSS, font, WebSocket, EventSource, beacon,
 * form, the top window, window.open, preconnect/dns-prefetch hints in markup and made by script,
 * WebRTC (in the page, in a srcdoc frame, in a frame written by innerHTML or hidden behind a
 * comment the server's parser might read differently), a worker, a frame — not one connection.
 * A navigation of its own frame (location, a link, a meta refresh) is refused too: the listener
 * gets no request and no byte (Chromium may open a bare preconnect to it first; see page-policy.ts).
 */
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { framePageHeaders, guardedPage, pageHeaders } from "../../../sandbox/artifacts/page-policy.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** The attacks, against http://127.0.0.1:PORT (replaced at serving time). */
function attackPage(port: number): string {
  const t = `127.0.0.1:${port}`;
  return `<!doctype html><html><head><title>Tracker</title>
<link rel="preconnect" href="http://${t}/pre"><link rel="dns-prefetch" href="http://${t}/dns"><link rel="prefetch" href="http://${t}/prefetch">
<link rel="stylesheet" href="http://${t}/css"><style>body { background: url(http://${t}/bg) } @font-face { font-family: x; src: url(http://${t}/font) } p { font-family: x }</style>
</head>
<body><!--><iframe srcdoc="<script>var pc = new RTCPeerConnection({ iceServers: [{ urls: &quot;turn:${t}?transport=tcp&quot;, username: &quot;u&quot;, credential: &quot;p&quot; }] }); pc.createDataChannel(&quot;x&quot;); pc.createOffer().then(function (o) { return pc.setLocalDescription(o); });</script>"></iframe>-->
<p id="out">loading</p><img src="http://${t}/img"><form id="f" action="http://${t}/form" method="post"><input name="a" value="1"></form><a id="a" href="http://${t}/link">x</a>
<script>
var results = [];
function note(n, f) { try { f(); results.push(n + ":ran"); } catch (e) { results.push(n + ":threw"); } }
note("fetch", function () { fetch("http://${t}/fetch").catch(function () {}); });
note("xhr", function () { var x = new XMLHttpRequest(); x.open("GET", "http://${t}/xhr"); x.send(); });
note("image", function () { new Image().src = "http://${t}/img2"; });
note("ws", function () { new WebSocket("ws://${t}/ws"); });
note("sse", function () { new EventSource("http://${t}/sse"); });
note("beacon", function () { navigator.sendBeacon("http://${t}/beacon", "x"); });
note("link-js", function () { var l = document.createElement("link"); l.rel = "preconnect"; l.href = "http://${t}/prejs"; document.head.appendChild(l); });
note("link-attr", function () { var l = document.createElement("link"); l.setAttribute("rel", "preconnect"); l.setAttribute("href", "http://${t}/prejs2"); document.head.appendChild(l); });
note("link-html", function () { document.head.insertAdjacentHTML("beforeend", '<link rel="preconnect" href="http://${t}/prehtml">'); });
note("link-inner", function () { var d = document.createElement("div"); d.innerHTML = '<link rel="dns-prefetch" href="http://${t}/preinner">'; document.body.appendChild(d); });
note("srcdoc", function () { document.body.insertAdjacentHTML("beforeend", '<iframe srcdoc="<script>new RTCPeerConnection({ iceServers: [{ urls: &quot;turn:${t}?transport=tcp&quot;, username: &quot;u&quot;, credential: &quot;p&quot; }] }).createOffer()<\\/script>"></iframe>'); });
note("rtc", function () { var pc = new RTCPeerConnection({ iceServers: [{ urls: "turn:${t}?transport=tcp", username: "u", credential: "p" }, { urls: "stun:${t}" }] }); pc.createDataChannel("x"); pc.createOffer().then(function (o) { return pc.setLocalDescription(o); }); });
note("frame-rtc", function () { var f = document.createElement("iframe"); document.body.appendChild(f); var P = f.contentWindow.RTCPeerConnection; new P({ iceServers: [{ urls: "turn:${t}?transport=tcp", username: "u", credential: "p" }] }).createOffer(); });
note("frame", function () { var f = document.createElement("iframe"); f.src = "http://${t}/frame"; document.body.appendChild(f); });
note("worker", function () { new Worker(URL.createObjectURL(new Blob(["fetch('http://${t}/worker')"]))); });
note("open", function () { window.open("http://${t}/open"); });
note("form", function () { document.getElementById("f").submit(); });
note("top", function () { top.location = "http://${t}/top"; });
document.getElementById("out").textContent = "script ran";
setTimeout(function () { document.getElementById("out").textContent = "ran " + results.join(","); }, 300);
</script></body></html>`;
}

/** Navigations of the frame itself: a meta refresh, a link, location. */
function navigationPage(port: number, how: "meta" | "link" | "location"): string {
  const t = `127.0.0.1:${port}`;
  const head = how === "meta" ? `<meta http-equiv="refresh" content="0; url=http://${t}/refresh">` : "";
  const script = how === "link" ? `document.getElementById("a").click();` : how === "location" ? `location.href = "http://${t}/self";` : "";
  return `<!doctype html><html><head>${head}</head><body><a id="a" href="http://${t}/link">x</a><script>${script}</script></body></html>`;
}

describe("a web-page artifact in real Chromium", () => {
  let browser: Browser;
  let app: http.Server;
  let listener: net.Server;
  let connections = 0;
  let bytes = 0;
  let appUrl = "";
  let port = 0;

  beforeAll(async () => {
    // Counts connections and every byte sent on them (an HTTP request, a TURN allocation, …).
    listener = net.createServer((socket) => {
      connections++;
      socket.on("data", (chunk) => (bytes += chunk.length));
      socket.on("error", () => undefined);
      setTimeout(() => socket.destroy(), 500);
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    port = (listener.address() as AddressInfo).port;
    app = http.createServer((req, res) => {
      if (req.url === "/a/1") {
        res.writeHead(200, framePageHeaders());
        res.end(`<!doctype html><html><head><title>Tracker</title></head><body><h1>Tracker</h1><iframe id="artifact" sandbox="allow-scripts" src="/a/1/content" style="width:100%;height:400px"></iframe></body></html>`);
      } else if (req.url?.startsWith("/a/") && req.url.endsWith("/content")) {
        const how = req.url.split("/")[2] as "1" | "meta" | "link" | "location";
        res.writeHead(200, pageHeaders());
        res.end(guardedPage(how === "1" ? attackPage(port) : navigationPage(port, how)));
      } else if (req.url?.startsWith("/a/")) {
        res.writeHead(200, framePageHeaders());
        res.end(`<!doctype html><html><body><iframe id="artifact" sandbox="allow-scripts" src="${req.url}/content"></iframe></body></html>`);
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"] });
  });
  afterAll(async () => {
    await browser.close();
    app.close();
    listener.close();
  });

  it("runs the page's script and nothing it tries reaches the listener", async () => {
    const page = await browser.newPage();
    await page.goto(`${appUrl}/a/1`);
    const frame = page.frameLocator("#artifact");
    await expect.poll(async () => frame.locator("#out").textContent(), { timeout: 10_000 }).toMatch(/^ran /);
    await page.waitForTimeout(2500);
    expect(page.url()).toBe(`${appUrl}/a/1`);
    expect(await frame.locator("#out").textContent()).toMatch(/^ran .*fetch:ran/);
    expect(page.context().pages()).toHaveLength(1);
    expect(connections).toBe(0);
    expect(bytes).toBe(0);
    await page.close();
  });

  it("cannot navigate its own frame away (meta refresh, a link, location)", async () => {
    for (const how of ["meta", "link", "location"]) {
      const page = await browser.newPage();
      await page.goto(`${appUrl}/a/${how}`);
      await page.waitForTimeout(1500);
      expect(page.url()).toBe(`${appUrl}/a/${how}`);
      expect(page.frames().map((f) => f.url()).some((url) => url.includes(`:${port}`))).toBe(false);
      await page.close();
    }
    expect(bytes).toBe(0);
  });
});
