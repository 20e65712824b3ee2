import { ACTIVITY_CATEGORIES } from "../web/shared/index.js";
import { useState } from "preact/hooks";
import { shortTime } from "./api.js";
import { Empty, Pager, usePaged } from "./paged.js";
import type { GoalJson } from "./goals.js";

interface ActivityJson { at: string; kind: string; summary: string; decision: string | null; why: string | null; problem: boolean }

/** One line per action, in a sentence; a short filter of human categories (and the goal it was for). */
export function Activity({ tz }: { tz: string }) {
  const [category, setCategory] = useState("");
  const [goal, setGoal] = useState("");
  const goals = usePaged<GoalJson>("/api/web/goals?limit=100");
  const query = new URLSearchParams({ limit: "20", ...(category && { category }), ...(goal && { goal }) });
  const list = usePaged<ActivityJson>(`/api/web/activity?${query.toString()}`);
  return (
    <div>
      <h2>Activity</h2>
      <div class="filters">
        <label>
          Show{" "}
          <select value={category} onChange={(e) => setCategory(e.currentTarget.value)}>
            <option value="">everything</option>
            {ACTIVITY_CATEGORIES.map((c) => <option key={c.id} value={c.id}>{c.label}</option>)}
          </select>
        </label>
        {goals.items.length > 0 && (
          <label>
            Goal{" "}
            <select value={goal} onChange={(e) => setGoal(e.currentTarget.value)}>
              <option value="">all</option>
              {goals.items.map((g) => <option key={g.id} value={g.id}>{g.title}</option>)}
            </select>
          </label>
        )}
      </div>
      <Empty loaded={list.loaded} count={list.items.length}>Nothing here yet.</Empty>
      <ol class="lines">
        {list.items.map((e, i) => (
          <li key={`${e.at}-${i}`} class={e.problem ? "problem" : e.decision === "deny" ? "blocked" : undefined} title={e.kind}>
            <time dateTime={e.at}>{shortTime(e.at, tz)}</time> {e.summary}
            {e.why && <span class="why"> — because {e.why}</span>}
          </li>
        ))}
      </ol>
      <Pager next={list.next} error={list.error} more={() => void list.more()} />
    </div>
  );
}

