import { methodGerund, methodPhrase } from "../../core/policy/index.js";
import type { AuditEvent } from "../../core/audit/index.js";
import { activityInWords, ruleInWords } from "./activity-words.js";

/**
 * The Activity tab's lines: one line per action, as a sentence a person reads ("Remembered “allergic
 * to peanuts”", "Asked you before sending data to shop.example/orders"). Sentinel writes up to three
 * audit events for one tool call — its decision, the approval it asked for, the call's result — all
 * carrying the call's `idempotencyKey`; they are folded into one line here. Everything else is one
 * line per event, in the words of activity-words.ts.
 */

/** One line of the Activity tab. */
export interface ActivityLine {
  /** ISO-8601 of the action's first event. */
  at: string;
  /** The audit kind of the line's main event (for a title tooltip). */
  kind: string;
  /** The sentence. */
  summary: string;
  /** Sentinel's effect when the line is a tool call: `allow`, `ask` or `deny`; else null. */
  decision: string | null;
  /** Why, as a phrase ("it changes or sends something"), or null. */
  why: string | null;
  /** True when the action failed or a message could not be delivered. */
  problem: boolean;
  taskId: string | null;
}

type Data = Record<string, unknown>;

function dataOf(e: AuditEvent): Data {
  return e.data && typeof e.data === "object" && !Array.isArray(e.data) ? e.data : {};
}
const str = (d: Data, k: string): string | null => (typeof d[k] === "string" ? d[k] : null);
const list = (d: Data, k: string): string[] => {
  const v = d[k];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
};

/** The verb phrases of `methodPhrase` in the past ("Send data to x" → "Sent data to x"). */
const PAST: Record<string, string> = { read: "Read", check: "Checked", send: "Sent", replace: "Replaced", change: "Changed", delete: "Deleted", list: "Listed", write: "Wrote", submit: "Submitted", click: "Clicked", type: "Typed", upload: "Uploaded", download: "Downloaded", run: "Ran", create: "Created", move: "Moved", flag: "Flagged", keep: "Kept", open: "Opened" };

function past(phrase: string): string {
  const [first = "", ...rest] = phrase.replace(/ \([A-Z_]+\)/, "").split(" ");
  return [PAST[first.toLowerCase()] ?? first, ...rest].join(" ");
}

/** A quoted preview of a string argument, cut at 80 characters. */
function quoted(value: unknown): string | null {
  if (typeof value !== "string" || value.trim() === "") return null;
  const flat = value.replace(/\s+/g, " ").trim();
  return `“${flat.length > 80 ? `${flat.slice(0, 80)}…` : flat}”`;
}

/** What a tool call that ran did, in words, from its tool name, arguments preview and destinations. */
function didWords(tool: string, args: Data, where: string, method: string | null): string {
  const q = (k: string) => quoted(args[k]);
  const on = where ? ` ${where}` : "";
  const known: Record<string, () => string> = {
    remember: () => `Remembered ${q("text") ?? "something you said"}`,
    forget: () => "Forgot a memory item",
    create_goal: () => `Started the goal ${q("title") ?? ""}`.trim(),
    update_goal: () => (typeof args.status === "string" ? `Marked a goal ${args.status}` : "Updated a goal"),
    list_goals: () => "Looked at your goals",
    schedule_wakeup: () => `Set a reminder${typeof args.cron === "string" ? " that repeats" : ""}: ${q("note") ?? ""}`.trim(),
    cancel_wakeup: () => "Cancelled a reminder",
    run_code: () => `Ran ${typeof args.language === "string" ? args.language : ""} code in its sandbox`.replace("  ", " "),
    run_command: () => `Ran ${q("command") ?? "a command"} in its sandbox`,
    files_list: () => "Listed your workspace files",
    files_read: () => `Read the file ${q("path") ?? ""}`.trim(),
    files_write: () => `Wrote the file ${q("path") ?? ""}`.trim(),
    artifact_create: () => `Made ${q("title") ?? "a document"}`,
    artifact_update: () => "Updated a document it made for you",
    artifact_send: () => "Sent you a document it made",
    artifact_list: () => "Listed the documents it made for you",
    email_search: () => "Searched your mail",
    email_read: () => "Read an email",
    email_draft: () => "Drafted an email",
    email_send: () => `Sent an email${on ? ` to${on}` : ""}`,
    email_reply: () => "Replied to an email",
    email_move: () => "Moved an email",
    email_flag: () => "Flagged an email",
    email_watch: () => "Started watching your mail",
    email_save_attachment: () => "Saved an email attachment to your workspace",
    calendar_list: () => "Looked at your calendar",
    calendar_conflicts: () => "Checked your calendar for overlaps",
    calendar_create: () => `Added ${q("title") ?? "an event"} to your calendar`,
    calendar_update: () => "Changed an event in your calendar",
    calendar_delete: () => "Deleted an event from your calendar",
    browser_screenshot: () => `Took a screenshot${on ? ` of${on}` : ""}`,
    browser_pdf: () => `Saved${on || " a page"} as a PDF`,
  };
  const words = known[tool];
  if (words) return words();
  if (method) return past(methodPhrase(method, where));
  return `Used ${tool.replace(/[_.]+/g, " ")}`;
}

/** One tool call's events (decision, approval asked, result) as one line. */
function callLine(events: AuditEvent[]): ActivityLine {
  const decision = events.find((e) => e.kind === "sentinel.decision");
  const result = events.find((e) => e.kind === "tool.result");
  const first = events.at(-1)!; // newest first: the last is the earliest
  const d = decision ? dataOf(decision) : {};
  const r = result ? dataOf(result) : {};
  const tool = str(d, "tool") ?? str(r, "tool") ?? "a tool";
  const where = list(d, "destinations").join(", ");
  const method = str(d, "method");
  const effect = str(d, "effect");
  const rule = str(d, "ruleId");
  const args = d.args && typeof d.args === "object" && !Array.isArray(d.args) ? (d.args as Data) : {};
  const doing = method ? methodGerund(method, where) : `using ${tool.replace(/[_.]+/g, " ")}`;
  const taskId = str(d, "taskId") ?? str(r, "taskId");
  const base = { at: first.at.toISOString(), kind: decision?.kind ?? first.kind, taskId, decision: effect };
  if (effect === "deny") return { ...base, summary: `Blocked ${doing}`, why: rule ? ruleInWords(rule) : str(d, "reason"), problem: false };
  if (effect === "ask") return { ...base, summary: `Asked you before ${doing}`, why: rule ? ruleInWords(rule) : null, problem: false };
  const did = didWords(tool, args, where, method);
  const failed = result !== undefined && r.ok === false;
  const granted = rule === "allow-granted" || rule === "allow-granted-persistence" ? "you allowed this before" : null;
  return { ...base, summary: failed ? `Tried: ${did.charAt(0).toLowerCase()}${did.slice(1)} — it failed (${(str(r, "code") ?? "error").replace(/_/g, " ")})` : did, why: granted, problem: failed };
}

/** Kinds that report a problem the person may want to know about. */
const PROBLEM_KINDS = new Set(["outbound.failed", "outbound.given_up", "outbound.part_rejected", "outbound.delayed", "hook.rejected", "task.skipped", "inbound.refused", "sentinel.secret_unbound_destination"]);

function eventLine(e: AuditEvent): ActivityLine {
  const d = dataOf(e);
  const words = activityInWords(e.kind, e.summary, { get: (k) => str(d, k), list: (k) => list(d, k) });
  return { at: e.at.toISOString(), kind: e.kind, summary: words.summary, decision: str(d, "effect"), why: words.why, problem: PROBLEM_KINDS.has(e.kind), taskId: str(d, "taskId") };
}

/** The kinds folded into a tool call's line (they carry the call's `idempotencyKey`). */
const CALL_KINDS = new Set(["sentinel.decision", "tool.result", "approval.requested"]);

/**
 * Audit events (newest first) as Activity lines (newest first), one per action: a tool call's
 * decision opens its line, and the approval it asked for and its result (same `idempotencyKey`) join
 * it; a call asked about and run after the person's answer is two lines (asked, then done), with the
 * answer between them. An `approval.requested` without a key joins the decision logged at the same
 * instant (Sentinel writes both with one timestamp).
 */
export function activityLines(events: AuditEvent[]): ActivityLine[] {
  const groups: AuditEvent[][] = [];
  const open = new Map<string, AuditEvent[]>();
  for (const e of [...events].reverse()) {
    const d = dataOf(e);
    const key = CALL_KINDS.has(e.kind) ? str(d, "idempotencyKey") : null;
    if (e.kind === "sentinel.decision") {
      const group = [e];
      groups.push(group);
      if (key !== null) open.set(key, group);
      open.set(`at:${e.at.getTime()}`, group);
      continue;
    }
    const group = CALL_KINDS.has(e.kind) ? (open.get(key ?? "") ?? open.get(`at:${e.at.getTime()}`)) : undefined;
    if (group) group.unshift(e);
    else groups.push([e]);
  }
  return groups.reverse().map((g) => (g.some((e) => e.kind === "sentinel.decision" || e.kind === "tool.result") ? callLine(g) : eventLine(g[0]!)));
}
