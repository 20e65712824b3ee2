import { z } from "zod";
import type { Clock } from "../clock.js";
import { assembleContext, type AssembledContext } from "../context/assemble.js";
import type { ContextMedia } from "../context/attachments.js";
import type { TokenCounter } from "../context/tokens.js";
import type { UntrustedContent } from "../context/untrusted.js";
import { runToolLoop, toChatTool } from "../harness/index.js";
import type { ExecuteTool, ToolLoopResult } from "../harness/types.js";
import { newId, type HookId } from "../ids.js";
import type { ModelClient } from "../model/port.js";
import type { Store } from "../storage/ports.js";
import type { Goal, Json, Person, Task } from "../storage/types.js";
import { defineTool, type ToolDefinition } from "../tools/tool.js";
import { findTool, journalHistory, journaled } from "./journal.js";

/** Runtime bookkeeping kept in every task's checkpoint under `runtime`. */
export interface RuntimeState {
  /** Number of the current (or last) activation, from 1. */
  activation: number;
  /** How often the current activation was resumed after an interruption. */
  resumes: number;
  /** True while an activation is in progress (a crash leaves it true: the next claim resumes it). */
  open: boolean;
  /** Set while the task waits for an approval: the call that asked. */
  approvalId?: string | null;
  /** Resumptions of the current activation after an approval (each may say something new). */
  round?: number;
}

const runtimeStateSchema = z.object({
  activation: z.number().int().min(0),
  resumes: z.number().int().min(0),
  open: z.boolean(),
  approvalId: z.string().nullish(),
  round: z.number().int().min(0).optional(),
});

export function runtimeStateOf(task: Task): RuntimeState {
  const raw = (task.checkpoint as { runtime?: unknown } | null)?.runtime;
  const parsed = runtimeStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : { activation: 0, resumes: 0, open: false };
}

/** Returns the task's checkpoint with `runtime` replaced. */
export function withRuntime(task: Task, runtime: RuntimeState, extra: Record<string, Json> = {}): Json {
  const base = task.checkpoint && typeof task.checkpoint === "object" && !Array.isArray(task.checkpoint) ? task.checkpoint : {};
  return { ...base, ...extra, runtime: runtime as unknown as Json };
}

/** What a task activation asked the runtime to do next (set by the wait tools). */
export interface ActivationRequests {
  waitForReply: string | null;
  waitForEvent: { hookId: HookId } | null;
  approvalId: string | null;
}

export interface ActivationDeps {
  store: Store;
  model: ModelClient;
  tokens: TokenCounter;
  clock: Clock;
  budget: number;
  maxSteps: number;
  /** Tools every activation has. */
  tools: ToolDefinition[];
  /** Wraps each call (Sentinel); the journal wraps outside it. Gets the activation's starting taint. */
  gate?: (inner: ExecuteTool, activation: { taskId: string; tainted: boolean; sessionId: string }) => ExecuteTool;
  /** Creates a hook for `wait_for_event` and tells the person its URL and secret (never the model). */
  createHook?: (person: Person, task: Task, description: string) => Promise<HookId>;
  /** Shows the person's photos to a model that can see them. */
  media?: ContextMedia;
}

export interface ActivationOutcome {
  result: ToolLoopResult;
  context: AssembledContext;
  requests: ActivationRequests;
  activationKey: string;
}

/**
 * Runs one activation of a claimed task: assembles the context (with the task, its goal, the trigger
 * and any untrusted observations), rebuilds the steps of an interrupted activation from the journal,
 * and runs the tool loop with every call journaled (exactly once) and gated. The caller has saved the
 * runtime state (activation number, resumes) before calling.
 */
export async function runActivation(
  deps: ActivationDeps,
  input: { task: Task; person: Person; goal: Goal | null; runtime: RuntimeState; trigger: string | null; observations: UntrustedContent[]; sessionId: string; originMessageId: string | null },
): Promise<ActivationOutcome> {
  const { store, clock, task, person } = { ...deps, ...input };
  const requests: ActivationRequests = { waitForReply: null, waitForEvent: null, approvalId: null };
  const taskTools = activationTools(deps, input, requests);
  const tools = [...deps.tools, ...taskTools];
  const prefix = `${task.id}:a${input.runtime.activation}`;
  const activationKey = `${prefix}r${input.runtime.resumes}`;

  const context = await assembleContext({
    store,
    tokens: deps.tokens,
    person,
    now: clock.now(),
    budget: deps.budget,
    tools: tools.map(toChatTool),
    task,
    goal: input.goal,
    trigger: input.trigger,
    observations: input.observations,
    ...(deps.media && { media: deps.media }),
  });

  const toolContext = { personId: person.id, taskId: task.id, originMessageId: input.originMessageId, now: clock.now() };
  const baseExecute: ExecuteTool = (tool, args, ctx) => tool.execute(args as never, ctx);
  const history = input.runtime.resumes > 0 ? await store.journal.listJournal(task.id) : [];
  const rebuilt = await journalHistory(history, prefix, async (entry) => {
    const tool = findTool(tools, entry.tool);
    if (!tool) return { ok: false, code: "UNKNOWN_TOOL", error: `no tool ${entry.tool}` };
    return baseExecute(tool, entry.args, { ...toolContext, idempotencyKey: entry.idempotencyKey, signal: AbortSignal.timeout(60_000) });
  });
  const tainted = context.tainted || rebuilt.tainted;
  const gated = deps.gate ? deps.gate(baseExecute, { taskId: task.id, tainted, sessionId: input.sessionId }) : baseExecute;
  const executeTool = journaled({ store, clock }, gated);

  const result = await runToolLoop({
    model: deps.model,
    messages: [...context.messages, ...rebuilt.messages, ...triggerMessage(input.trigger)],
    tools,
    maxSteps: deps.maxSteps,
    context: { ...toolContext, activationKey },
    executeTool: async (tool, args, ctx) => {
      const r = await executeTool(tool, args, { ...ctx, tainted, sessionId: input.sessionId });
      if (!r.ok && r.code === "approval_required") {
        const id = (r as { data?: { approvalId?: string } }).data?.approvalId ?? extractApprovalId(r.error);
        if (id) requests.approvalId = id;
      }
      return r;
    },
  });
  return { result: { ...result, tainted: result.tainted || tainted }, context, requests, activationKey };
}

function extractApprovalId(text: string): string | null {
  return /\b(apr_[0-9a-f]+)\b/.exec(text)?.[1] ?? null;
}

/** Background activations get their trigger as a final system note (it is not the person speaking). */
function triggerMessage(trigger: string | null) {
  return trigger ? [{ role: "system" as const, content: `Runtime: ${trigger}. This is an automatic trigger, not a message from the person.` }] : [];
}

/** Tools that change what happens to the task after this activation. */
function activationTools(deps: ActivationDeps, input: { task: Task; person: Person }, requests: ActivationRequests): ToolDefinition[] {
  const tools: ToolDefinition[] = [
    defineTool({
      name: "wait_for_reply",
      description: "Ask the person a question and pause this task until they answer. Your final message should be the question.",
      parameters: z.object({ question: z.string().min(1).max(2_000) }),
      sideEffect: false,
      capability: "tasks.wait",
      async execute(args) {
        requests.waitForReply = args.question;
        return { ok: true, content: "The task will wait for the person's reply after this message." };
      },
    }) as unknown as ToolDefinition,
  ];
  if (deps.createHook) {
    const createHook = deps.createHook;
    tools.push(
      defineTool({
        name: "wait_for_event",
        description:
          "Pause this task until an outside service calls a webhook (e.g. a price alert or a delivery notice). The person is sent the webhook URL and secret directly; you never see the secret.",
        parameters: z.object({ description: z.string().min(1).max(500) }),
        sideEffect: true,
        capability: "hooks.create",
        async execute(args) {
          const hookId = await createHook(input.person, input.task, args.description);
          requests.waitForEvent = { hookId };
          return { ok: true, content: `Webhook ${hookId} created; the person has its URL and secret. The task will wait for it.` };
        },
      }) as unknown as ToolDefinition,
    );
  }
  return tools;
}

/** A fresh session id for a chain of activations started by one trigger. */
export function newSessionId(): string {
  return newId("task").replace("task_", "ses_");
}
