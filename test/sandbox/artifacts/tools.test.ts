/**
 * The artifact tools over a real SQLite store, the workspace jail and real Chromium (PDFs): every
 * kind from a file or from content, versions, the list, sending through the outbox with a link when
 * the web app is reachable, taint carried from the activation or from a tainted workspace file,
 * browser_pdf of an open page, content that cannot make the kind asked, another person's artifact.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../core/clock.js";
import { Outbound } from "../../../core/outbox/index.js";
import { asId, type PersonId } from "../../../core/ids.js";
import type { Store } from "../../../core/storage/index.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../../../core/tools/index.js";
import { ArtifactShelf, artifactTools, renderPdf } from "../../../sandbox/artifacts/index.js";
import { FileTaints, Workspace } from "../../../sandbox/workspace/index.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e2276a2a0000000049454e44ae426082", "hex");

describe("artifact tools", () => {
  let browser: Browser;
  let dataDir: string;
  let store: Store;
  let person: PersonId;
  let other: PersonId;
  let shelf: ArtifactShelf;
  let tools: Map<string, ToolDefinition>;
  let ws: Workspace;
  let step = 0;
  let wakes = 0;

  const context = (extra: Partial<ToolContext> = {}): ToolContext => ({ personId: person, taskId: null, originMessageId: null, idempotencyKey: `act:${++step}:0`, now: new Date(), signal: new AbortController().signal, ...extra });
  const run = async (name: string, args: unknown, extra: Partial<ToolContext> = {}): Promise<ToolResult> => {
    const tool = tools.get(name)!;
    return tool.execute(tool.parameters.parse(args), context(extra));
  };
  const idIn = (result: ToolResult) => {
    const id = result.ok ? /as (art_[0-9a-f]{28})/.exec(result.content)?.[1] : undefined;
    return id === undefined ? undefined : asId("artifact", id);
  };

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"] });
  });
  afterAll(async () => {
    await browser.close();
  });
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "familiar-artifact-tools-"));
    store = openSqliteStore({ path: join(dataDir, "familiar.db") });
    person = (await store.persons.createPerson({ displayName: "Ada" })).id;
    other = (await store.persons.createPerson({ displayName: "Bo" })).id;
    shelf = new ArtifactShelf({ dataDir, repository: store.artifacts, clock: systemClock });
    ws = shelf.workspace(person);
    tools = new Map(
      artifactTools({
        shelf,
        outbound: new Outbound({ store, clock: systemClock, wake: () => void wakes++ }),
        printPdf: (html, options) => renderPdf(browser, html, options),
        pageUrl: (a) => `https://familiar.example/a/${a.seriesId}`,
      }).map((t) => [t.name, t]),
    );
    return async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
  });

  it("makes every kind: a document, a PDF from markdown with its image, a self-contained page, a data file, images", async () => {
    await ws.write("notes/plan.md", "# Plan\n\n![chart](chart.svg)\n\n| a | b |\n|---|---|\n| 1 | 2 |");
    await ws.write("notes/chart.svg", `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#123456"/></svg>`);
    await ws.write("app/index.html", `<!doctype html><html><head><link rel="stylesheet" href="style.css"></head><body><img src="../notes/chart.svg"><script src="app.js"></script></body></html>`);
    await ws.write("app/style.css", "body { color: teal }");
    await ws.write("app/app.js", "document.body.dataset.ready = 'yes';");
    await ws.write("logo.png", PNG);
    const doc = await run("artifact_create", { kind: "document", title: "Plan", from: { path: "notes/plan.md" } });
    const pdf = await run("artifact_create", { kind: "pdf", title: "Plan as PDF", from: { path: "notes/plan.md" } });
    const page = await run("artifact_create", { kind: "page", title: "Little app", from: { path: "app/index.html" } });
    const data = await run("artifact_create", { kind: "data", title: "Expenses", from: { content: "a,b\n1,2\n" }, name: "expenses.csv" });
    const svg = await run("artifact_create", { kind: "image", title: "Chart", from: { path: "notes/chart.svg" } });
    const png = await run("artifact_create", { kind: "image", title: "Logo", from: { path: "logo.png" } });
    for (const result of [doc, pdf, page, data, svg, png]) expect(result).toMatchObject({ ok: true, content: expect.stringContaining("https://familiar.example/a/art_") });
    expect(pdf.ok && pdf.content).toMatch(/1 page/);
    const listed = await store.artifacts.listArtifacts(person);
    expect(listed.items.map((a) => [a.kind, a.title, a.mimeType])).toEqual([
      ["image", "Logo", "image/png"],
      ["image", "Chart", "image/svg+xml"],
      ["data", "Expenses", "text/csv"],
      ["page", "Little app", "text/html"],
      ["pdf", "Plan as PDF", "application/pdf"],
      ["document", "Plan", "text/markdown"],
    ]);
    const pageBytes = (await shelf.load(person, listed.items[3]!.id))!.bytes.toString("utf8");
    expect(pageBytes).toContain("<style>body { color: teal }</style>");
    expect(pageBytes).toContain("<script>document.body.dataset.ready = 'yes';</script>");
    expect(pageBytes).toContain("data:image/svg+xml;base64,");
    const pdfBytes = (await shelf.load(person, listed.items[4]!.id))!.bytes;
    expect(pdfBytes.subarray(0, 5).toString()).toBe("%PDF-");
    // Every version lives in the workspace's artifacts folder.
    expect(listed.items.every((a) => a.path.startsWith("artifacts/"))).toBe(true);
  });

  it("refuses content that cannot make the kind, links on the way and another person's artifact", async () => {
    expect(await run("artifact_create", { kind: "image", title: "Not an image", from: { content: "hello" } })).toMatchObject({ ok: false, code: "artifact_invalid" });
    await ws.write("x.bin", Buffer.from([1, 2, 3]));
    expect(await run("artifact_create", { kind: "document", title: "Binary", from: { path: "x.bin" } })).toMatchObject({ ok: false, code: "artifact_invalid" });
    mkdirSync(ws.root, { recursive: true });
    writeFileSync(join(dataDir, "vault.json"), "VAULT");
    symlinkSync(join(dataDir, "vault.json"), join(ws.root, "link.md"));
    expect(await run("artifact_create", { kind: "document", title: "Link", from: { path: "link.md" } })).toMatchObject({ ok: false, code: "path_outside_workspace" });
    const made = idIn(await run("artifact_create", { kind: "document", title: "Mine", from: { content: "# mine" } }))!;
    const theirs = await run("artifact_send", { id: made }, { personId: other });
    expect(theirs).toMatchObject({ ok: false, code: "not_found" });
    expect(await run("artifact_update", { id: made, from: { content: "# taken" } }, { personId: other })).toMatchObject({ ok: false, code: "not_found" });
    expect(await store.artifacts.listArtifacts(person)).toMatchObject({ items: [{ title: "Mine", version: 1 }] });
    expect((await store.artifacts.listArtifacts(other)).items).toEqual([]);
  });

  it("versions: an update adds one, the list shows the latest, sending attaches the latest with a link", async () => {
    const id = idIn(await run("artifact_create", { kind: "document", title: "Packing list", from: { content: "- passport" } }))!;
    const updated = await run("artifact_update", { id, from: { content: "- passport\n- sunscreen" }, title: "Packing list (beach)" });
    expect(updated).toMatchObject({ ok: true, content: expect.stringContaining(`as ${id}, version 2`) });
    const list = await run("artifact_list", {});
    expect(list.ok && list.content).toMatch(new RegExp(`^${id} — “Packing list \\(beach\\)” \\(document, version 2, `));
    const sent = await run("artifact_send", { id, text: "Here it is." });
    expect(sent).toMatchObject({ ok: true });
    const versions = await store.artifacts.listArtifactVersions(id);
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    const outbound = await store.outbox.listOutbound(person, { limit: 5 });
    expect(outbound.items[0]).toMatchObject({ attachments: [versions[1]!.id], text: `Here it is.\n\nOpen it: https://familiar.example/a/${id}` });
    expect(wakes).toBeGreaterThan(0);
    const first = await run("artifact_send", { id, version: 1 });
    expect(first).toMatchObject({ ok: true, content: expect.stringContaining("version 1") });
    expect(readFileSync(join(ws.root, versions[0]!.path), "utf8")).toBe("- passport");
  });

  it("carries taint: from a tainted activation, and from a tainted workspace file it was made from", async () => {
    const fromActivation = idIn(await run("artifact_create", { kind: "document", title: "Deals", from: { content: "# deals" } }, { tainted: true, taintSource: "https://shop.example/deals" }))!;
    expect((await store.artifacts.getArtifact(fromActivation))?.taint).toEqual({ source: "https://shop.example/deals" });
    await ws.write("scraped.md", "# scraped");
    await FileTaints.of(ws.root).update({ mark: { paths: ["scraped.md"], taint: { source: "https://news.example/" } } });
    const fromFile = idIn(await run("artifact_create", { kind: "pdf", title: "Scraped", from: { path: "scraped.md" } }))!;
    expect((await store.artifacts.getArtifact(fromFile))?.taint).toEqual({ source: "scraped.md: https://news.example/" });
    const clean = idIn(await run("artifact_create", { kind: "document", title: "Mine", from: { content: "# mine" } }))!;
    expect((await store.artifacts.getArtifact(clean))?.taint).toBeNull();
    const list = await run("artifact_list", {});
    expect(list.ok && list.content).toContain("made from untrusted content (scraped.md: https://news.example/)");
  });
});
