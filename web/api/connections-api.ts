/**
 * The signed-in person's Connections API (`/api/web/connections`, behind the session and its CSRF
 * token), what the web app's Connections section calls: the person's connections with their state
 * in words, the kinds they can add with each kind's form (the same fields as the one-time
 * `/connect` page) and what each capability allows; *Test* of unsaved settings, *Connect* (tested
 * before anything is kept), grants, a test of a kept connection, disconnect (the credential is
 * deleted from the vault) and a one-time form link.
 *
 * Password fields are write-only: a password goes to the person's vault and never comes back in an
 * answer, a problem or a log line.
 */
import express, { Router, type Response } from "express";
import { z } from "zod";
import { describeStatus, type ConnectionKind, type Connections, type FormField } from "../../core/connections/index.js";
import { asId, type PersonId } from "../../core/ids.js";
import type { Connection } from "../../core/connections/index.js";
import { webContext } from "./auth.js";
import type { ConnectWebDeps } from "./connect-form.js";
import { plainErrors } from "./plain-errors.js";

/** A connection as the Connections section shows it: never its credential. */
export function connectionView(c: Connection, kind: ConnectionKind | undefined) {
  const words = describeStatus(c);
  return {
    id: c.id,
    kind: c.kind,
    title: kind?.title ?? c.kind,
    label: c.label,
    source: c.source,
    capabilities: c.capabilities,
    available: (kind?.capabilities ?? []).map((k) => ({ id: k.id, label: k.label, allows: k.allows })),
    status: {
      state: c.status.state,
      mode: c.status.mode,
      lastSyncAt: c.status.lastSyncAt?.toISOString() ?? null,
      lastError: c.status.lastError,
      checkedAt: c.status.checkedAt?.toISOString() ?? null,
      words: words.state,
      sync: words.sync,
    },
    createdAt: c.createdAt.toISOString(),
    /** The form's values to change it (no password, ever); null when it cannot be changed here (set in FAMILIAR_CONFIG, or a kind without them). */
    values: c.source === "person" && kind?.form?.toValues ? kind.form.toValues(c.settings) : null,
  };
}

/** What the person types after `/connect` for the kind (its first alias, else its name). */
const chatWord = (k: ConnectionKind) => k.aliases?.[0] ?? k.kind;

/** A kind the person can add from a form: its fields (no password value, ever), intro and capabilities. */
function kindView(k: ConnectionKind) {
  const form = k.form!;
  return {
    kind: k.kind,
    title: k.title,
    command: `/connect ${chatWord(k)}`,
    intro: form.intro,
    fields: form.fields.map((f) => ({ ...f, ...(f.type === "password" ? { value: "" } : {}) })),
    capabilities: k.capabilities.map((c) => ({ id: c.id, label: c.label, allows: c.allows })),
    defaultCapabilities: [...k.defaultCapabilities],
  };
}

const kindName = z.string().min(1, "Please choose what to connect.").max(40, "Please choose what to connect.");
const capabilityIds = z.array(z.string().min(1).max(40)).max(20);
const valuesShape = z.record(z.string().regex(/^[A-Za-z0-9_]{1,60}$/), z.string().max(20_000, "A value can be at most 20,000 characters.")).refine((v) => Object.keys(v).length <= 40, "Too many fields.");
const checkBody = z.object({ kind: kindName, values: valuesShape }).strict();
const connectBody = checkBody.extend({ capabilities: capabilityIds.default([]) }).strict();
const changeBody = z.object({ values: valuesShape }).strict();
const capabilitiesBody = z.object({ capabilities: capabilityIds }).strict();
const linkBody = z.object({ kind: kindName }).strict();

/** The longest value of a field: a PEM certificate (textarea) is long, the rest is short. */
const fieldLimit = (f: FormField) => (f.type === "textarea" ? 20_000 : 2_000);

/**
 * The posted values checked against the kind's form: only its fields, each within its length, the
 * required ones filled, a select one of its options. Returns the values, or the problems in words.
 */
export function formValues(kind: ConnectionKind, posted: Record<string, string>): { ok: true; values: Record<string, string>; secret: string | null } | { ok: false; problems: string[] } {
  const fields = kind.form?.fields ?? [];
  const problems: string[] = [];
  const unknown = Object.keys(posted).filter((name) => !fields.some((f) => f.name === name));
  if (unknown.length) problems.push(`${kind.title} has no field ${unknown.join(", ")}.`);
  const values: Record<string, string> = {};
  let secret: string | null = null;
  for (const f of fields) {
    const value = posted[f.name] ?? "";
    if (value.length > fieldLimit(f)) problems.push(`${f.label}: at most ${fieldLimit(f).toLocaleString("en")} characters.`);
    else if (f.type === "select" && value !== "" && !(f.options ?? []).some((o) => o.value === value)) problems.push(`${f.label}: choose one of ${(f.options ?? []).map((o) => o.label).join("; ")}.`);
    else if (f.type === "password") secret = value === "" ? null : value;
    else if (f.required && value.trim() === "") problems.push(`Please fill in ${f.label}.`);
    if (f.type !== "password" && value !== "") values[f.name] = value;
  }
  return problems.length ? { ok: false, problems } : { ok: true, values, secret };
}

function refuse(res: Response, status: number, problems: string[]): void {
  res.status(status).json({ error: problems.join(" "), problems });
}

/**
 * The routes (mount behind `requireSession`):
 * - `GET /api/web/connections` → `{items, kinds}`: the person's connections ({@link connectionView})
 *   and the kinds that can be added from a form (fields, intro, capabilities with what each allows).
 * - `POST /api/web/connections/check` `{kind, values}` → `{ok: true, summary} | {ok: false, problems}`:
 *   tries the settings, keeps nothing (an empty password uses the stored one of the same connection).
 * - `POST /api/web/connections` `{kind, values, capabilities}` → 201 `{connection, created, test}`
 *   (200 when it updated the same connection), or 400 `{error, problems}` — tested before kept.
 * - `PATCH /api/web/connections/:id` `{values}` → `{connection, created: false, test}`: changed
 *   settings, tested before kept; an empty password keeps the stored one; settings naming another
 *   connection (another address) are refused in words, and so is one set in FAMILIAR_CONFIG (409).
 * - `PUT /api/web/connections/:id/capabilities` `{capabilities}`: exactly these are granted.
 * - `POST /api/web/connections/:id/test` → the test's outcome, recorded as the connection's state.
 * - `DELETE /api/web/connections/:id` → 204: the record, its synced state and its credential deleted.
 * - `POST /api/web/connections/link` `{kind}` → `{url, expiresAt}`: a one-time form link.
 */
export function connectionsWebApi(deps: ConnectWebDeps): Router {
  const router = Router();
  const { connections } = deps;
  const own = (personId: PersonId, id: string) => connections.get(asId("connection", id), personId);
  const formKind = (name: string) => {
    const kind = connections.kind(name);
    return kind?.form ? kind : undefined;
  };
  router.get("/api/web/connections", async (req, res) => {
    const { person } = webContext(req);
    const mine = await connections.list({ personId: person.id });
    res.json({ items: mine.map((c) => connectionView(c, connections.kind(c.kind))), kinds: formKinds(connections).map(kindView) });
  });

  formRoutes(router, connections);

  router.put("/api/web/connections/:id/capabilities", express.json({ limit: "8kb" }), async (req, res) => {
    const { person } = webContext(req);
    const body = capabilitiesBody.safeParse(req.body);
    if (!body.success) return refuse(res, 400, ["capabilities: a list of capability ids."]);
    const c = await own(person.id, String(req.params.id));
    if (!c) return refuse(res, 404, ["There is no such connection."]);
    try {
      const updated = await connections.setCapabilities(person.id, c.id, body.data.capabilities);
      res.json(connectionView(updated, connections.kind(updated.kind)));
    } catch (err) {
      refuse(res, 400, [`${(err as Error).message[0]!.toUpperCase()}${(err as Error).message.slice(1)}.`]);
    }
  });

  router.post("/api/web/connections/:id/test", async (req, res) => {
    const { person } = webContext(req);
    const c = await own(person.id, String(req.params.id));
    if (!c) return refuse(res, 404, ["There is no such connection."]);
    res.json(await connections.test(person.id, c.id));
  });

  router.delete("/api/web/connections/:id", async (req, res) => {
    const { person } = webContext(req);
    const c = await own(person.id, String(req.params.id));
    res.status(c && (await connections.disconnect(person.id, c.id)) ? 204 : 404).end();
  });

  router.post("/api/web/connections/link", express.json({ limit: "8kb" }), (req, res) => {
    const { person } = webContext(req);
    const body = linkBody.safeParse(req.body);
    const kind = body.success ? formKind(body.data.kind) : undefined;
    if (!kind) return refuse(res, 400, ["kind: one of the kinds that can be connected from a form."]);
    const { url, expiresAt } = deps.desk.offer(person.id, kind.kind);
    res.json({ url, expiresAt: expiresAt.toISOString() });
  });
  return router;
}

function formKinds(connections: Connections): ConnectionKind[] {
  return connections.kinds().filter((k) => k.form);
}

/** The routes that take a kind's form values: check, connect and change (see {@link connectionsWebApi}). */
function formRoutes(router: Router, connections: Connections): void {
  const own = (personId: PersonId, id: string) => connections.get(asId("connection", id), personId);
  const formKind = (name: string) => {
    const kind = connections.kind(name);
    return kind?.form ? kind : undefined;
  };
  const noKind = (name: string) => [`Familiar cannot connect "${name}" from a form (it can connect: ${formKinds(connections).map((k) => k.title).join(", ") || "nothing"}).`];

  router.post("/api/web/connections/check", express.json({ limit: "64kb" }), async (req, res) => {
    const { person } = webContext(req);
    const body = checkBody.safeParse(req.body);
    if (!body.success) return refuse(res, 400, [plainErrors(body.error)]);
    const kind = formKind(body.data.kind);
    if (!kind) return refuse(res, 400, noKind(body.data.kind));
    const form = formValues(kind, body.data.values);
    if (!form.ok) return void res.json({ ok: false, problems: form.problems });
    res.json(await connections.check({ personId: person.id, kind: kind.kind, settings: kind.form!.toSettings(form.values), secret: form.secret }));
  });

  router.post("/api/web/connections", express.json({ limit: "64kb" }), async (req, res) => {
    const { person } = webContext(req);
    const body = connectBody.safeParse(req.body);
    if (!body.success) return refuse(res, 400, [plainErrors(body.error)]);
    const kind = formKind(body.data.kind);
    if (!kind) return refuse(res, 400, noKind(body.data.kind));
    const form = formValues(kind, body.data.values);
    if (!form.ok) return refuse(res, 400, form.problems);
    const result = await connections.connect({ personId: person.id, kind: kind.kind, settings: kind.form!.toSettings(form.values), secret: form.secret, capabilities: body.data.capabilities, source: "person", test: true });
    if (!result.ok) return refuse(res, 400, result.problems);
    res.status(result.created ? 201 : 200).json({ connection: connectionView(result.connection, kind), created: result.created, test: result.test });
  });

  router.patch("/api/web/connections/:id", express.json({ limit: "64kb" }), async (req, res) => {
    const { person } = webContext(req);
    const body = changeBody.safeParse(req.body);
    if (!body.success) return refuse(res, 400, [plainErrors(body.error)]);
    const c = await own(person.id, String(req.params.id));
    const kind = c ? formKind(c.kind) : undefined;
    if (!c || !kind) return refuse(res, 404, ["There is no such connection."]);
    if (c.source === "config") return refuse(res, 409, [`${c.label} is set by the operator in FAMILIAR_CONFIG; its settings are changed there.`]);
    const form = formValues(kind, body.data.values);
    if (!form.ok) return refuse(res, 400, form.problems);
    const result = await connections.change(person.id, c.id, kind.form!.toSettings(form.values), form.secret);
    if (!result.ok) return refuse(res, 400, result.problems);
    res.json({ connection: connectionView(result.connection, kind), created: false, test: result.test });
  });
}
