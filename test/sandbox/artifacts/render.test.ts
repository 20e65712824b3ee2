/**
 * Rendering artifacts: a page made self-contained (workspace images, styles and scripts inlined;
 * references that climb out of the workspace, absolute URLs and missing files left alone), a
 * markdown document as a page, and HTML printed to PDF in real Chromium — with no request leaving
 * the renderer even when the page asks for one.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleHtml, resolveReference } from "../../../sandbox/artifacts/bundle.js";
import { looksLikeHtml, markdownDocument } from "../../../sandbox/artifacts/document.js";
import { countPdfPages, renderPdf } from "../../../sandbox/artifacts/pdf.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const files: Record<string, string> = {
  "report/chart.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`,
  "report/style.css": "body { color: teal }",
  "report/app.js": "document.title = 'from script'; // </script> inside",
  "logo.png": "PNGBYTES",
};
const read = async (path: string) => (path in files ? Buffer.from(files[path] as string) : null);

describe("bundling a page", () => {
  it("resolves references inside the workspace only", () => {
    expect(resolveReference("report", "chart.svg")).toBe("report/chart.svg");
    expect(resolveReference("report", "../logo.png?x=1#y")).toBe("logo.png");
    expect(resolveReference("report", "../../../etc/passwd")).toBe("etc/passwd");
    expect(resolveReference("", "https://example.com/a.png")).toBeNull();
    expect(resolveReference("", "//example.com/a.png")).toBeNull();
    expect(resolveReference("", "data:image/png;base64,AA")).toBeNull();
    expect(resolveReference("", "#top")).toBeNull();
    expect(resolveReference("", "%E0%A4%A")).toBeNull();
  });

  it("inlines images, stylesheets and scripts; leaves absolute and missing ones", async () => {
    const page = `<!doctype html><html><head><link rel="stylesheet" href="style.css"><script src="app.js"></script></head>
<body><img src="chart.svg" alt="A &quot;chart&quot;"><img src="../logo.png"><img src="https://tracker.example/p.gif"><img src="missing.png"></body></html>`;
    const { html, inlined } = await bundleHtml(page, "report", read);
    expect(inlined.sort()).toEqual(["logo.png", "report/app.js", "report/chart.svg", "report/style.css"]);
    expect(html).toContain("<style>body { color: teal }</style>");
    expect(html).toContain("<script>document.title = 'from script'; // <\\/script> inside</script>");
    expect(html).toContain(`src="data:image/svg+xml;base64,${Buffer.from(files["report/chart.svg"] as string).toString("base64")}"`);
    expect(html).toContain(`alt="A &quot;chart&quot;"`);
    expect(html).toContain(`src="data:image/png;base64,${Buffer.from("PNGBYTES").toString("base64")}"`);
    expect(html).toContain(`src="https://tracker.example/p.gif"`);
    expect(html).toContain(`src="missing.png"`);
  });

  it("renders markdown as a titled page and tells pages from markdown", () => {
    const html = markdownDocument("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![c](chart.svg)", "T <&>");
    expect(html).toContain("<title>T &lt;&amp;&gt;</title>");
    expect(html).toContain("<table>");
    expect(html).toContain(`<img src="chart.svg" alt="c">`);
    expect(looksLikeHtml("<!DOCTYPE html><p>x")).toBe(true);
    expect(looksLikeHtml("# not html <b>")).toBe(false);
  });
});

describe("printing to PDF in real Chromium", () => {
  let browser: Browser;
  let server: http.Server;
  let hits = 0;
  let port = 0;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"] });
    server = http.createServer((_req, res) => {
      hits++;
      res.end("x");
    });
    server.on("connection", () => hits++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await browser.close();
    server.close();
  });

  it("prints a 5-page markdown document with its inlined chart", async () => {
    const md = `# Report\n\n${Array.from({ length: 110 }, (_, i) => `Paragraph ${i}: some sentences that take up room on the page, line after line.`).join("\n\n")}\n\n![chart](chart.svg)`;
    const { html } = await bundleHtml(markdownDocument(md, "Report"), "report", read);
    const pdf = await renderPdf(browser, html);
    expect(pdf.bytes.subarray(0, 5).toString()).toBe("%PDF-");
    expect(pdf.pages).toBeGreaterThanOrEqual(4);
    expect(countPdfPages(pdf.bytes)).toBe(pdf.pages);
  });

  it("runs a page's script only when asked, and lets no request out either way", async () => {
    const page = `<!doctype html><html><head><title>static</title></head><body><p id="p">static</p><img src="http://127.0.0.1:${port}/img.png"><link rel="stylesheet" href="http://127.0.0.1:${port}/s.css">
<script>document.title = 'drawnbyscript'; fetch('http://127.0.0.1:${port}/fetch').catch(() => {}); new Image().src = 'http://127.0.0.1:${port}/i2';</script></body></html>`;
    const withScript = await renderPdf(browser, page, { scripts: true });
    const without = await renderPdf(browser, page);
    expect(withScript.pages).toBe(1);
    expect(without.pages).toBe(1);
    expect(withScript.bytes.toString("latin1")).toContain("/Title (drawnbyscript)");
    expect(without.bytes.toString("latin1")).toContain("/Title (static)");
    expect(hits).toBe(0);
  });
});
