import express, { Router } from "express";
import { z } from "zod";

/** What the core does with a webhook call (see `Familiar.handleHookEvent`). */
export type HookHandler = (hookId: string, secret: string, body: string) => Promise<{ status: "unknown" } | { status: "forbidden" } | { status: "accepted"; resumed: number }>;

const hookIdSchema = z.string().regex(/^hook_[0-9a-f]{16,40}$/);

/**
 * `POST /hooks/:hookId` — outside services resume tasks waiting for an event. The secret goes in the
 * `X-Familiar-Hook-Secret` header; the body (any content type, at most 256 KiB) reaches the task as
 * untrusted data. Answers 202 (accepted; `resumed` tasks), 401 (missing or wrong secret), 404
 * (no such hook), 413 (body too large).
 */
export function hooksRouter(handle: HookHandler): Router {
  const router = Router();
  router.post("/hooks/:hookId", express.text({ type: () => true, limit: "256kb" }), async (req, res) => {
    const id = hookIdSchema.safeParse(req.params.hookId);
    if (!id.success) return void res.status(404).json({ error: "no such hook" });
    const secret = req.get("x-familiar-hook-secret");
    if (!secret) return void res.status(401).json({ error: "missing X-Familiar-Hook-Secret header" });
    const body = typeof req.body === "string" ? req.body : "";
    const outcome = await handle(id.data, secret, body);
    if (outcome.status === "unknown") return void res.status(404).json({ error: "no such hook" });
    if (outcome.status === "forbidden") return void res.status(401).json({ error: "wrong secret" });
    res.status(202).json({ accepted: true, resumed: outcome.resumed });
  });
  return router;
}
