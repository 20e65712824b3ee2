import { Router, type Request } from "express";
import { readBody, type RefusalSink, type WithRawBody } from "../http/index.js";
import { z } from "zod";

/** What the core does with a webhook call (see `Familiar.handleHookEvent`). */
export type HookHandler = (hookId: string, secret: string, body: string) => Promise<{ status: "unknown" } | { status: "forbidden" } | { status: "accepted"; resumed: number; kept?: boolean }>;

const hookIdSchema = z.string().regex(/^hook_[0-9a-f]{16,40}$/);

/**
 * `POST /hooks/:hookId` — outside services resume tasks waiting for an event. The secret goes in the
 * `X-Familiar-Hook-Secret` header; the body (any content type, at most 256 KiB) reaches the task as
 * untrusted data. The body is read with its limit before the secret is checked (an oversized or
 * endless body is aborted). Answers 202 (accepted; `resumed` tasks, and `kept: true` when no task
 * waited yet: the event resumes its task as soon as it waits), 401 (missing or wrong secret),
 * 404 (no such hook), 413 (body too large).
 */
export function hooksRouter(handle: HookHandler, options: { onRefused?: RefusalSink } = {}): Router {
  const router = Router();
  const body = readBody({ limit: 256 * 1024, source: "hooks", ...(options.onRefused && { onRefused: options.onRefused }) });
  router.post("/hooks/:hookId", body, async (req: Request & WithRawBody, res) => {
    const id = hookIdSchema.safeParse(req.params.hookId);
    if (!id.success) return void res.status(404).json({ error: "no such hook" });
    const secret = req.get("x-familiar-hook-secret");
    if (!secret) return void res.status(401).json({ error: "missing X-Familiar-Hook-Secret header" });
    const outcome = await handle(id.data, secret, (req.rawBody ?? Buffer.alloc(0)).toString("utf8"));
    if (outcome.status === "unknown") return void res.status(404).json({ error: "no such hook" });
    if (outcome.status === "forbidden") return void res.status(401).json({ error: "wrong secret" });
    res.status(202).json({ accepted: true, resumed: outcome.resumed, kept: outcome.kept === true });
  });
  return router;
}
