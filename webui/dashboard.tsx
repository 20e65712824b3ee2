import { useEffect, useState, useRef } from "preact/hooks";
import { ApiError, api, channelLabel, localTime, navigate, newClientId, onChannel, type Session } from "./api.js";
import { renderMarkdown } from "./markdown.js";
import { ApprovalCard, type ApprovalCardView } from "./approval-card.js";
import { Artifacts } from "./artifacts.js";
import { Connections } from "./connections.js";
import { Empty, Pager, usePaged } from "./paged.js";
import { Settings } from "./settings.js";
import { Activity } from "./activity.js";
import { Goals } from "./goals.js";
import { Now } from "./now.js";

const tabs = [
  ["now", "Now"],
  ["goals", "Goals"],
  ["approvals", "Approvals"],
  ["activity", "Activity"],
  ["permissions", "Permissions"],
  ["memory", "Memory"],
  ["artifacts", "Artifacts"],
  ["connections", "Connections"],
  ["settings", "Settings"],
  ["messengers", "Messengers"],
] as const;

/** The dashboard: one tab at a time, every list paginated, every action a button. */
export function Dashboard({ session, tab, onPerson }: { session: Session; tab: string; onPerson: (p: { displayName: string; timeZone: string }) => void }) {
  const tz = session.person.timeZone;
  const nav = useRef<HTMLElement>(null);
  // The tabs wrap on a narrow screen; the active one is brought into view whatever the layout.
  useEffect(() => {
    nav.current?.querySelector("[aria-current=page]")?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [tab]);
  return (
    <main class="dashboard">
      <nav class="tabs" aria-label="Dashboard" ref={nav}>
        {tabs.map(([id, label]) => (
          <a key={id} href={`/dashboard/${id}`} aria-current={tab === id ? "page" : undefined} onClick={(e) => (e.preventDefault(), navigate(`/dashboard/${id}`))}>
            {label}
          </a>
        ))}
      </nav>
      <section class="panel" aria-label={tabs.find(([id]) => id === tab)?.[1] ?? "Now"}>
        {tab === "goals" ? <Goals tz={tz} /> : tab === "approvals" ? <Approvals tz={tz} /> : tab === "activity" ? <Activity tz={tz} /> : tab === "permissions" ? <Permissions tz={tz} /> : tab === "memory" ? <Memory tz={tz} /> : tab === "artifacts" ? <Artifacts tz={tz} /> : tab === "connections" ? <Connections tz={tz} /> : tab === "settings" ? <Settings onSaved={onPerson} /> : tab === "messengers" ? <Messengers tz={tz} /> : <Now tz={tz} />}
      </section>
    </main>
  );
}

interface ApprovalJson { id: string; summary: string; text: string; card?: ApprovalCardView; buttons: { id: string; label: string }[]; expiresAt: string }

function Approvals({ tz }: { tz: string }) {
  const list = usePaged<ApprovalJson>("/api/web/approvals");
  const [notice, setNotice] = useState("");
  const press = async (a: ApprovalJson, buttonId: string) => {
    try {
      const r = await api<{ notice: string | null }>("POST", `/api/web/approvals/${a.id}/press`, { buttonId, clientActionId: newClientId() });
      setNotice(r.notice ?? "Done.");
      await list.reload();
    } catch (err) {
      setNotice(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <div>
      <h2>Approvals</h2>
      {notice && <p role="status" class="notice">{notice}</p>}
      <Empty loaded={list.loaded} count={list.items.length}>Nothing is waiting for your approval.</Empty>
      <ul class="cards">
        {list.items.map((a) => (
          <li key={a.id} class="card">
            {/* The same card as in the chat (one design everywhere), from Sentinel's view model. */}
            {a.card ? <div class="bubble card-bubble"><ApprovalCard card={a.card} /></div> : <div class="bubble" dangerouslySetInnerHTML={{ __html: renderMarkdown(a.text) }} />}
            <p class="meta">Expires {localTime(a.expiresAt, tz)}</p>
            <div class="card-buttons" role="group" aria-label={`Answer: ${a.summary}`}>
              {a.buttons.map((b) => (
                <button key={b.id} type="button" class={a.card?.buttons.find((c) => c.id === b.id)?.style ?? ""} onClick={() => void press(a, b.id)}>{b.label}</button>
              ))}
            </div>
          </li>
        ))}
      </ul>
      <Pager next={list.next} error={list.error} more={() => void list.more()} />
    </div>
  );
}

interface GrantJson { id: string; words: string; grantedAt: string }

function Permissions({ tz }: { tz: string }) {
  const list = usePaged<GrantJson>("/api/web/permissions");
  const [notice, setNotice] = useState("");
  return (
    <div>
      <h2>Permissions</h2>
      {notice && <p role="status" class="notice">{notice}</p>}
      <Empty loaded={list.loaded} count={list.items.length}>You have not allowed anything lasting.</Empty>
      <ul class="cards">
        {list.items.map((g) => (
          <li key={g.id} class="card row">
            <span>{g.words} <span class="meta">since {localTime(g.grantedAt, tz)}</span></span>
            <button
              type="button"
              onClick={async () => {
                setNotice((await api<{ notice: string }>("DELETE", `/api/web/permissions/${g.id}`).catch((err: ApiError) => ({ notice: err.message }))).notice);
                await list.reload();
              }}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <Pager next={list.next} error={list.error} more={() => void list.more()} />
    </div>
  );
}

interface MemoryJson { id: string; kind: string; text: string; provenance: { messageId: string | null; channel: string | null; note: string | null }; taint: { source: string } | null; createdAt: string; updatedAt: string }

function Memory({ tz }: { tz: string }) {
  const [q, setQ] = useState("");
  const [search, setSearch] = useState("");
  const list = usePaged<MemoryJson>(`/api/web/memory?limit=20${search ? `&q=${encodeURIComponent(search)}` : ""}`);
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [notice, setNotice] = useState("");
  const save = async () => {
    if (!editing) return;
    try {
      await api("PATCH", `/api/web/memory/${editing.id}`, { text: editing.text });
      setEditing(null);
      setNotice("Saved.");
      await list.reload();
    } catch (err) {
      setNotice(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <div>
      <h2>Memory</h2>
      <form class="filters" role="search" onSubmit={(e) => (e.preventDefault(), setSearch(q.trim()))}>
        <label for="memory-q">Search</label>
        <input id="memory-q" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      {notice && <p role="status" class="notice">{notice}</p>}
      <Empty loaded={list.loaded} count={list.items.length}>{search ? "Nothing matches." : "Familiar remembers nothing about you yet."}</Empty>
      <ul class="cards">
        {list.items.map((m) => (
          <li key={m.id} class="card">
            {editing?.id === m.id ? (
              <form onSubmit={(e) => (e.preventDefault(), void save())}>
                <label for={`edit-${m.id}`}>Edit what Familiar remembers</label>
                <textarea id={`edit-${m.id}`} value={editing.text} onInput={(e) => setEditing({ id: m.id, text: e.currentTarget.value })} />
                <div class="actions">
                  <button type="submit">Save</button>
                  <button type="button" onClick={() => setEditing(null)}>Cancel</button>
                </div>
              </form>
            ) : (
              <>
                <p class="memory-text">{m.text}</p>
                {m.taint && (
                  <p class="taint warn" role="note">
                    ⚠️ From outside content: {m.taint.source}. Familiar treats it as untrusted; check it before you rely on it.
                  </p>
                )}
                <p class="meta">
                  {m.kind} · learned {localTime(m.createdAt, tz)}
                  {m.provenance.channel ? ` ${onChannel(m.provenance.channel)}` : ""}
                  {m.provenance.note ? ` (${m.provenance.note})` : ""}
                  {m.updatedAt !== m.createdAt ? ` · changed ${localTime(m.updatedAt, tz)}` : ""}
                </p>
                <div class="actions">
                  <button type="button" onClick={() => setEditing({ id: m.id, text: m.text })}>Edit</button>
                  <button
                    type="button"
                    onClick={async () => {
                      setNotice((await api<{ notice: string }>("DELETE", `/api/web/memory/${m.id}`).catch((err: ApiError) => ({ notice: err.message }))).notice);
                      await list.reload();
                    }}
                  >
                    Forget
                  </button>
                </div>
              </>
            )}
          </li>
        ))}
      </ul>
      <Pager next={list.next} error={list.error} more={() => void list.more()} />
    </div>
  );
}

interface IdentityJson { channel: string; accountId: string; linkedAt: string; unreachable: string | null; running: string }

function Messengers({ tz }: { tz: string }) {
  const [data, setData] = useState<{ items: IdentityJson[]; channels: { channel: string; state: string }[] } | null>(null);
  const [code, setCode] = useState("");
  const [confirming, setConfirming] = useState<string | null>(null);
  const load = () => void api<{ items: IdentityJson[]; channels: { channel: string; state: string }[] }>("GET", "/api/web/messengers").then(setData, () => undefined);
  useEffect(load, []);
  if (!data) return <p>Loading…</p>;
  const unlink = async (i: IdentityJson) => {
    const r = await api<{ notice: string }>("DELETE", `/api/web/messengers/${i.channel}/${encodeURIComponent(i.accountId)}`).catch((err: ApiError) => ({ notice: err.message }));
    setCode(r.notice);
    setConfirming(null);
    load();
  };
  return (
    <div>
      <h2>Messengers</h2>
      <ul class="cards">
        {data.items.map((i) => (
          <li key={`${i.channel}:${i.accountId}`} class="card row">
            <span>
              <strong>{channelLabel[i.channel] ?? i.channel}</strong> account {i.accountId} · linked {localTime(i.linkedAt, tz)} · {i.unreachable ? `unreachable: ${i.unreachable}` : i.running}
            </span>
            {data.items.length > 1 &&
              (confirming === `${i.channel}:${i.accountId}` ? (
                <button type="button" class="danger" onClick={() => void unlink(i)}>Really unlink</button>
              ) : (
                <button type="button" onClick={() => setConfirming(`${i.channel}:${i.accountId}`)}>Unlink…</button>
              ))}
          </li>
        ))}
      </ul>
      <button type="button" onClick={async () => setCode((await api<{ notice: string }>("POST", "/api/web/messengers/link", {})).notice)}>
        Link another messenger
      </button>
      {code && <p role="status" class="notice">{code}</p>}
      <h3>Running on this Familiar</h3>
      <ul>{data.channels.map((c) => <li key={c.channel}>{channelLabel[c.channel] ?? c.channel}: {c.state}</li>)}</ul>
    </div>
  );
}
