import { Router } from "express";
import { z } from "zod";
import { SecretError, SHARED_OWNER, type SecretVault } from "../../core/secrets/index.js";
import { checkExpressRequest, boundedJson } from "../http/index.js";

const secretBody = z
  .object({
    /** A person id, or "shared" for the operator's own (never substituted into a person's tool call). */
    owner: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/),
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "1–64 characters of A-Z a-z 0-9 _ . -"),
    value: z.string().min(1).max(16_384),
    origins: z.array(z.string().min(1).max(2_048)).min(1).max(20),
  })
  .strict();

/**
 * The secret vault's admin API (loopback clients only unless LOCAL_CHAT_ALLOW_REMOTE), the only way
 * credentials get in — never through chat, so the model never sees them:
 * - `GET /api/secrets` — owners, names and bound origins (never values);
 * - `PUT /api/secrets` `{owner, name, value, origins: ["https://api.example.com"]}` — store or replace
 *   (204); `owner` is a person id (`isPerson` must know it), or `shared` for the operator's own keys;
 *   any other owner (`__proto__`, a typo, a deleted person) answers 400 and stores nothing;
 * - `DELETE /api/secrets/:owner/:name` — remove (204; 404 when there was none).
 * People add their own through the web app or a one-time link (web/api/secret-form.ts). Tools then
 * use `{{secret:NAME}}`; Sentinel substitutes the acting person's secret, only for a bound origin.
 */
export function secretsRouter(vault: SecretVault, options: { allowRemote: boolean; isPerson: (id: string) => Promise<boolean> }): Router {
  const router = Router();
  router.use("/api/secrets", (req, res, next) => {
    const verdict = checkExpressRequest(req, options.allowRemote);
    if (verdict.ok) return next();
    res.status(403).json({ error: `secrets can only be managed from this machine: ${verdict.reason}` });
  });
  router.use("/api/secrets", ...boundedJson({ limit: 32 * 1024, source: "secrets" }));
  router.get("/api/secrets", (_req, res) => void res.json({ items: vault.list() }));
  router.put("/api/secrets", async (req, res) => {
    const body = secretBody.safeParse(req.body);
    if (!body.success) return void res.status(400).json({ error: "invalid secret", problems: body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`) });
    if (body.data.owner !== SHARED_OWNER && !(await options.isPerson(body.data.owner))) {
      return void res.status(400).json({ error: `unknown owner ${JSON.stringify(body.data.owner)}: a secret belongs to a person Familiar knows (their id) or to "${SHARED_OWNER}"`, problems: ["owner: not a known person"] });
    }
    try {
      await vault.set(body.data.owner, body.data.name, body.data.value, body.data.origins);
    } catch (err) {
      if (err instanceof SecretError) return void res.status(400).json({ error: err.message });
      throw err;
    }
    res.status(204).end();
  });
  router.delete("/api/secrets/:owner/:name", async (req, res) => {
    const removed = await vault.delete(String(req.params.owner), String(req.params.name));
    res.status(removed ? 204 : 404).end();
  });
  return router;
}
