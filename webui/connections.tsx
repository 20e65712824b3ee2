/**
 * The Connections section: the person's mailboxes, CalDAV accounts and calendar feeds. Each one
 * shows its state in words (connected, last sync, IMAP IDLE alive or polling, the last error), what
 * each capability allows with a box to grant or withdraw it, *Test* and *Disconnect* (the password
 * is deleted from the vault). *Add* opens the kind's form — the same fields as the one-time
 * `/connect` page — with *Test* (tries the settings, keeps nothing) and *Connect* (tested first).
 * Password fields are write-only: typed here, sent once, never shown again.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, localTime } from "./api.js";

interface FieldJson {
  name: string;
  label: string;
  type: "text" | "email" | "number" | "password" | "select" | "textarea";
  required?: boolean;
  value?: string;
  options?: { value: string; label: string }[];
  hint?: string;
}
interface CapabilityJson { id: string; label: string; allows: string }
interface KindJson { kind: string; title: string; command: string; intro: string; fields: FieldJson[]; capabilities: CapabilityJson[]; defaultCapabilities: string[] }
interface StatusJson { state: string; mode: string; lastSyncAt: string | null; lastError: string | null; checkedAt: string | null; words: string; sync: string }
interface ConnectionJson { id: string; kind: string; title: string; label: string; source: "config" | "person"; capabilities: string[]; available: CapabilityJson[]; status: StatusJson; values: Record<string, string> | null }
type TestJson = { ok: true; summary: string } | { ok: false; problems: string[] };
interface ListJson { items: ConnectionJson[]; kinds: KindJson[] }

const ADD_WORDS: Record<string, string> = { email: "Add a mailbox", caldav: "Add a calendar account (CalDAV)", ics: "Add a calendar feed (iCalendar URL)" };
/** Mail first, then calendars, then any other kind in the server's order. */
const rank = (kind: string) => (kind in ADD_WORDS ? Object.keys(ADD_WORDS).indexOf(kind) : 99);

const message = (err: unknown) => (err instanceof ApiError ? err.message : String(err));

/** The section (the dashboard's Connections tab). */
export function Connections({ tz }: { tz: string }) {
  const [data, setData] = useState<ListJson | null>(null);
  const [error, setError] = useState("");
  const [adding, setAdding] = useState<string | null>(null);
  const [notice, setNotice] = useState("");
  const load = () =>
    api<ListJson>("GET", "/api/web/connections").then(
      (d) => (setData({ ...d, kinds: [...d.kinds].sort((a, b) => rank(a.kind) - rank(b.kind)) }), setError("")),
      (err: unknown) => setError(message(err)),
    );
  useEffect(() => {
    void load();
    // The state changes as the sync runs (IDLE, polling, last sync): read it again every few seconds.
    const timer = setInterval(() => void load(), 4_000);
    return () => clearInterval(timer);
  }, []);
  if (!data) return error ? <p role="alert" class="error">{error}</p> : <p>Loading…</p>;
  const kind = data.kinds.find((k) => k.kind === adding);
  const commands = data.kinds.map((k) => k.command).filter((c, i, all) => all.indexOf(c) === i);
  return (
    <div class="connections">
      <h2>Connections</h2>
      <p class="hint">
        Mailboxes and calendars Familiar may use for you. Their passwords are kept encrypted in your vault: they never come back to this page, and Familiar's model never sees them. In any chat,{" "}
        {commands.map((c, i) => (
          <span key={c}>{i > 0 ? (i === commands.length - 1 ? " or " : ", ") : ""}<code>{c}</code></span>
        ))}{" "}
        sends a one-time link to the same form.
      </p>
      {notice && <p role="status" class="notice">{notice}</p>}
      {error && <p role="alert" class="error">{error}</p>}
      {data.items.length === 0 && <p class="empty">No connections yet.</p>}
      <ul class="cards">
        {data.items.map((c) => (
          <ConnectionCard key={c.id} c={c} kind={data.kinds.find((k) => k.kind === c.kind)} tz={tz} onNotice={setNotice} onChanged={() => void load()} />
        ))}
      </ul>
      <h3>Add a connection</h3>
      <div class="row add-kinds">
        {data.kinds.map((k) => (
          <button key={k.kind} type="button" class={adding === k.kind ? undefined : "secondary"} aria-pressed={adding === k.kind} onClick={() => setAdding(adding === k.kind ? null : k.kind)}>
            {ADD_WORDS[k.kind] ?? `Add ${k.title}`}
          </button>
        ))}
      </div>
      {kind && (
        <ConnectionForm
          key={kind.kind}
          kind={kind}
          onCancel={() => setAdding(null)}
          onDone={(c, created) => {
            setAdding(null);
            setNotice(`${created ? "Connected" : "Updated"} ${c.label}. Familiar may: ${c.available.filter((a) => c.capabilities.includes(a.id)).map((a) => a.label).join(", ") || "nothing yet — grant what it may do below"}.`);
            void load();
          }}
        />
      )}
    </div>
  );
}

/** A test's outcome in words: what worked, or every problem. */
function Outcome({ test, connecting = false }: { test: TestJson | null; connecting?: boolean }) {
  if (!test) return null;
  if (test.ok) return <p role="status" class="ok outcome">Test passed: connected and logged in. {test.summary}</p>;
  return (
    <div role="alert" class="error outcome">
      <p>{connecting ? "Not connected, nothing was kept:" : "Test failed:"}</p>
      <ul>{test.problems.map((p) => <li key={p}>{p}</li>)}</ul>
    </div>
  );
}

function Detail({ term, children }: { term: string; children: ComponentChildren }) {
  return (
    <div class="detail">
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A box per capability, each with what it allows: each is granted (ticked) on its own. */
function CapabilityBoxes({ capabilities, granted, onChange }: { capabilities: CapabilityJson[]; granted: string[]; onChange: (cap: CapabilityJson, on: boolean) => void }) {
  return (
    <fieldset class="caps">
      <legend>What Familiar may do (each is granted separately)</legend>
      {capabilities.map((cap) => (
        <div key={cap.id} class="cap">
          <label class="inline">
            <input type="checkbox" checked={granted.includes(cap.id)} onChange={(e) => onChange(cap, e.currentTarget.checked)} /> {cap.label}
          </label>
          <p class="hint">{cap.allows}</p>
        </div>
      ))}
    </fieldset>
  );
}

/** One connection: its state, its grants, Test, Change settings and Disconnect. */
function ConnectionCard({ c, kind, tz, onNotice, onChanged }: { c: ConnectionJson; kind: KindJson | undefined; tz: string; onNotice: (text: string) => void; onChanged: () => void }) {
  const [test, setTest] = useState<TestJson | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState(false);
  const s = c.status;
  const runTest = async () => {
    setBusy(true);
    setTest(null);
    try {
      setTest(await api<TestJson>("POST", `/api/web/connections/${c.id}/test`, {}));
      onChanged();
    } catch (err) {
      setTest({ ok: false, problems: [message(err)] });
    } finally {
      setBusy(false);
    }
  };
  const grant = async (cap: CapabilityJson, on: boolean) => {
    const next = on ? [...c.capabilities, cap.id] : c.capabilities.filter((id) => id !== cap.id);
    try {
      await api("PUT", `/api/web/connections/${c.id}/capabilities`, { capabilities: next });
      onNotice(`${c.label}: ${on ? "granted" : "withdrawn"} — ${cap.label}.`);
    } catch (err) {
      onNotice(message(err));
    }
    onChanged();
  };
  const disconnect = async () => {
    try {
      await api("DELETE", `/api/web/connections/${c.id}`);
      onNotice(`Disconnected ${c.label}. Its password was deleted from your vault.`);
    } catch (err) {
      onNotice(message(err));
    }
    setConfirming(false);
    onChanged();
  };
  return (
    <li class="card connection" aria-label={`${c.title}: ${c.label}`}>
      <h3>
        {c.label} <span class={`badge ${s.state}`}>{s.words}</span>
      </h3>
      <p class="meta">
        {c.title}
        {c.source === "config" ? " · set by the operator in FAMILIAR_CONFIG (grants changed here go back to the configured ones at the next start)" : ""}
      </p>
      <dl class="conn-state">
        <Detail term="State">{s.words}</Detail>
        <Detail term="Sync">{s.sync}</Detail>
        <Detail term="Last sync">{s.lastSyncAt ? localTime(s.lastSyncAt, tz) : "never"}</Detail>
        <Detail term="Last error">{s.lastError ?? "none"}</Detail>
      </dl>
      <CapabilityBoxes capabilities={c.available} granted={c.capabilities} onChange={(cap, on) => void grant(cap, on)} />
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => void runTest()}>{busy ? "Testing…" : "Test"}</button>
        {kind && c.values && !editing && <button type="button" onClick={() => setEditing(true)}>Change settings…</button>}
        {confirming ? (
          <button type="button" class="danger" onClick={() => void disconnect()}>Really disconnect {c.label}</button>
        ) : (
          <button type="button" onClick={() => setConfirming(true)}>Disconnect…</button>
        )}
      </div>
      {confirming && <p class="hint">Disconnecting deletes its password from your vault and what Familiar synced from it.</p>}
      <Outcome test={test} />
      {editing && kind && c.values && (
        <ConnectionForm
          kind={kind}
          edit={{ id: c.id, label: c.label, values: c.values }}
          onCancel={() => setEditing(false)}
          onDone={(updated) => {
            setEditing(false);
            onNotice(`Saved the settings of ${updated.label}.`);
            onChanged();
          }}
        />
      )}
    </li>
  );
}

/** One field; `keeping`: a password that may stay empty (changing a connection keeps the stored one). */
function FieldInput({ id, f, value, keeping, onValue }: { id: string; f: FieldJson; value: string; keeping: boolean; onValue: (v: string) => void }) {
  const hintId = f.hint ? `${id}-hint` : undefined;
  const secret = f.type === "password";
  const common = { id, name: f.name, required: f.required && !(secret && keeping), "aria-describedby": hintId, ...(secret && keeping && { placeholder: "unchanged" }) };
  return (
    <>
      <label for={id}>{f.label}</label>
      {f.type === "select" ? (
        <select {...common} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
          {(f.options ?? []).map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
        </select>
      ) : f.type === "textarea" ? (
        <textarea {...common} rows={3} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
      ) : (
        <input {...common} type={f.type} autocomplete={f.type === "password" ? "new-password" : "off"} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
      )}
      {f.hint && <p class="hint" id={hintId}>{f.hint}</p>}
    </>
  );
}

/** What changing a kept connection starts from: its id, label and form values (never its password). */
interface Edit { id: string; label: string; values: Record<string, string> }

/**
 * A kind's form: its fields, the capabilities (the kind's default ticked), Test and Connect — or,
 * changing a kept connection (`edit`), its values with the password empty (empty keeps the stored
 * one), Test and Save.
 */
function ConnectionForm({ kind, edit, onCancel, onDone }: { kind: KindJson; edit?: Edit; onCancel: () => void; onDone: (c: ConnectionJson, created: boolean) => void }) {
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(kind.fields.map((f) => [f.name, f.type === "password" ? "" : (edit?.values[f.name] ?? f.value ?? "")])));
  const [caps, setCaps] = useState<string[]>(kind.defaultCapabilities);
  const [test, setTest] = useState<TestJson | null>(null);
  const [busy, setBusy] = useState<"" | "test" | "connect">("");
  const [last, setLast] = useState<"test" | "connect">("test");
  const filled = () => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ""));
  const run = async (what: "test" | "connect") => {
    setBusy(what);
    setLast(what);
    setTest(null);
    try {
      if (what === "test") setTest(await api<TestJson>("POST", "/api/web/connections/check", { kind: kind.kind, values: filled() }));
      else {
        const made = edit
          ? await api<{ connection: ConnectionJson; created: boolean }>("PATCH", `/api/web/connections/${edit.id}`, { values: filled() })
          : await api<{ connection: ConnectionJson; created: boolean }>("POST", "/api/web/connections", { kind: kind.kind, values: filled(), capabilities: caps });
        onDone(made.connection, made.created);
      }
    } catch (err) {
      setTest({ ok: false, problems: err instanceof ApiError && err.problems.length ? err.problems : [message(err)] });
    } finally {
      setBusy("");
    }
  };
  return (
    <form class="card connect-form" aria-label={edit ? `Change ${edit.label}` : kind.title} autocomplete="off" onSubmit={(e) => (e.preventDefault(), void run("connect"))}>
      <h3>{edit ? `Change ${edit.label}` : kind.title}</h3>
      <p class="hint">{edit ? "The password is not shown: leave it empty to keep the stored one, or type a new one." : kind.intro}</p>
      {kind.fields.map((f) => (
        <FieldInput key={f.name} id={`cf-${edit ? edit.id : kind.kind}-${f.name}`} f={f} value={values[f.name] ?? ""} keeping={edit !== undefined} onValue={(v) => setValues({ ...values, [f.name]: v })} />
      ))}
      {!edit && <CapabilityBoxes capabilities={kind.capabilities} granted={caps} onChange={(cap, on) => setCaps(on ? [...caps, cap.id] : caps.filter((id) => id !== cap.id))} />}
      <p class="hint">Test tries the settings and keeps nothing. {edit ? "Save" : "Connect"} tests them again and keeps them only if they work; the password goes to your vault and is never shown again.</p>
      <div class="actions">
        <button type="button" disabled={busy !== ""} onClick={() => void run("test")}>{busy === "test" ? "Testing…" : "Test"}</button>
        <button type="submit" disabled={busy !== ""}>{busy === "connect" ? (edit ? "Saving…" : "Connecting…") : edit ? "Save" : "Connect"}</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
      <Outcome test={test} connecting={last === "connect"} />
    </form>
  );
}
