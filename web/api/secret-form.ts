/**
 * The one-time secret form (`/secret/:token`) and the signed-in person's secrets API
 * (`/api/web/secrets`). The form is how a person stores a credential without typing it into chat:
 * the token in the URL is the capability (single use, 15 minutes; see SecretDesk), so the page needs
 * no session; a cross-site POST is refused by its Origin. The page is plain HTML with no script, no
 * referrer, no caching and no framing.
 */
import escapeHtml from "escape-html";
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import type { SecretDesk } from "../../core/secrets/index.js";
import { readBody, type WithRawBody } from "../http/index.js";
import { webContext } from "./auth.js";

/** The form's body limit: a name, a value of at most 16 KiB and a list of origins, URL-encoded. */
const FORM_BODY_LIMIT = 64 * 1024;


const formBody = z.object({ name: z.string().max(200).default(""), value: z.string().max(16_384).default(""), origins: z.string().max(50_000).default("") });

export function page(res: Response, status: number, title: string, body: string): void {
  res
    .status(status)
    .set({
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      "X-Content-Type-Options": "nosniff",
      "X-Frame-Options": "DENY",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    })
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>` +
        `<style>body{font:16px system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:1rem 0 .3rem;font-weight:600}input,textarea{width:100%;box-sizing:border-box;font:inherit;padding:.5rem}button{margin-top:1rem;font:inherit;padding:.5rem 1.2rem}.hint{color:#555;font-size:.9rem}.error{color:#a00}</style></head><body>${body}</body></html>`,
    );
}

function form(token: string, name: string, origins: string, error: string | null): string {
  return (
    `<h1>Store a secret</h1><p class="hint">Familiar keeps it encrypted in your own vault and only sends it to the sites you list below. Familiar's model never sees the value — only its name.</p>` +
    (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "") +
    `<form method="post" action="/secret/${escapeHtml(token)}" autocomplete="off">` +
    `<label for="name">Name</label><input id="name" name="name" required maxlength="64" pattern="[A-Za-z0-9_.\\-]{1,64}" value="${escapeHtml(name)}">` +
    `<label for="value">Secret (password, API key, token)</label><input id="value" name="value" type="password" required autocomplete="new-password">` +
    `<label for="origins">Sites it may be sent to (one per line)</label><textarea id="origins" name="origins" rows="3" required placeholder="https://api.example.com">${escapeHtml(origins)}</textarea>` +
    `<p class="hint">This link works once and expires in 15 minutes.</p><button type="submit">Store</button></form>`
  );
}

/** A POST from another site is refused: its Origin must name this server (its Host, or PUBLIC_URL behind a proxy). */
export function sameOrigin(req: Request, publicUrl: string | null): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origin === "null") return origin === undefined;
  try {
    const host = new URL(origin).host;
    return host === req.headers.host || (publicUrl !== null && host === new URL(publicUrl).host);
  } catch {
    return false;
  }
}

/** The one-time form: `GET /secret/:token` shows it, `POST /secret/:token` (urlencoded) stores. */
export function secretFormRouter(desk: SecretDesk, publicUrl: () => string | null = () => null): Router {
  const router = Router();
  router.get("/secret/:token", (req, res) => {
    const token = String(req.params.token);
    const link = desk.peek(token);
    if (!link) return page(res, 410, "Link expired", `<h1>This link has expired or was already used</h1><p>Ask Familiar for a new one: <code>/secret NAME</code>.</p>`);
    page(res, 200, "Store a secret", form(token, link.name ?? "", "", null));
  });
  // Read with its limit while streaming (express.urlencoded would drain an oversized body to its end before answering 413).
  router.post("/secret/:token", readBody({ limit: FORM_BODY_LIMIT, source: "secret-form" }), async (req: Request & WithRawBody, res) => {
    const token = String(req.params.token);
    if (!sameOrigin(req, publicUrl())) return page(res, 403, "Refused", "<h1>Refused</h1><p>This form can only be sent from its own page.</p>");
    if (!req.is("application/x-www-form-urlencoded")) return page(res, 415, "Store a secret", form(token, "", "", "The form was not sent as a form (application/x-www-form-urlencoded)."));
    const body = formBody.safeParse(Object.fromEntries(new URLSearchParams((req.rawBody ?? Buffer.alloc(0)).toString("utf8"))));
    if (!body.success) return page(res, 400, "Store a secret", form(token, "", "", "The form was not filled in as expected."));
    const origins = body.data.origins.split(/[\s,]+/).filter((o) => o.length > 0);
    const result = await desk.submit(token, { name: body.data.name, value: body.data.value, origins });
    if (result.ok) return page(res, 200, "Stored", `<h1>Stored ${escapeHtml(result.name)}</h1><p>It may only be sent to ${escapeHtml(result.origins.join(", "))}. You can close this page.</p>`);
    if (result.status === 410) return page(res, 410, "Link expired", `<h1>This link has expired or was already used</h1><p>${escapeHtml(result.error)}</p>`);
    page(res, 400, "Store a secret", form(token, body.data.name, body.data.origins, result.error));
  });
  return router;
}

/**
 * The signed-in person's secrets (mount behind `requireSession`): `GET /api/web/secrets` (names and
 * origins, never values), `POST /api/web/secrets/link` (a fresh one-time form link `{url, expiresAt}`),
 * `DELETE /api/web/secrets/:name`.
 */
export function secretsWebApi(desk: SecretDesk): Router {
  const router = Router();
  router.get("/api/web/secrets", (req, res) => {
    const { person } = webContext(req);
    res.json({ items: desk.list(person.id).map((s) => ({ name: s.name, origins: s.origins })) });
  });
  router.post("/api/web/secrets/link", (req, res) => {
    const { person } = webContext(req);
    const { url, expiresAt } = desk.offer(person.id);
    res.json({ url, expiresAt: expiresAt.toISOString() });
  });
  router.delete("/api/web/secrets/:name", async (req, res) => {
    const { person } = webContext(req);
    res.status((await desk.remove(person.id, String(req.params.name))) ? 204 : 404).end();
  });
  return router;
}
