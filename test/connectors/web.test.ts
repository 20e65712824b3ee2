import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { httpFetchTool, httpRequestTool, webTools } from "../../connectors/web/index.js";
import { asId } from "../../core/ids.js";
import { EgressGuard } from "../../core/egress/guard.js";
import type { ToolContext, ToolResult } from "../../core/tools/tool.js";
import { startServer, type TestServer } from "../core/sentinel/helpers.js";

let server: TestServer;
let guard: EgressGuard;
const ctx = (): ToolContext => ({
  personId: asId("person", "per_1"),
  taskId: null,
  originMessageId: null,
  idempotencyKey: "act1:1:0",
  now: new Date(),
  signal: new AbortController().signal,
});

// The guard loads undici on its first request; load it before the 400 ms limits below apply.
beforeAll(async () => {
  await import("undici");
});

beforeEach(async () => {
  server = await startServer((req, res) => {
    switch (req.path) {
      case "/html":
        res.setHeader("content-type", "text/html; charset=utf-8");
        res.end("<html><head><script>var x=1</script></head><body><h1>Title</h1><p>First <b>para</b>.</p><img src=a.png><a href='/b'>link</a></body></html>");
        return;
      case "/json":
        res.setHeader("content-type", "application/json");
        res.end('{"a":1}');
        return;
      case "/binary":
        res.setHeader("content-type", "image/png");
        res.end(Buffer.alloc(64));
        return;
      case "/moved":
        res.writeHead(302, { location: "/html" }).end();
        return;
      case "/huge":
        res.end("y".repeat(10_000));
        return;
      case "/slow":
        setTimeout(() => res.end("late"), 5_000);
        return;
      default:
        res.setHeader("content-type", "text/plain");
        res.end(`${req.method} ${req.path} ${req.headers["content-type"] ?? ""} ${req.body}`);
    }
  });
  // Generous for the shared machine (the first call loads the HTML converter); the slow page is 5 s late.
  guard = new EgressGuard({ privateHostsAllowed: [server.hostPort], maxBytes: 4096, timeoutMs: 2_500 });
});
afterEach(async () => {
  await server.close();
});

const fetchUrl = (path: string, g = guard) => httpFetchTool(g).execute({ url: `${server.origin}${path}` }, ctx());

describe("http_fetch", () => {
  it("declares itself to Sentinel as a read of web.fetch with destination url", () => {
    const [fetch, request] = webTools(guard);
    expect(fetch!.policy).toEqual({ capability: "web.fetch", access: "read", method: { fixed: "GET" }, destinationArgs: ["url"], exfiltrationArgs: [] });
    expect(request!.policy).toMatchObject({ capability: "web.request", access: "write", method: { arg: "method" }, destinationArgs: ["url"], headerArgs: ["headers"], bodyArgs: ["body"], exfiltrationArgs: ["body", "headers"] });
  });

  it("turns HTML into text and marks it untrusted with the final URL as source", async () => {
    const result = await fetchUrl("/moved");
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
    const ok = result as Extract<ToolResult, { ok: true }>;
    expect(ok.content).toContain("TITLE");
    expect(ok.content).toContain("First para.");
    expect(ok.content).not.toContain("<p>");
    expect(ok.content).not.toContain("var x");
    expect(ok.untrusted).toEqual({ source: `${server.origin}/html` });
    expect(ok.data).toMatchObject({ status: 200, redirects: [`${server.origin}/moved`] });
  });

  it("returns JSON as is and describes binary content", async () => {
    expect(await fetchUrl("/json")).toMatchObject({ ok: true, content: expect.stringContaining('{"a":1}') });
    expect(await fetchUrl("/binary")).toMatchObject({ ok: true, content: expect.stringContaining("64 bytes of image/png") });
  });

  it("cuts long text at maxChars", async () => {
    const result = await httpFetchTool(new EgressGuard({ privateHostsAllowed: [server.hostPort] }), { maxChars: 100 }).execute({ url: `${server.origin}/huge` }, ctx());
    expect(result).toMatchObject({ ok: true, content: expect.stringContaining("cut at 100 of 10000 characters") });
  });

  it("size and time limits become structured errors", async () => {
    expect(await fetchUrl("/huge")).toMatchObject({ ok: false, code: "too_large" });
    expect(await fetchUrl("/slow")).toMatchObject({ ok: false, code: "timeout" });
  });

  it("B1: metadata, loopback off the allow-list and file: are structured egress errors, nothing is sent", async () => {
    const tool = httpFetchTool(guard);
    for (const [url, reason] of [
      ["http://169.254.169.254/latest/meta-data/", "metadata_address"],
      [`http://127.0.0.1:${server.port + 1}/`, "private_address"],
      ["file:///etc/passwd", "scheme_not_allowed"],
      ["http://[::ffff:127.0.0.1]/", "private_address"],
    ] as const) {
      expect(await tool.execute({ url }, ctx())).toMatchObject({ ok: false, code: "egress_denied", data: { reason } });
    }
    expect(server.received).toHaveLength(0);
  });
});

describe("http_request", () => {
  it("sends the method, headers and body with an idempotency key, and does not follow redirects", async () => {
    const tool = httpRequestTool(guard);
    const result = await tool.execute({ url: `${server.origin}/items`, method: "POST", headers: { "content-type": "application/json" }, body: '{"x":1}' }, ctx());
    expect(result).toMatchObject({ ok: true, content: expect.stringContaining('POST /items application/json {"x":1}'), untrusted: { source: `${server.origin}/items` } });
    expect(server.received[0]!.headers["idempotency-key"]).toBe("act1:1:0");

    const moved = await tool.execute({ url: `${server.origin}/moved`, method: "PUT", body: "data" }, ctx());
    expect(moved).toMatchObject({ ok: true, content: expect.stringContaining("Location: /html (not followed)") });
    expect(server.received.map((r) => r.path)).toEqual(["/items", "/moved"]);
  });

  it("validates its arguments", () => {
    const tool = httpRequestTool(guard);
    expect(tool.parameters.safeParse({ url: "http://x/", method: "GET" }).success).toBe(false);
    expect(tool.parameters.safeParse({ url: "http://x/", method: "DELETE" }).success).toBe(true);
    expect(tool.parameters.safeParse({ url: "http://x/", method: "POST", headers: { "bad header": "v" } }).success).toBe(false);
  });
});
