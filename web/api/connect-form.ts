/**
 * The one-time connection form (`/connect/:token`, what `/connect email` sends; the signed-in
 * person's Connections API is connections-api.ts). The form — the same fields, capabilities and
 * words as the web app's Connections section, both drawn from the kind's `form` — asks for a kind's server settings and
 * its app password, and which capabilities to grant (each separately, the kind's default ticked);
 * the desk tests the settings before anything is kept and the password goes to the person's vault
 * only. The page is plain HTML with no script, no referrer, no caching and no framing; a cross-site
 * POST is refused by its Origin. Nothing a page or an answer shows carries the password.
 */
import escapeHtml from "escape-html";
import express, { Router } from "express";
import { z } from "zod";
import type { ConnectDesk, ConnectionKind, Connections } from "../../core/connections/index.js";
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

/** What a Test said, shown above the form: what worked, or every problem. */
type Outcome = { passed: string } | { problems: readonly string[] } | null;

function outcomeHtml(outcome: Outcome): string {
  if (!outcome) return "";
  if ("passed" in outcome) return `<div class="ok" role="status"><p>Test passed: ${escapeHtml(outcome.passed)}</p><p>Nothing is kept yet: enter the password again and press Test and connect.</p></div>`;
  return outcome.problems.length ? `<div class="error" role="alert">${outcome.problems.map((p) => `<p>${escapeHtml(p)}</p>`).join("")}</div>` : "";
}

function form(token: string, kind: ConnectionKind, values: Record<string, string>, granted: readonly string[], outcome: Outcome): string {
  const fields = kind.form!.fields.map((f) => field(f, values[f.name] ?? f.value ?? "")).join("");
  const caps = kind.capabilities
    .map((c) => `<label class="cap"><input type="checkbox" name="capabilities" value="${escapeHtml(c.id)}"${granted.includes(c.id) ? " checked" : ""}> ${escapeHtml(c.label)} — <span class="hint">${escapeHtml(c.allows)}</span></label>`)
    .join("");
  return (
    `<h1>Connect ${escapeHtml(kind.title)}</h1><p class="hint">${escapeHtml(kind.form!.intro)}</p>` +
    outcomeHtml(outcome) +
    `<form method="post" action="/connect/${escapeHtml(token)}" autocomplete="off">${fields}<fieldset><legend>What Familiar may do (each is granted separately)</legend>${caps}</fieldset>` +
    `<p class="hint">Familiar tests the settings before it keeps anything. The password is kept encrypted in your vault; Familiar's model never sees it.</p>` +
    `<button type="submit" name="action" value="test">Test</button> <button type="submit" name="action" value="connect">Test and connect</button></form>` +
    `<p class="hint">Signed in to the web app? The same form is in its <a href="/dashboard/connections">Connections section</a>, with each connection's state.</p>`
  );
}

const gonePage = (text: string) => `<h1>This link has expired or was already used</h1><p>${escapeHtml(text)}</p>`;

/** The one-time form: `GET /connect/:token` shows it, `POST /connect/:token` (urlencoded) tests and keeps. */
export function connectFormRouter(deps: ConnectWebDeps, publicUrl: () => string | null = () => null): Router {
  const router = Router();
  router.get("/connect/:token", (req, res) => {
    const token = String(req.params.token);
    const link = deps.desk.peek(token);
    if (!link?.kind.form) return page(res, 410, "Link expired", gonePage("Ask Familiar for a new one: /connect email, /connect calendar or /connect feed."));
    page(res, 200, `Connect ${link.kind.title}`, form(token, link.kind, {}, link.kind.defaultCapabilities, null));
  });
  router.post("/connect/:token", express.urlencoded({ extended: false, limit: "64kb" }), async (req, res) => {
    const token = String(req.params.token);
    if (!sameOrigin(req, publicUrl())) return page(res, 403, "Refused", "<h1>Refused</h1><p>This form can only be sent from its own page.</p>");
    const link = deps.desk.peek(token);
    if (!link?.kind.form) return page(res, 410, "Link expired", gonePage("Ask Familiar for a new one: /connect email, /connect calendar or /connect feed."));
    const body = posted.safeParse(req.body ?? {});
    if (!body.success) return page(res, 400, "Connect", form(token, link.kind, {}, link.kind.defaultCapabilities, { problems: ["The form was not filled in as expected."] }));
    const values: Record<string, string> = {};
    let capabilities: string[] = [];
    let action = "connect";
    for (const [k, v] of Object.entries(body.data)) {
      if (k === "capabilities") capabilities = Array.isArray(v) ? v : [v];
      else if (k === "action" && typeof v === "string") action = v;
      else if (typeof v === "string") values[k] = v;
    }
    if (action === "test") {
      const tried = await deps.desk.check(token, values);
      if (!tried.ok) return page(res, 410, "Link expired", gonePage(tried.problems.join(" ")));
      return page(res, tried.test.ok ? 200 : 400, `Connect ${link.kind.title}`, form(token, link.kind, values, capabilities, tried.test.ok ? { passed: tried.test.summary } : { problems: tried.test.problems }));
    }
    const result = await deps.desk.submit(token, values, capabilities);
    if (result.ok) {
      const c = result.connection;
      const test = result.test?.ok ? ` ${result.test.summary}` : "";
      const may = c.capabilities.map((id) => link.kind.capabilities.find((k) => k.id === id)?.label ?? id).join(", ");
      return page(
        res,
        200,
        "Connected",
        `<h1>Connected ${escapeHtml(c.label)}</h1><p>Familiar may: ${escapeHtml(may || "nothing yet")}.${escapeHtml(test)}</p>` +
          `<p>See its state, change what Familiar may do, test or disconnect it in the <a href="/dashboard/connections">Connections section</a> of the web app. You can close this page.</p>`,
      );
    }
    if (result.status === 410) return page(res, 410, "Link expired", gonePage(result.problems.join(" ")));
    page(res, 400, `Connect ${link.kind.title}`, form(token, link.kind, values, capabilities, { problems: result.problems }));
  });
  return router;
}
