import { z } from "zod";
import type { Clock } from "../clock.js";
import {
  assembleContext,
  type AssembledContext,
  type ConversationView,
  type ContextMedia,
  type TokenCounter,
  type UntrustedContent,
} from "../context/index.js";
import { runToolLoop, toChatTool, type ExecuteTool, type ToolLoopResult } from "../tool-loop/index.js";
import { newId, type HookId } from "../ids.js";
import type { ModelClient } from "../model/index.js";
import type { Store } from "../storage/index.js";
import type { Goal } from "../goals/records.js";
import type { Person } from "../persons/records.js";
import type { Task } from "../tasks/records.js";
import { defineTool, type ToolDefinition } from "../tools/index.js";
import {
  type Inherited,
  type RuntimeState,
  type Trigger,
  findTool,
  journalHistory,
  journaled,
  recordPlan,
} from "../tasks/index.js";

/** What a task activation asked the runtime to do next (set by the wait tools and Sentinel). */
export interface ActivationRequests {
  waitForReply: string | null;
  waitForEvent: { hookId: HookId } | null;
  approvalId: string | null;
  /** The denial breaker paused the task (Sentinel answered `approvals_paused` with `data.pauseTask`). */
  pause: "task" | "person" | null;
}

/** The slice of the store an activation reads and journals through. */
export type ActivationStore = Pick<Store, "conversation" | "goals" | "memory" | "journal" | "transaction" | "supportsTransactions">;

export interface ActivationDeps {
  store: ActivationStore;
  model: ModelClient;
  tokens: TokenCounter;
  clock: Clock;
  budget: number;
  maxSteps: number;
  /** Tools every activation has. */
  tools: readonly ToolDefinition[];
  /** Wraps each call (Sentinel); the journal wraps outside it. Gets the activation's starting taint. */
  gate?: (
    inner: ExecuteTool,
    activation: { taskId: string; tainted: boolean; taintSource: string | null; chainDepth: number; sessionId: string; denialsFrom: Date | null; recurring: boolean },
  ) => ExecuteTool;
  /** Creates a hook for `wait_for_event` and tells the person its URL and secret (never the model). */
  createHook?: (person: Person, task: Task, description: string) => Promise<HookId>;
  /** Shows the person's photos to a model that can see them. */
  media?: ContextMedia;
}

export interface ActivationOutcome {
  result: ToolLoopResult;
  context: AssembledContext;
  requests: ActivationRequests;
}

/** Input of one activation: the claimed task and everything fixed when the activation started. */
export interface ActivationInput {
  task: Task;
  person: Person;
  goal: Goal | null;
  runtime: RuntimeState & { sessionId: string };
  /** The trigger to tell the model about (null for a turn: the person's messages are the input). */
  trigger: Trigger | null;
  /** A one-line description of the trigger for the model (what woke it, in the person's terms). */
  triggerText: string | null;
  observations: UntrustedContent[];
  view: ConversationView;
  originMessageId: string | null;
  /** What the activation inherits from its task (issue 11): starting taint and job-chain depth. Absent: untainted, depth 0. */
  inherited?: Inherited;
  /** The task is recurring work (a cron wake-up, a check-in, a watch that is not once): its own denials cover for 24 h, not for ever. */
  recurring?: boolean;
}

/**
 * Runs one activation of a claimed task: assembles the context (bounded by the activation's view of
 * the conversation, with the task, its goal, the trigger and any untrusted observations), rebuilds
 * the steps of an interrupted activation from the journal, and runs the tool loop with every call
 * journaled (exactly once) and gated. The caller saved the runtime state before calling.
 */
export async function runActivation(deps: ActivationDeps, input: ActivationInput): Promise<ActivationOutcome> {
  const { store, clock } = deps;
  const { task, person, runtime } = input;
  const requests: ActivationRequests = { waitForReply: null, waitForEvent: null, approvalId: null, pause: null };
  // A turn's text is its answer: the tools that propose background messages are not offered to it.
  const tools = [...deps.tools.filter((t) => !(t.backgroundOnly && task.kind === "turn")), ...activationTools(deps, input, requests)];
  const prefix = `${task.id}:a${runtime.activation}`;
  const activationKey = `${prefix}r${runtime.resumes}`;

  const context = await assembleContext({
    store,
    tokens: deps.tokens,
    person,
    now: clock.now(),
    budget: deps.budget,
    tools: tools.map(toChatTool),
    task,
    goal: input.goal,
    trigger: input.triggerText,
    observations: input.observations,
    view: input.view,
    ...(deps.media && { media: deps.media }),
  });

  const inherited = input.inherited ?? { tainted: false, source: null, depth: 0 };
  const chainDepth = inherited.depth;
  const toolContext = { personId: person.id, taskId: task.id, originMessageId: input.originMessageId, now: clock.now(), chainDepth };
  const baseExecute: ExecuteTool = (tool, args, ctx) => tool.execute(args, ctx);
  const history = runtime.resumes > 0 || runtime.round > 0 ? await store.journal.listJournal(task.id) : [];
  const rebuilt = await journalHistory(history, prefix, async (entry) => {
    const tool = findTool(tools, entry.tool);
    if (!tool) return { ok: false, code: "unknown_tool", error: `no tool ${entry.tool}` };
    return baseExecute(tool, entry.args, { ...toolContext, idempotencyKey: entry.idempotencyKey, signal: AbortSignal.timeout(60_000) });
  }, (entry) => findTool(tools, entry.tool)?.transactional === true && store.supportsTransactions);
  const tainted = context.tainted || rebuilt.tainted || inherited.tainted;
  const taintSource = tainted ? (rebuilt.taintSource ?? inherited.source ?? context.taintSource ?? "outside content") : null;
  const denialsFrom = runtime.pausedAt ? new Date(runtime.pausedAt) : null;
  const gated = deps.gate ? deps.gate(baseExecute, { taskId: task.id, tainted, taintSource, chainDepth, sessionId: runtime.sessionId, denialsFrom, recurring: input.recurring === true }) : baseExecute;
  const executeTool = journaled({ store, clock }, gated);

  const result = await runToolLoop({
    model: deps.model,
    messages: [...context.messages, ...rebuilt.messages, ...triggerMessage(input.triggerText)],
    tools,
    maxSteps: deps.maxSteps,
    context: { ...toolContext, activationKey },
    onToolCalls: (step, calls) => recordPlan({ store, clock }, task.id, activationKey, step, calls),
    executeTool: async (tool, args, ctx) => {
      const r = await executeTool(tool, args, { ...ctx, tainted, ...(taintSource !== null && { taintSource }), chainDepth, sessionId: runtime.sessionId });
      if (!r.ok && r.code === "approval_required") {
        const id = approvalIdOf(r.data);
        if (id) requests.approvalId = id;
      }
      if (!r.ok && r.code === "approvals_paused") requests.pause ??= pauseOf(r.data);
      return r;
    },
  });
  return { result: { ...result, tainted: result.tainted || tainted }, context, requests };
}

const approvalData = z.object({ approvalId: z.string() });

const pauseData = z.object({ pauseTask: z.enum(["task", "person"]) });

function pauseOf(data: unknown): "task" | "person" | null {
  const parsed = pauseData.safeParse(data);
  return parsed.success ? parsed.data.pauseTask : null;
}

function approvalIdOf(data: unknown): string | null {
  const parsed = approvalData.safeParse(data);
  return parsed.success ? parsed.data.approvalId : null;
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
    }),
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
        persists: { kind: "webhook", method: "CREATE WEBHOOK", createsJob: () => false },
        async execute(args) {
          const hookId = await createHook(input.person, input.task, args.description);
          requests.waitForEvent = { hookId };
          return { ok: true, content: `Webhook ${hookId} created; the person has its URL and secret. The task will wait for it.` };
        },
      }),
    );
  }
  return tools;
}

/** A fresh session id for a chain of activations started by one trigger. */
export function newSessionId(): string {
  return newId("task").replace("task_", "ses_");
}
