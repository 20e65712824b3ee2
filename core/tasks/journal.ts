import type { Clock } from "../clock.js";
import { DuplicateKeyError } from "../errors.js";
import type { ExecuteTool, PlannedToolCall } from "../tool-loop/index.js";
import { untrustedToolResult, isToolErrorCode, type ToolDefinition, type ToolResult } from "../tools/index.js";
import type { ChatMessage } from "../model/index.js";
import type { Store } from "../storage/index.js";
import type { Json } from "../json.js";
import type { JournalEntry } from "./records.js";
import type { TaskId } from "../ids.js";
import { z } from "zod";

/** What the model is told about a side-effecting call whose outcome was lost in a crash. */
export const interruptedOutcome =
  "interrupted, outcome unknown: the process stopped while this call was running, so it may or may not have taken effect. Check before trying again, or ask the person.";

/** What the model is told about a transactional call whose run was cut short (its writes rolled back). */
export const notRunOutcome = "not run: the process stopped before this call took effect (nothing was changed). Call it again if it is still needed.";

/** A failed outcome as the journal records it: `{"code":…,"error":…}`. */
const recordedErrorSchema = z.object({ code: z.string().optional(), error: z.string().optional() });

const defaultExecute: ExecuteTool = (tool, args, context) => tool.execute(args, context);

/**
 * Wraps tool execution with the task's tool-call journal, for exactly-once side effects:
 * the intent (tool, validated arguments, idempotency key from (task, activation, step, call)) is
 * recorded before the call and the outcome after. A key seen before is never executed again: a
 * recorded outcome is returned as it was; an intent without an outcome is reported as
 * "interrupted, outcome unknown" for side-effecting tools, and simply run again for read-only ones.
 * Calls outside a task (no `taskId`) run unjournaled.
 */
export function journaled(deps: { store: Pick<Store, "journal" | "transaction" | "supportsTransactions">; clock: Clock }, inner: ExecuteTool = defaultExecute): ExecuteTool {
  const { store, clock } = deps;
  return async (tool, args, context) => {
    if (!context.taskId) return inner(tool, args, context);
    const key = context.idempotencyKey;
    const existing = await store.journal.getEntry(key);
    if (existing?.outcome) return replay(existing);
    // A transactional call cut short left nothing behind (its writes rolled back): run it again.
    const atomic = tool.transactional === true && store.supportsTransactions;
    if (existing && existing.sideEffect && !atomic) return { ok: false, code: "interrupted", error: interruptedOutcome };
    if (!existing) {
      try {
        await store.journal.recordIntent({
          taskId: context.taskId,
          step: stepOf(key),
          idempotencyKey: key,
          tool: tool.name,
          args: (args ?? null) as Json,
          sideEffect: tool.sideEffect,
          intentAt: clock.now(),
        });
      } catch (err) {
        // Another worker recorded the same key first: it owns the call.
        if (err instanceof DuplicateKeyError) return { ok: false, code: "interrupted", error: interruptedOutcome };
        throw err;
      }
    }
    const call = async (): Promise<ToolResult> => {
      let result: ToolResult;
      try {
        result = await inner(tool, args, context);
      } catch (err) {
        result = { ok: false, code: "tool_threw", error: (err as Error).message };
      }
      await store.journal.recordOutcome(key, result.ok ? { ok: true, result: toJson(result) } : { ok: false, error: JSON.stringify({ code: result.code, error: result.error }) }, clock.now());
      return result;
    };
    return atomic ? store.transaction(call) : call();
  };
}

function stepOf(key: string): number {
  const parts = key.split(":");
  return Number(parts.at(-2)) || 0;
}

function toJson(result: Extract<ToolResult, { ok: true }>): Json {
  return { content: result.content, data: result.data ?? null, untrusted: result.untrusted?.source ?? null };
}

/** Rebuilds a ToolResult from a journal outcome. */
function replay(entry: JournalEntry): ToolResult {
  const outcome = entry.outcome!;
  if (outcome.ok) {
    const r = outcome.result as { content?: string; data?: Json; untrusted?: string | null } | null;
    return {
      ok: true,
      content: r?.content ?? "",
      ...(r?.data !== undefined && r.data !== null && { data: r.data }),
      ...(r?.untrusted ? { untrusted: { source: r.untrusted } } : {}),
    };
  }
  let recorded: unknown = null;
  try {
    recorded = JSON.parse(outcome.error);
  } catch {
    // An outcome recorded as plain text: kept as the error, code "failed".
  }
  const e = recordedErrorSchema.safeParse(recorded);
  return e.success ? { ok: false, code: isToolErrorCode(e.data.code) ? e.data.code : "failed", error: e.data.error ?? outcome.error } : { ok: false, code: "failed", error: outcome.error };
}

/** Tool name of a step's plan row in the journal (not a valid function name, so no tool can have it). */
export const planTool = "$plan";

const planSchema = z.object({ calls: z.array(z.object({ idempotencyKey: z.string(), name: z.string(), rawArguments: z.string() })) });

/**
 * Records the calls of a step before any of them runs (see `ToolLoopInput.onToolCalls`): one journal
 * row under `${activationKey}:${step}:plan`. Recording it twice (a retried step) changes nothing.
 */
export async function recordPlan(deps: { store: Pick<Store, "journal">; clock: Clock }, taskId: TaskId, activationKey: string, step: number, calls: PlannedToolCall[]): Promise<void> {
  try {
    await deps.store.journal.recordIntent({ taskId, step, idempotencyKey: `${activationKey}:${step}:plan`, tool: planTool, args: { calls: calls.map((c) => ({ ...c })) }, sideEffect: false, intentAt: deps.clock.now() });
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
  }
}

/**
 * Rebuilds the messages of an interrupted activation from its journal entries (keys starting with
 * `prefix`), so a resumed activation continues where it stopped instead of starting over: each
 * journaled call becomes an assistant tool call followed by its result. Read-only calls without a
 * result are run again (`rerun`); transactional ones (`isTransactional`) are reported as not run
 * (their writes rolled back); other side-effecting ones get the "interrupted, outcome unknown" result.
 * Calls a step planned (plan rows) that never started — the process died on an earlier call of the
 * step — are reported as not run, after the step's other calls.
 */
export async function journalHistory(
  entries: JournalEntry[],
  prefix: string,
  rerun: (entry: JournalEntry) => Promise<ToolResult>,
  isTransactional: (entry: JournalEntry) => boolean = () => false,
): Promise<{ messages: ChatMessage[]; tainted: boolean; taintSource: string | null }> {
  const own = entries.filter((e) => e.idempotencyKey.startsWith(prefix));
  const calls = own.filter((e) => e.tool !== planTool);
  const started = new Set(calls.map((e) => e.idempotencyKey));
  const neverStarted = new Set<string>();
  for (const plan of own.filter((e) => e.tool === planTool)) {
    const parsed = planSchema.safeParse(plan.args);
    if (!parsed.success) continue;
    const stepKey = plan.idempotencyKey.slice(0, -"plan".length);
    const stepAt = Math.max(plan.intentAt.getTime(), ...calls.filter((e) => e.idempotencyKey.startsWith(stepKey)).map((e) => e.intentAt.getTime()));
    for (const c of parsed.data.calls) {
      if (started.has(c.idempotencyKey)) continue;
      let args: Json = c.rawArguments;
      try {
        args = JSON.parse(c.rawArguments) as Json;
      } catch {
        // Arguments that are not JSON are shown as written.
      }
      neverStarted.add(c.idempotencyKey);
      calls.push({ taskId: plan.taskId, step: plan.step, idempotencyKey: c.idempotencyKey, tool: c.name, args, sideEffect: true, intentAt: new Date(stepAt), outcome: null });
    }
  }
  const mine = calls.sort((a, b) => a.intentAt.getTime() - b.intentAt.getTime() || a.idempotencyKey.localeCompare(b.idempotencyKey, "en", { numeric: true }));
  const messages: ChatMessage[] = [];
  let tainted = false;
  let taintSource: string | null = null;
  // The calls of one step (same `${activationKey}:${step}:` key prefix) are one assistant message
  // with several tool calls, followed by their results — as the model made them.
  const stepOfKey = (key: string): string => key.slice(0, key.lastIndexOf(":") + 1);
  let openStep: string | null = null;
  let results: ChatMessage[] = [];
  const flush = () => {
    messages.push(...results);
    results = [];
  };
  for (const e of mine) {
    const id = `j_${e.idempotencyKey.replace(/[^A-Za-z0-9_]/g, "_")}`.slice(0, 64);
    const call = { id, type: "function" as const, function: { name: e.tool, arguments: JSON.stringify(e.args) } };
    const last = messages.at(-1);
    if (openStep === stepOfKey(e.idempotencyKey) && last?.role === "assistant" && last.tool_calls) {
      last.tool_calls.push(call);
    } else {
      flush();
      messages.push({ role: "assistant", content: null, tool_calls: [call] });
      openStep = stepOfKey(e.idempotencyKey);
    }
    let result: ToolResult;
    if (neverStarted.has(e.idempotencyKey)) result = { ok: false, code: "not_run", error: notRunOutcome };
    else if (e.outcome) result = replay(e);
    else if (!e.sideEffect) result = await rerun(e);
    else if (isTransactional(e)) result = { ok: false, code: "not_run", error: notRunOutcome };
    else result = { ok: false, code: "interrupted", error: interruptedOutcome };
    if (result.ok && result.untrusted) {
      tainted = true;
      taintSource = result.untrusted.source;
    }
    const content = result.ok
      ? result.untrusted
        ? untrustedToolResult(result.content, result.untrusted.source)
        : result.content
      : JSON.stringify({ error: result.code, message: result.error });
    results.push({ role: "tool", tool_call_id: id, content });
  }
  flush();
  return { messages, tainted, taintSource };
}

/** Finds a tool by name (for re-running read-only journal entries). */
export function findTool(tools: ToolDefinition[], name: string): ToolDefinition | undefined {
  return tools.find((t) => t.name === name);
}
