import type { Goal } from "../../core/goals/index.js";
import type { Person } from "../../core/persons/index.js";
import type { Store } from "../../core/storage/index.js";
import type { Task } from "../../core/tasks/index.js";
import { methodPhrase } from "../../core/policy/index.js";

/**
 * What the *Now* tab says, in words: what runs at this moment, what comes next (the next wake-ups
 * with their times), what waits for something other than time (a watched mailbox, a webhook, a
 * reply), and what waits for the person (approval requests). Each line is a sentence; times are
 * ISO-8601 for the page to show in the person's zone.
 */
export interface NowView {
  running: string[];
  next: { at: string; words: string }[];
  watching: string[];
  waitingOnYou: { id: string; words: string; expiresAt: string }[];
}

/** When a task next wakes up (UTC), from its state; null when nothing is scheduled. */
export function nextWakeAt(task: Task): Date | null {
  if (task.state.status === "waiting" && task.state.wait.kind === "time") return task.state.wait.until;
  if (task.state.status === "pending") return task.notBefore;
  return null;
}

/** How many next wake-ups *Now* lists. */
export const NOW_NEXT_SHOWN = 5;

/** A task as a person says it: "answering your message", "the reminder “pay invoice”", "the check-in for “Baking”". */
export function taskInWords(task: Pick<Task, "kind" | "title">, goal: Pick<Goal, "title"> | null): string {
  if (task.kind === "turn") return "answering your message";
  if (task.kind === "checkin") return `the check-in for “${goal?.title ?? task.title}”`;
  return `${goal ? `for “${goal.title}”: ` : ""}“${task.title}”`;
}

function waitWords(task: Task): string | null {
  if (task.state.status !== "waiting") return null;
  switch (task.state.wait.kind) {
    case "change":
      return "waits for a matching change in a connected service (a new mail, a calendar change)";
    case "event":
      return "waits for an event from a connected service";
    case "reply":
      return "waits for your reply";
    case "approval":
      return "waits for your approval";
    case "held":
      return "is held until you answer a card";
    default:
      return null;
  }
}

/** An approval request's summary (`POST shop.example/orders (http_request)`) as "May Familiar send data to shop.example/orders?". */
export function approvalWords(summary: string): string {
  const m = /^([A-Z_]+) (.*?)(?: \(([a-z_]+)\))?$/.exec(summary);
  if (!m) return `May Familiar go on: ${summary}?`;
  const phrase = methodPhrase(m[1]!, m[2]).replace(/ \([A-Z_]+\)/, "");
  return `May Familiar ${phrase.charAt(0).toLowerCase()}${phrase.slice(1)}?`;
}

/** The *Now* view of `person` at `now` (a bounded read: at most 200 open tasks). */
export async function nowView(store: Pick<Store, "tasks" | "goals" | "approvals">, person: Person, now: Date): Promise<NowView> {
  const open = (await store.tasks.listTasks({ personId: person.id, status: ["running", "pending", "waiting"] }, { limit: 200 })).items;
  const goalIds = [...new Set(open.map((t) => t.goalId).filter((g): g is NonNullable<typeof g> => g !== null))];
  const goals = new Map((await Promise.all(goalIds.map((id) => store.goals.getGoal(id)))).filter((g): g is Goal => g !== null).map((g) => [g.id, g]));
  const goalOf = (t: Task) => (t.goalId ? (goals.get(t.goalId) ?? null) : null);
  const paused = (t: Task) => goalOf(t)?.status === "paused";

  const running = open.filter((t) => t.state.status === "running").map((t) => `Working on ${taskInWords(t, goalOf(t))}.`);
  const timed = open
    .filter((t) => t.kind !== "turn" && !paused(t))
    // A pending task without a time is due at once.
    .map((t) => ({ t, at: nextWakeAt(t) ?? (t.state.status === "pending" ? now : null) }))
    .filter((x): x is { t: Task; at: Date } => x.at !== null)
    .sort((a, b) => a.at.getTime() - b.at.getTime())
    .slice(0, NOW_NEXT_SHOWN)
    .map(({ t, at }) => ({ at: at.toISOString(), words: `${t.kind === "checkin" ? "Check-in" : "Wake-up"}: ${taskInWords(t, goalOf(t)).replace(/^the check-in for /, "")}` }));
  const watching = open.flatMap((t) => {
    const words = waitWords(t);
    return words && !paused(t) && !(t.state.status === "waiting" && t.state.wait.kind === "approval") ? [`${taskInWords(t, goalOf(t)).replace(/^./, (c) => c.toUpperCase())} ${words}.`] : [];
  });
  const pending = (await store.approvals.listPendingApprovals(person.id)).filter((a) => a.expiresAt > now);
  const waitingOnYou = pending.map((a) => ({ id: a.id, words: approvalWords(a.summary), expiresAt: a.expiresAt.toISOString() }));
  return { running, next: timed, watching, waitingOnYou };
}
