import { useEffect, useState } from "preact/hooks";
import { ApiError, api, localTime, shortTime } from "./api.js";
import { Empty, Pager, usePaged } from "./paged.js";

/** The *Goals* tab: each goal with its check-in schedule in words, the next and past check-ins, its tasks and its actions. */

export interface TaskJson { id: string; title: string; status: string; waitingFor: string | null; nextWakeAt: string | null; heldBy: "goal" | null }
export interface GoalJson {
  id: string;
  title: string;
  status: string;
  tasks: TaskJson[];
  checkIns?: { schedule: string | null; next: string | null; past: { at: string; words: string }[] };
}

/** A task's state as a person says it. */
function stateWords(task: TaskJson): string {
  if (task.status === "waiting") {
    return { time: "waiting", change: "watching", event: "waiting for an event", reply: "waiting for your reply", approval: "waiting for your approval", held: "held" }[task.waitingFor ?? ""] ?? "waiting";
  }
  return { pending: "scheduled", running: "running now", paused: "paused", done: "done", failed: "failed", cancelled: "cancelled" }[task.status] ?? task.status;
}

export function TaskLine({ task, tz }: { task: TaskJson; tz: string }) {
  return (
    <li>
      {task.title.replace(/^check-in: /, "Check-in: ")} — <span class={`badge ${task.status}`}>{stateWords(task)}</span>
      {task.heldBy === "goal" && <span class="meta"> · will not wake while the goal is paused</span>}
      {task.nextWakeAt && <> · next wake-up <time dateTime={task.nextWakeAt}>{localTime(task.nextWakeAt, tz)}</time></>}
    </li>
  );
}

const goalStatusWords: Record<string, string> = { active: "active", paused: "paused", done: "done", abandoned: "cancelled" };

export function Goals({ tz }: { tz: string }) {
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
            <h3>{g.title} <span class={`badge ${g.status}`}>{goalStatusWords[g.status] ?? g.status}</span></h3>
            <p class="schedule">
              {g.checkIns?.schedule ?? "No regular check-ins: Familiar works on it when something happens or you ask."}
              {g.checkIns?.next && <> Next: <time dateTime={g.checkIns.next}>{shortTime(g.checkIns.next, tz)}</time>.</>}
            </p>
            {g.checkIns && g.checkIns.past.length > 0 && (
              <details class="past-check-ins">
                <summary>Past check-ins ({g.checkIns.past.length})</summary>
                <ol class="lines">{g.checkIns.past.map((p, i) => <li key={i}><time dateTime={p.at}>{shortTime(p.at, tz)}</time> {p.words}</li>)}</ol>
              </details>
            )}
            <ul class="tasks">{g.tasks.filter((t) => t.status !== "cancelled" && t.status !== "done").map((t) => <TaskLine key={t.id} task={t} tz={tz} />)}</ul>
            <div class="actions">
              {g.status === "active" && <button type="button" onClick={() => void act(g, "pause")}>Pause goal</button>}
              {g.status === "paused" && <button type="button" onClick={() => void act(g, "resume")}>Resume goal</button>}
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
