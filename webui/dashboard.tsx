import { KIND_WORDS } from "../web/shared/index.js";
import { useEffect, useState, useRef } from "preact/hooks";
import { ApiError, api, channelLabel, localTime, navigate, newClientId, onChannel, type Session } from "./api.js";
import { renderMarkdown } from "./markdown.js";
import { Artifacts } from "./artifacts.js";
import { Connections } from "./connections.js";
import { Empty, Pager, usePaged } from "./paged.js";
import { Settings } from "./settings.js";

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
        {tab === "goals" ? <Goals tz={tz} /> : tab === "approvals" ? <Approvals tz={tz} /> : tab === "activity" ? <Activity tz={tz} /> : tab === "permissions" ? <Permissions tz={tz} /> : tab === "memory" ? <Memory tz={tz} /> : tab === "artifacts" ? <Artifacts tz={tz} /> : tab === "connections" ? <Connections tz={tz} /> : tab === "settings" ? <Settings onSaved={onPerson} /> : tab === "messengers" ? <Messengers tz={tz} /> : <Now />}
      </section>
    </main>
  );
}

/** The person's model use today (GET /api/web/now `modelUse`). */
interface ModelUse {
  used: number;
  limit: number | null;
  exhausted: boolean;
}

type NowState = { status: string; pendingApprovals: number; paused: boolean; modelUse?: ModelUse };

function modelUseText(use: ModelUse): string {
  const used = use.used.toLocaleString("en-US");
  if (use.limit === null) return `Model use today: ${used} tokens (no daily budget set).`;
  const of = `Model use today: ${used} of ${use.limit.toLocaleString("en-US")} tokens`;
  return use.exhausted ? `${of} — today's budget is used; I go on at 00:00 your time.` : `${of}.`;
}

function Now() {
  const [now, setNow] = useState<NowState | null>(null);
  useEffect(() => {
    const load = () => void api<NowState>("GET", "/api/web/now").then(setNow, () => undefined);
    load();
    const timer = setInterval(load, 5_000);
    return () => clearInterval(timer);
  }, []);
  if (!now) return <p>Loading…</p>;
  return (
    <div>
      <h2>Now</h2>
      <p class="status-line" role="status">{now.status}</p>
      {now.paused && <p class="warn">Background work is paused (send /resume to continue).</p>}
      {now.modelUse && <p class={now.modelUse.exhausted ? "warn model-use" : "meta model-use"}>{modelUseText(now.modelUse)}</p>}
      {now.pendingApprovals > 0 && (
        <p>
          <a href="/dashboard/approvals" onClick={(e) => (e.preventDefault(), navigate("/dashboard/approvals"))}>
            {now.pendingApprovals} request{now.pendingApprovals > 1 ? "s" : ""} waiting for your approval
          </a>
        </p>
      )}
    </div>
  );
}

interface TaskJson { id: string; title: string; status: string; waitingFor: string | null; nextWakeAt: string | null; heldBy: "goal" | null }
interface GoalJson { id: string; title: string; status: string; tasks: TaskJson[] }

function TaskLine({ task, tz }: { task: TaskJson; tz: string }) {
  return (
    <li>
      {task.title} — <span class={`badge ${task.status}`}>{task.status}{task.waitingFor ? ` for ${task.waitingFor}` : ""}</span>
      {task.heldBy === "goal" && <span class="meta"> · will not wake while the goal is paused</span>}
      {task.nextWakeAt && <> · next wake-up <time dateTime={task.nextWakeAt}>{localTime(task.nextWakeAt, tz)}</time></>}
    </li>
  );
}

function Goals({ tz }: { tz: string }) {
  const list = usePaged<GoalJson>("/api/web/goals");
  const [loose, setLoose] = useState<TaskJson[]>([]);
  const [notice, setNotice] = useState("");
  const [confirming, setConfirming] = useState<string | null>(null);
  useEffect(() => void api<{ tasks: TaskJson[] }>("GET", "/api/web/goals?limit=1").then((r) => setLoose(r.tasks), () => undefined), []);
  const act = async (goal: GoalJson, action: "pause" | "resume" | "cancel") => {
    try {
      setNotice((await api<{ notice: string }>("POST", `/api/web/goals/${goal.id}/${action}`, {})).notice);
      setConfirming(null);
      await list.reload();
    } catch (err) {
      setNotice(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <div>
      <h2>Goals</h2>
      {notice && <p role="status" class="notice">{notice}</p>}
      <Empty loaded={list.loaded} count={list.items.length}>No goals yet. Ask Familiar to keep track of something.</Empty>
      <ul class="cards">
        {list.items.map((g) => (
          <li key={g.id} class="card">
            <h3>{g.title} <span class={`badge ${g.status}`}>{g.status}</span></h3>
            <ul class="tasks">{g.tasks.map((t) => <TaskLine key={t.id} task={t} tz={tz} />)}</ul>
            <div class="actions">
              {g.status === "active" && <button type="button" onClick={() => void act(g, "pause")}>Pause</button>}
              {g.status === "paused" && <button type="button" onClick={() => void act(g, "resume")}>Resume</button>}
              {(g.status === "active" || g.status === "paused") &&
                (confirming === g.id ? (
                  <button type="button" class="danger" onClick={() => void act(g, "cancel")}>Really cancel “{g.title}”</button>
                ) : (
                  <button type="button" onClick={() => setConfirming(g.id)}>Cancel goal…</button>
                ))}
            </div>
          </li>
        ))}
      </ul>
      <Pager next={list.next} error={list.error} more={() => void list.more()} />
      {loose.length > 0 && (
        <>
          <h3>Reminders and wake-ups</h3>
          <ul class="tasks">{loose.map((t) => <TaskLine key={t.id} task={t} tz={tz} />)}</ul>
        </>
      )}
    </div>
  );
}

interface ApprovalJson { id: string; summary: string; text: string; buttons: { id: string; label: string }[]; expiresAt: string }

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
            <div class="bubble" dangerouslySetInnerHTML={{ __html: renderMarkdown(a.text) }} />
            <p class="meta">Expires {localTime(a.expiresAt, tz)}</p>
            <div class="card-buttons" role="group" aria-label={`Answer: ${a.summary}`}>
              {a.buttons.map((b) => (
                <button key={b.id} type="button" onClick={() => void press(a, b.id)}>{b.label}</button>
              ))}
            </div>
          </li>
        ))}
      </ul>
      <Pager next={list.next} error={list.error} more={() => void list.more()} />
    </div>
  );
}

interface ActivityJson { at: string; kind: string; label: string; summary: string; tool: string | null; decision: string | null; why: string | null }
const kinds = Object.entries(KIND_WORDS).sort((a, b) => a[1].localeCompare(b[1]));
const decisionWords: Record<string, string> = { allow: "allowed", ask: "asked you", deny: "blocked" };

function Activity({ tz }: { tz: string }) {
  const [kind, setKind] = useState("");
  const [goal, setGoal] = useState("");
  const goals = usePaged<GoalJson>("/api/web/goals?limit=100");
  const query = new URLSearchParams({ limit: "20", ...(kind && { kind }), ...(goal && { goal }) });
  const list = usePaged<ActivityJson>(`/api/web/activity?${query.toString()}`);
  return (
    <div>
      <h2>Activity</h2>
      <div class="filters">
        <label>
          Kind{" "}
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            <option value="">all</option>
            {kinds.map(([k, label]) => <option key={k} value={k}>{label}</option>)}
          </select>
        </label>
        <label>
          Goal{" "}
          <select value={goal} onChange={(e) => setGoal(e.currentTarget.value)}>
            <option value="">all</option>
            {goals.items.map((g) => <option key={g.id} value={g.id}>{g.title}</option>)}
          </select>
        </label>
      </div>
      <Empty loaded={list.loaded} count={list.items.length}>Nothing here yet.</Empty>
      <ol class="lines">
        {list.items.map((e, i) => (
          <li key={`${e.at}-${i}`}>
            <time dateTime={e.at}>{localTime(e.at, tz)}</time> <span class="kind" title={e.kind}>{e.label}</span> {e.summary}
            {e.decision && <span class={`badge ${e.decision}`}> {decisionWords[e.decision] ?? e.decision}</span>}
            {e.why && <span class="why"> — because {e.why}</span>}
          </li>
        ))}
      </ol>
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
