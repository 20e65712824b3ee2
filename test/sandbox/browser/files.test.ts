/**
 * Downloads and uploads through Sentinel in real Chromium: a download asks, then lands in the
 * workspace's downloads/ as an artifact; a download the page starts by itself (or a click on a
 * download link) is cancelled; an upload asks with the file's name and size, and the file is sent
 * only with the approved form submission. browser_pdf prints the open page into a pdf artifact
 * that carries the page's URL as its taint.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, afterEach } from "vitest";
import { cardOf, pressCard } from "../../helpers/approvals.js";
import { Sentinel } from "../../../core/sentinel/gate.js";
import type { ApprovalId } from "../../../core/ids.js";
import type { ToolContext, ToolResult } from "../../../core/tools/tool.js";
import { Workspace } from "../../../sandbox/workspace/tools.js";
import { browserRig, clearPendingApprovals, grantOrigin, type BrowserRig } from "./helpers.js";
import { TestSite } from "./pages.js";

describe("browser downloads and uploads", () => {
  let site: TestSite;
  let rig: BrowserRig;
  let sentinel: Sentinel;

  const call = async (name: string, args: unknown, extra: Partial<ToolContext> = {}): Promise<ToolResult> => {
    const tool = rig.tools.get(name)!;
    return sentinel.wrap()(tool, tool.parameters.parse(args), rig.context(extra));
  };
  const approveOnce = async (result: ToolResult) => {
    expect(result).toMatchObject({ ok: false, code: "approval_required" });
    const id = (result.ok ? "" : (result.data as { approvalId: string }).approvalId) as ApprovalId;
    const press = await pressCard(rig.store, id, "once");
    expect(press.outcome).toBe("approved");
    return (await rig.store.approvals.getApprovalRequest(id))!;
  };
  const refOf = (content: string, pattern: RegExp) => pattern.exec(content)?.[1] ?? "";

  afterEach(() => clearPendingApprovals(rig));

  beforeAll(async () => {
    site = await TestSite.start();
    site
      .page(
        "/files",
        `<h1>Your tickets</h1><a href="/ticket.pdf" download>Ticket PDF</a>
         <form method="post" action="/upload" enctype="multipart/form-data"><label>Passport <input type="file" name="passport"></label><button>Upload</button></form>`,
      )
      .route("/ticket.pdf", (_req, _body, res) => res.writeHead(200, { "content-type": "application/pdf", "content-disposition": 'attachment; filename="ticket.pdf"' }).end("%PDF-1.4 ticket"))
      .page("/upload", "<p>Uploaded</p>", { method: "POST" })
      .page("/receipt", `<title>Receipt 42</title><h1>Receipt</h1><p>Total 12.50</p><input id="pw" type="password" value="pw-in-the-page">`)
      .page("/auto", `<h1>Auto</h1><script>location.href = "/ticket.pdf";</script>`);
    rig = await browserRig({ allowed: [site.hostPort] });
    sentinel = new Sentinel({ store: rig.store, egress: rig.egress });
    await grantOrigin(rig, "browser.browse", site.origin);
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await site?.close();
  });

  it("a download the page starts by itself, or a plain click on a download link, is cancelled", async () => {
    const auto = await call("browser_open", { url: `${site.origin}/auto` });
    expect(auto.ok).toBe(true);
    const page = await call("browser_open", { url: `${site.origin}/files` });
    const link = refOf(page.ok ? page.content : "", /link "Ticket PDF" \[ref=(\w+)\]/);
    await call("browser_click", { ref: link });
    // A fixed wait on purpose: it asserts that NO download lands in the workspace meanwhile.
    await new Promise((r) => setTimeout(r, 1000));
    const downloads = Workspace.of(rig.dataDir, rig.personId);
    expect(await downloads.list()).not.toContain("downloads/");
    expect((await rig.store.artifacts.listArtifacts(rig.personId)).items).toEqual([]);
  });

  it("browser_download asks, then saves the file into downloads/ as an artifact", async () => {
    const page = await call("browser_open", { url: `${site.origin}/files` });
    const link = refOf(page.ok ? page.content : "", /link "Ticket PDF" \[ref=(\w+)\]/);
    const request = await approveOnce(await call("browser_download", { ref: link }));
    expect((await cardOf(rig.store, request.id)).text).toContain(`Download “Ticket PDF” from 127.0.0.1:${site.port}/ticket.pdf into your workspace`);
    const done = await call("browser_download", { ref: link });
    expect(done.ok).toBe(true);
    const artifactId = (done.ok ? (done.data as { artifactId: string }).artifactId : "") as never;
    const artifact = (await rig.store.artifacts.getArtifact(artifactId))!;
    expect(artifact).toMatchObject({ name: "ticket.pdf", mimeType: "application/pdf", size: 15, source: expect.stringContaining("download from") });
    expect(readFileSync(join(rig.dataDir, "persons", rig.personId, "workspace", artifact.path), "utf8")).toBe("%PDF-1.4 ticket");
  });

  it("browser_upload asks with the file's name and size; the file leaves only with the approved submission", async () => {
    await Workspace.of(rig.dataDir, rig.personId).write("docs/passport.jpg", Buffer.from("JPEGDATA-passport"));
    const page = await call("browser_open", { url: `${site.origin}/files` });
    const content = page.ok ? page.content : "";
    const field = refOf(content, /button "Passport" \[ref=(\w+)\]/) || refOf(content, /"Passport" \[ref=(\w+)\]/);
    const submit = refOf(content, /button "Upload" \[ref=(\w+)\]/);
    const request = await approveOnce(await call("browser_upload", { ref: field, path: "docs/passport.jpg" }));
    expect((await cardOf(rig.store, request.id)).text).toContain("Attach your file docs/passport.jpg (17 bytes)");
    expect((await call("browser_upload", { ref: field, path: "docs/passport.jpg" })).ok).toBe(true);
    expect(site.hits.filter((h) => h.url === "/upload")).toEqual([]);
    const asked = await call("browser_click", { ref: submit });
    expect((await cardOf(rig.store, (await approveOnce(asked)).id)).text).toContain("passport: passport.jpg (17 bytes)");
    expect((await call("browser_click", { ref: submit })).ok).toBe(true);
    const upload = site.hits.find((h) => h.url === "/upload")!;
    expect(upload.body).toContain("JPEGDATA-passport");
    expect(readdirSync(join(rig.dataDir, "persons", rig.personId, "workspace", "docs"))).toEqual(["passport.jpg"]);
  });

  it("browser_pdf prints the open page as a pdf artifact with the page's URL as its taint", async () => {
    expect((await call("browser_open", { url: `${site.origin}/receipt` })).ok).toBe(true);
    const done = await call("browser_pdf", {});
    expect(done).toMatchObject({ ok: true, content: expect.stringMatching(/^“Receipt 42” printed to PDF and kept as artifact art_[0-9a-f]{28} \(\d+ bytes\)/) });
    const artifact = (await rig.store.artifacts.getArtifact((done.ok ? (done.data as { artifactId: string }).artifactId : "") as never))!;
    expect(artifact).toMatchObject({ kind: "pdf", title: "Receipt 42", mimeType: "application/pdf", version: 1, taint: { source: `${site.origin}/receipt` } });
    const bytes = readFileSync(join(rig.dataDir, "persons", rig.personId, "workspace", artifact.path));
    expect(bytes.subarray(0, 5).toString()).toBe("%PDF-");
    expect(bytes.toString("latin1")).toContain("/Title (Receipt 42)");
    const named = await call("browser_pdf", { title: "My receipt" });
    expect(named).toMatchObject({ ok: true, content: expect.stringContaining("“My receipt” printed to PDF") });
  });
});
