import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { asId } from "../../core/ids.js";
import type { SentinelViews } from "../../core/sentinel/index.js";
import type { Store } from "../../core/storage/index.js";
import type { MemoryItem } from "../../core/memory/index.js";
import type { Person } from "../../core/persons/index.js";
import { checkExpressRequest, boundedJson } from "../http/index.js";

const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  after: z.string().max(500).optional(),
});

const memoryPatch = z
  .object({
    text: z.string().min(1).max(1_000).optional(),
    kind: z.enum(["fact", "preference", "relationship", "decision"]).optional(),
    confidence: z.number().min(0).max(1).optional(),
    expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .strict()
  .refine((p) => Object.keys(p).length > 0, "give at least one of text, kind, confidence, expiresAt");

function problems(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
}

/**
 * JSON shape of a memory item in the dashboard API (dates as ISO-8601). `taint` is `{ source }` when
 * the item was made in an activation that had read outside content (issue 11), null when it came
 * from the person's own words.
 */
export function memoryJson(m: MemoryItem) {
  return {
    id: m.id,
    kind: m.kind,
    text: m.text,
    confidence: m.confidence,
    provenance: m.provenance,
    taint: m.taint ? { source: m.taint.source } : null,
    expiresAt: m.expiresAt?.toISOString() ?? null,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}

/**
 * The dashboard's JSON API (same access rule as the local chat: loopback clients only unless
 * LOCAL_CHAT_ALLOW_REMOTE):
 * - `GET /api/persons` — persons with their identities;
 * - `GET /api/persons/:id/memory?limit&after` — memory items, newest first, `{items, next}`;
 * - `PATCH /api/persons/:id/memory/:memoryId` — edit text, kind, confidence or expiry;
 * - `DELETE /api/persons/:id/memory/:memoryId` — forget (204; 404 if not that person's);
 * - `GET /api/persons/:id/grants` — active grants; `DELETE /api/persons/:id/grants/:grantId` — revoke (204; 404);
 * - `GET /api/persons/:id/activity?limit&after` — audit events, newest first, `{status, items, next}`.
 */
export function dashboardRouter(deps: { store: Store; views: SentinelViews; allowRemote: boolean }): Router {
  const { store, views } = deps;
  const router = Router();
  router.use("/api/persons", (req, res, next) => {
    const verdict = checkExpressRequest(req, deps.allowRemote);
    if (verdict.ok) return next();
    res.status(403).json({ error: `the dashboard API only serves this machine: ${verdict.reason}` });
  });
  router.use("/api/persons", ...boundedJson({ limit: 64 * 1024, source: "dashboard" }));

  const person = async (req: Request, res: Response): Promise<Person | null> => {
    const found = await store.persons.getPerson(asId("person", String(req.params.id)));
    if (!found) res.status(404).json({ error: `no person ${String(req.params.id)}` });
    return found;
  };

  router.get("/api/persons", async (req, res) => {
    const q = pageQuery.safeParse(req.query);
    if (!q.success) return void res.status(400).json({ error: "invalid query", problems: problems(q.error) });
    const page = await store.persons.listPersons(q.data);
    const items = await Promise.all(
      page.items.map(async (p) => ({
        id: p.id,
        displayName: p.displayName,
        timeZone: p.timeZone,
        identities: (await store.persons.listIdentities(p.id)).map((i) => ({ channel: i.channel, accountId: i.accountId, unreachable: i.unreachable !== null })),
      })),
    );
    res.json({ items, next: page.next ?? null });
  });

  router.get("/api/persons/:id/memory", async (req, res) => {
    const q = pageQuery.safeParse(req.query);
    if (!q.success) return void res.status(400).json({ error: "invalid query", problems: problems(q.error) });
    const p = await person(req, res);
    if (!p) return;
    const page = await store.memory.listMemory(p.id, q.data);
    res.json({ items: page.items.map(memoryJson), next: page.next ?? null });
  });

  router.patch("/api/persons/:id/memory/:memoryId", async (req, res) => {
    const body = memoryPatch.safeParse(req.body);
    if (!body.success) return void res.status(400).json({ error: "invalid memory patch", problems: problems(body.error) });
    const p = await person(req, res);
    if (!p) return;
    const id = asId("memory", String(req.params.memoryId));
    const existing = await store.memory.getMemory(id);
    if (!existing || existing.personId !== p.id) return void res.status(404).json({ error: `no memory item ${id}` });
    const { expiresAt, ...rest } = body.data;
    const updated = await store.memory.updateMemory(p.id, id, {
      ...rest,
      ...(expiresAt !== undefined && { expiresAt: expiresAt === null ? null : new Date(expiresAt) }),
    });
    res.json(memoryJson(updated));
  });

  router.delete("/api/persons/:id/memory/:memoryId", async (req, res) => {
    const p = await person(req, res);
    if (!p) return;
    const removed = await store.memory.deleteMemory(p.id, asId("memory", String(req.params.memoryId)));
    if (!removed) return void res.status(404).json({ error: `no memory item ${String(req.params.memoryId)}` });
    res.status(204).end();
  });

  router.get("/api/persons/:id/grants", async (req, res) => {
    const p = await person(req, res);
    if (!p) return;
    res.json({ items: await views.listGrantsView(p.id) });
  });

  router.delete("/api/persons/:id/grants/:grantId", async (req, res) => {
    const p = await person(req, res);
    if (!p) return;
    const result = await views.revokeGrant(p.id, asId("grant", String(req.params.grantId)));
    if (!result.revoked) return void res.status(404).json({ error: result.notice });
    res.status(204).end();
  });

  router.get("/api/persons/:id/activity", async (req, res) => {
    const q = pageQuery.safeParse(req.query);
    if (!q.success) return void res.status(400).json({ error: "invalid query", problems: problems(q.error) });
    const p = await person(req, res);
    if (!p) return;
    const [status, page] = await Promise.all([views.currentStatus(p.id), views.listAuditView(p.id, q.data)]);
    res.json({ status, items: page.items, next: page.next ?? null });
  });

  return router;
}
