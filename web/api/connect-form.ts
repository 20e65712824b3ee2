/**
 * The one-time connection form (`/connect/:token`, what `/connect email` sends) and the signed-in
 * person's Connections API (`/api/web/connections`). The form asks for a kind's server settings and
 * its app password, and which capabilities to grant (each separately, the kind's default ticked);
 * the desk tests the settings before anything is kept and the password goes to the person's vault
 * only. The page is plain HTML with no script, no referrer, no caching and no framing; a cross-site
 * POST is refused by its Origin. Nothing a page or an answer shows carries the password.
 */
import escapeHtml from "escape-html";
import express, { Router } from "express";
import { z } from "zod";
import type { ConnectDesk, ConnectionKind, Connections } from "../../core/connections/index.js";
import { asId } from "../../core/ids.js";
import type { Connection } from "../../core/connections/index.js";
import { webContext } from "./auth.js";
import { page, sameOrigin } from "./secret-form.js";

/** What the web app wires: the desk of one-time links and the person's connections. */
export interface ConnectWebDeps {
  desk: ConnectDesk;
  connections: Connections;
}

const posted = z.record(z.string().max(100), z.union([z.string().max(20_000), z.array(z.string().max(100)).max(20)]));

function field(f: NonNullable<ConnectionKind["form"]>["fields"][number], value: string): string {
  const id = `f_${escapeHtml(f.name)}`;
  const req = f.required ? " required" : "";
  const label = `<label for="${id}">${escapeHtml(f.label)}</label>`;
  const hint = f.hint ? `<p class="hint">${escapeHtml(f.hint)}</p>` : "";
  if (f.type === "select")
    return label + `<select id="${id}" name="${escapeHtml(f.name)}">${(f.options ?? []).map((o) => `<option value="${escapeHtml(o.value)}"${o.value === value ? " selected" : ""}>${escapeHtml(o.label)}</option>`).join("")}</select>` + hint;
  if (f.type === "textarea") return label + `<textarea id="${id}" name="${escapeHtml(f.name)}" rows="3"${req}>${escapeHtml(value)}</textarea>` + hint;
  // A password is never written back into the page (a failed test asks for it again).
  const shown = f.type === "password" ? "" : value;
  const auto = f.type === "password" ? ' autocomplete="new-password"' : "";
  return label + `<input id="${id}" name="${escapeHtml(f.name)}" type="${f.type}" value="${escapeHtml(shown)}"${req}${auto}>` + hint;
}

function form(token: string, kind: ConnectionKind, values: Record<string, string>, granted: readonly string[], problems: readonly string[]): string {
  const fields = kind.form!.fields.map((f) => field(f, values[f.name] ?? f.value ?? "")).join("");
  const caps = kind.capabilities
    .map((c) => `<label class="cap"><input type="checkbox" name="capabilities" value="${escapeHtml(c.id)}"${granted.includes(c.id) ? " checked" : ""}> ${escapeHtml(c.label)} — <span class="hint">${escapeHtml(c.allows)}</span></label>`)
    .join("");
  return (
    `<h1>Connect ${escapeHtml(kind.title)}</h1><p class="hint">${escapeHtml(kind.form!.intro)}</p>` +
    (problems.length ? `<div class="error" role="alert">${problems.map((p) => `<p>${escapeHtml(p)}</p>`).join("")}</div>` : "") +
    `<form method="post" action="/connect/${escapeHtml(token)}" autocomplete="off">${fields}<fieldset><legend>What Familiar may do</legend>${caps}</fieldset>` +
    `<p class="hint">Familiar tests the settings before it keeps anything. The password is kept encrypted in your vault; Familiar's model never sees it.</p><button type="submit">Test and connect</button></form>`
  );
}

const gonePage = (text: string) => `<h1>This link has expired or was already used</h1><p>${escapeHtml(text)}</p>`;

/** The one-time form: `GET /connect/:token` shows it, `POST /connect/:token` (urlencoded) tests and keeps. */
export function connectFormRouter(deps: ConnectWebDeps, publicUrl: () => string | null = () => null): Router {
  const router = Router();
  router.get("/connect/:token", (req, res) => {
    const token = String(req.params.token);
    const link = deps.desk.peek(token);
    if (!link?.kind.form) return page(res, 410, "Link expired", gonePage("Ask Familiar for a new one: /connect email."));
    page(res, 200, `Connect ${link.kind.title}`, form(token, link.kind, {}, link.kind.defaultCapabilities, []));
  });
  router.post("/connect/:token", express.urlencoded({ extended: false, limit: "64kb" }), async (req, res) => {
    const token = String(req.params.token);
    if (!sameOrigin(req, publicUrl())) return page(res, 403, "Refused", "<h1>Refused</h1><p>This form can only be sent from its own page.</p>");
    const link = deps.desk.peek(token);
    if (!link?.kind.form) return page(res, 410, "Link expired", gonePage("Ask Familiar for a new one: /connect email."));
    const body = posted.safeParse(req.body ?? {});
    if (!body.success) return page(res, 400, "Connect", form(token, link.kind, {}, link.kind.defaultCapabilities, ["The form was not filled in as expected."]));
    const values: Record<string, string> = {};
    let capabilities: string[] = [];
    for (const [k, v] of Object.entries(body.data)) {
      if (k === "capabilities") capabilities = Array.isArray(v) ? v : [v];
      else if (typeof v === "string") values[k] = v;
    }
    const result = await deps.desk.submit(token, values, capabilities);
    if (result.ok) {
      const c = result.connection;
      const test = result.test?.ok ? ` ${result.test.summary}` : "";
      return page(res, 200, "Connected", `<h1>Connected ${escapeHtml(c.label)}</h1><p>Familiar may: ${escapeHtml(c.capabilities.join(", ") || "nothing yet")}.${escapeHtml(test)}</p><p>You can close this page.</p>`);
    }
    if (result.status === 410) return page(res, 410, "Link expired", gonePage(result.problems.join(" ")));
    page(res, 400, `Connect ${link.kind.title}`, form(token, link.kind, values, capabilities, result.problems));
  });
  return router;
}

/** A connection as the Connections page shows it: never its settings' secrets (there are none) nor its credential. */
function view(c: Connection, kind: ConnectionKind | undefined) {
  return {
    id: c.id,
    kind: c.kind,
    title: kind?.title ?? c.kind,
    label: c.label,
    source: c.source,
    capabilities: c.capabilities,
    available: (kind?.capabilities ?? []).map((k) => ({ id: k.id, label: k.label, allows: k.allows })),
    status: { state: c.status.state, mode: c.status.mode, lastSyncAt: c.status.lastSyncAt?.toISOString() ?? null, lastError: c.status.lastError, checkedAt: c.status.checkedAt?.toISOString() ?? null },
    createdAt: c.createdAt.toISOString(),
  };
}

const capabilitiesBody = z.object({ capabilities: z.array(z.string().min(1).max(40)).max(20) });
const linkBody = z.object({ kind: z.string().min(1).max(40) });

/**
 * The signed-in person's connections (mount behind `requireSession`): `GET /api/web/connections`
 * (theirs, and the kinds they can connect), `PUT /api/web/connections/:id/capabilities`
 * (`{capabilities}`: exactly these are granted), `POST /api/web/connections/:id/test`,
 * `DELETE /api/web/connections/:id` (the credential is deleted too), `POST /api/web/connections/link`
 * (`{kind}` → a one-time form link `{url, expiresAt}`).
 */
export function connectionsWebApi(deps: ConnectWebDeps): Router {
  const router = Router();
  const own = async (personId: Parameters<Connections["get"]>[1], id: string) => deps.connections.get(asId("connection", id), personId);
  router.get("/api/web/connections", async (req, res) => {
    const { person } = webContext(req);
    const mine = await deps.connections.list({ personId: person.id });
    const kinds = deps.connections.kinds().filter((k) => k.form).map((k) => ({ kind: k.kind, title: k.title }));
    res.json({ items: mine.map((c) => view(c, deps.connections.kind(c.kind))), kinds });
  });
  router.put("/api/web/connections/:id/capabilities", express.json({ limit: "8kb" }), async (req, res) => {
    const { person } = webContext(req);
    const body = capabilitiesBody.safeParse(req.body);
    if (!body.success) return void res.status(400).json({ error: "capabilities: a list of capability ids" });
    const c = await own(person.id, String(req.params.id));
    if (!c) return void res.status(404).json({ error: "no such connection" });
    try {
      const updated = await deps.connections.setCapabilities(person.id, c.id, body.data.capabilities);
      res.json(view(updated, deps.connections.kind(updated.kind)));
    } catch (err) {
      res.status(400).json({ error: (err as Error).message });
    }
  });
  router.post("/api/web/connections/:id/test", async (req, res) => {
    const { person } = webContext(req);
    const c = await own(person.id, String(req.params.id));
    if (!c) return void res.status(404).json({ error: "no such connection" });
    res.json(await deps.connections.test(person.id, c.id));
  });
  router.delete("/api/web/connections/:id", async (req, res) => {
    const { person } = webContext(req);
    const c = await own(person.id, String(req.params.id));
    res.status(c && (await deps.connections.disconnect(person.id, c.id)) ? 204 : 404).end();
  });
  router.post("/api/web/connections/link", express.json({ limit: "8kb" }), (req, res) => {
    const { person } = webContext(req);
    const body = linkBody.safeParse(req.body);
    if (!body.success || !deps.connections.kind(body.data.kind)?.form) return void res.status(400).json({ error: "kind: one of the kinds that can be connected from a form" });
    const { url, expiresAt } = deps.desk.offer(person.id, body.data.kind);
    res.json({ url, expiresAt: expiresAt.toISOString() });
  });
  return router;
}
