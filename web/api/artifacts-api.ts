/**
 * The person's artifacts in the web app, for the signed-in person only:
 * - `GET /api/web/artifacts?limit&after` — each artifact's latest version, newest first;
 * - `GET /api/web/artifacts/:id` — one artifact with all its versions;
 * - `GET /api/web/artifacts/:id/file?v=N&download=1` — a version's bytes (the latest without `v`):
 *   images and PDFs inline, everything else as a download; never rendered as a page of the app
 *   (`Content-Security-Policy: default-src 'none'; sandbox`, no sniffing);
 * - `DELETE /api/web/artifacts/:id?v=N` — one version, or without `v` the whole artifact;
 * - `GET /a/:id?v=N` — the artifact's own page: title, versions, download, and the artifact itself
 *   — a web page runs in a sandboxed frame under the policy of sandbox/artifacts/page-policy.ts, a
 *   document is shown rendered (no script), an image inline, a data file as text, a PDF by link;
 * - `GET /a/:id/content?v=N` — what that frame holds.
 * `:id` is any version's id; another person's artifact is "not found".
 */
import escapeHtml from "escape-html";
import { Router, type Request, type RequestHandler, type Response } from "express";
import { z } from "zod";
import { asId, type GoalId, type PersonId } from "../../core/ids.js";
import type { Artifact } from "../../core/artifacts/index.js";
import { bundleHtml, framePageHeaders, guardedPage, isText, markdownDocument, pageHeaders, type ArtifactShelf } from "../../sandbox/artifacts/index.js";
import { webContext } from "./auth.js";

const page = z.object({ limit: z.coerce.number().int().min(1).max(100).default(30), after: z.string().max(200).optional() });
const versionQuery = z.object({ v: z.coerce.number().int().min(1).max(1_000_000).optional(), download: z.enum(["1"]).optional() });
const idParam = z.string().regex(/^art_[0-9a-f]{28}$/);

/** An artifact (one version) as the web app's JSON. */
export function artifactWebJson(a: Artifact) {
  return {
    id: a.seriesId,
    versionId: a.id,
    version: a.version,
    latest: a.latest,
    kind: a.kind,
    title: a.title,
    name: a.name,
    mimeType: a.mimeType,
    size: a.size,
    source: a.source,
    taskId: a.taskId,
    goalId: a.goalId,
    taint: a.taint,
    createdAt: a.createdAt.toISOString(),
    url: `/a/${a.seriesId}${a.latest ? "" : `?v=${a.version}`}`,
    file: `/api/web/artifacts/${a.seriesId}/file?v=${a.version}`,
  };
}

/** The document view's policy: its own styles and inlined images, no script at all. */
const DOCUMENT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox";

async function versionOf(shelf: ArtifactShelf, personId: PersonId, req: Request): Promise<Artifact | null> {
  const id = idParam.safeParse(req.params.id);
  const query = versionQuery.safeParse(req.query);
  if (!id.success || !query.success) return null;
  return shelf.version(personId, asId("artifact", id.data), query.data.v);
}

function framePage(a: Artifact, versions: Artifact[]): string {
  const file = `/api/web/artifacts/${a.seriesId}/file?v=${a.version}`;
  const versionLinks = versions.map((v) => (v.version === a.version ? `<strong>v${v.version}</strong>` : `<a href="/a/${a.seriesId}?v=${v.version}">v${v.version}</a>`)).join(" · ");
  const body =
    a.kind === "page" || a.kind === "document"
      ? `<iframe id="artifact" title="${escapeHtml(a.title)}" ${a.kind === "page" ? 'sandbox="allow-scripts"' : 'sandbox=""'} src="/a/${a.seriesId}/content?v=${a.version}"></iframe>`
      : a.kind === "image"
        ? `<img id="artifact" alt="${escapeHtml(a.title)}" src="${file}">`
        : a.kind === "pdf"
          ? `<p><a id="artifact" href="${file}" target="_blank" rel="noopener">Open the PDF</a></p>`
          : `<p class="meta">A data file (${escapeHtml(a.mimeType)}).</p>`;
  const taint = a.taint ? `<p class="warn">Made from content from outside (${escapeHtml(a.taint.source)}).</p>` : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(a.title)} · Familiar</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:0;padding:1rem;color:#1d1d1f;background:#fff}header{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:baseline}h1{font-size:1.3rem;margin:0}.meta{color:#666}.warn{color:#8a5300}iframe{width:100%;height:80vh;border:1px solid #ccc;border-radius:6px;background:#fff}img{max-width:100%;height:auto}pre{white-space:pre-wrap;background:#f5f5f7;padding:1rem;border-radius:6px;overflow:auto}</style></head>
<body><header><h1>${escapeHtml(a.title)}</h1><span class="meta">${escapeHtml(a.kind)} · ${versionLinks}</span><a href="${file}&amp;download=1" download>Download</a><a href="/dashboard/artifacts">All artifacts</a></header>${taint}<main>${body}</main></body></html>`;
}

/** The routes above (see the module comment). `requirePage` signs a page request in or sends it to sign in. */
export function artifactsWeb(deps: { shelf: ArtifactShelf; requirePage: RequestHandler; goalTitle?: (goalId: GoalId) => Promise<string | null> }): Router {
  const { shelf } = deps;
  const router = Router();

  router.get("/api/web/artifacts", async (req, res) => {
    const query = page.safeParse(req.query);
    if (!query.success) return void res.status(400).json({ error: "Please page with limit (1–100) and after." });
    const { person } = webContext(req);
    const listed = await shelf.listPage(person.id, query.data);
    const titles = new Map<GoalId, string | null>();
    for (const goalId of new Set(listed.items.flatMap((a) => (a.goalId ? [a.goalId] : [])))) titles.set(goalId, (await deps.goalTitle?.(goalId).catch(() => null)) ?? null);
    res.json({ items: listed.items.map((a) => ({ ...artifactWebJson(a), goal: a.goalId ? (titles.get(a.goalId) ?? null) : null })), next: listed.next ?? null });
  });

  router.get("/api/web/artifacts/:id", async (req, res) => {
    const { person } = webContext(req);
    const latest = await versionOf(shelf, person.id, req);
    if (latest === null) return void res.status(404).json({ error: "There is no such artifact." });
    res.json({ artifact: artifactWebJson(latest), versions: (await shelf.versions(person.id, latest.id)).map(artifactWebJson) });
  });

  router.get("/api/web/artifacts/:id/file", async (req, res) => {
    const { person } = webContext(req);
    const version = await versionOf(shelf, person.id, req);
    const loaded = version && (await shelf.load(person.id, version.id).catch(() => null));
    if (!loaded) return void res.status(404).json({ error: "There is no such artifact (or its file is gone)." });
    const { artifact, bytes } = loaded;
    const inline = req.query.download === undefined && (/^image\/(png|jpeg|gif|webp|svg\+xml)$/.test(artifact.mimeType) || artifact.mimeType === "application/pdf");
    res.set({
      "Content-Type": artifact.mimeType,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      "Content-Disposition": `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(artifact.name)}`,
      // A PDF opens in the browser's viewer (which a sandboxed response would refuse); nothing else ever runs.
      ...(artifact.mimeType === "application/pdf" && inline ? { "Content-Security-Policy": "default-src 'none'; object-src 'self'; frame-ancestors 'self'" } : { "Content-Security-Policy": "default-src 'none'; sandbox" }),
    });
    res.send(bytes);
  });

  router.delete("/api/web/artifacts/:id", async (req, res) => {
    const { person } = webContext(req);
    const version = await versionOf(shelf, person.id, req);
    if (version === null) return void res.status(404).json({ error: "There is no such artifact." });
    const scope = req.query.v === undefined ? "artifact" : "version";
    const deleted = await shelf.delete(person.id, version.id, scope);
    res.json({ ok: true, deleted: deleted.map((a) => a.version) });
  });

  router.get("/a/:id", deps.requirePage, async (req, res) => {
    const { person } = webContext(req);
    const version = await versionOf(shelf, person.id, req);
    if (version === null) return void notFound(res);
    let body = framePage(version, await shelf.versions(person.id, version.id));
    if (version.kind === "data") {
      const loaded = await shelf.load(person.id, version.id).catch(() => null);
      if (loaded && isText(version.mimeType)) body = body.replace("</main>", `<pre>${escapeHtml(loaded.bytes.subarray(0, 256 * 1024).toString("utf8"))}</pre></main>`);
    }
    res.set(framePageHeaders()).send(body);
  });

  router.get("/a/:id/content", deps.requirePage, async (req, res) => {
    const { person } = webContext(req);
    const version = await versionOf(shelf, person.id, req);
    const loaded = version && (version.kind === "page" || version.kind === "document") ? await shelf.load(person.id, version.id).catch(() => null) : null;
    if (!loaded) return void notFound(res);
    if (loaded.artifact.kind === "page") return void res.set(pageHeaders()).send(guardedPage(loaded.bytes.toString("utf8")));
    const ws = shelf.workspace(person.id);
    const html = markdownDocument(loaded.bytes.toString("utf8"), loaded.artifact.title);
    const bundled = await bundleHtml(html, "", async (path) => ws.readBytes(path, 5 * 1024 * 1024).catch(() => null));
    res.set({ ...pageHeaders(), "Content-Security-Policy": DOCUMENT_CSP }).send(bundled.html);
  });

  return router;
}

function notFound(res: Response): void {
  res.status(404).set(framePageHeaders()).send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found · Familiar</title></head><body><p>There is no such artifact. <a href="/dashboard/artifacts">All artifacts</a></p></body></html>`);
}
