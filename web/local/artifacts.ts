import { Router } from "express";
import { z } from "zod";
import { asId } from "../../core/ids.js";
import type { Store } from "../../core/storage/index.js";
import type { Artifact } from "../../core/artifacts/index.js";
import type { ArtifactSource } from "../../sandbox/artifacts/index.js";
import { checkExpressRequest } from "../http/index.js";

const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  after: z.string().max(500).optional(),
});

/** JSON shape of an artifact in the API (dates as ISO-8601, size in bytes). */
export function artifactJson(a: Artifact) {
  return {
    id: a.id,
    seriesId: a.seriesId,
    version: a.version,
    kind: a.kind,
    title: a.title,
    name: a.name,
    mimeType: a.mimeType,
    size: a.size,
    path: a.path,
    source: a.source,
    taskId: a.taskId,
    goalId: a.goalId,
    taint: a.taint,
    createdAt: a.createdAt.toISOString(),
  };
}

/**
 * Artifacts in the API (same access rule as the dashboard: loopback clients only unless
 * LOCAL_CHAT_ALLOW_REMOTE):
 * - `GET /api/persons/:id/artifacts?limit&after` — newest first, `{items, next}`;
 * - `GET /api/persons/:id/artifacts/:artifactId/content` — the file itself (its MIME type, as an
 *   attachment; images inline), 404 when it is not that person's or its file is gone.
 */
export function artifactsRouter(deps: { store: Pick<Store, "artifacts">; source: ArtifactSource; allowRemote: boolean }): Router {
  const router = Router();
  router.use("/api/persons", (req, res, next) => {
    const verdict = checkExpressRequest(req, deps.allowRemote);
    if (verdict.ok) return next();
    res.status(403).json({ error: `the dashboard API only serves this machine: ${verdict.reason}` });
  });
  router.get("/api/persons/:id/artifacts", async (req, res) => {
    const query = pageQuery.safeParse(req.query);
    if (!query.success) return void res.status(400).json({ error: "invalid page query", problems: query.error.issues.map((i) => i.message) });
    const page = await deps.store.artifacts.listArtifacts(asId("person", req.params.id), query.data);
    res.json({ items: page.items.map(artifactJson), next: page.next ?? null });
  });
  router.get("/api/persons/:id/artifacts/:artifactId/content", async (req, res) => {
    const loaded = await deps.source.load(asId("person", req.params.id), asId("artifact", req.params.artifactId)).catch(() => null);
    if (loaded === null) return void res.status(404).json({ error: "no such artifact" });
    const { artifact, bytes } = loaded;
    const inline = /^image\/(png|jpeg|gif|webp)$/.test(artifact.mimeType);
    res.setHeader("content-type", artifact.mimeType);
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("content-security-policy", "default-src 'none'; sandbox");
    res.setHeader("content-disposition", `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(artifact.name)}`);
    res.send(bytes);
  });
  return router;
}
