import { ModelError, ValidationError } from "../errors.js";
import type { ChatMessage, ModelResponse, ModelToolCall } from "../model/index.js";
import type { ToolDefinition } from "../tools/index.js";
import { repairHistory } from "./history.js";
import { ToolDispatcher } from "./dispatch.js";
import type {
  ExecuteTool,
  ToolLoopEvent,
  ToolLoopInput,
  ToolLoopOutcome,
  ToolLoopResult,
  ToolLoopTrace,
} from "./types.js";

/** Default of {@link ToolLoopInput.maxInvalidCallsPerTool}. */
export const DEFAULT_MAX_INVALID_CALLS_PER_TOOL = 3;

const defaultExecute: ExecuteTool = (tool: ToolDefinition, args, context) => tool.execute(args, context);

/**
 * The LLM tool loop of one activation: ask the model, run the tool calls it asks for, give it the
 * results, repeat — until it answers with text, or a bound is hit.
 *
 * Guarantees:
 * - at most `maxSteps` model calls; when the model still wants tools after that, the outcome is
 *   `step_limit` (the last batch of calls did run, and its results are in `messages`);
 * - tool calls run one after another, in the order the model gave them; every call gets exactly
 *   one result message before the next model request, and before the loop returns — also on
 *   errors, aborts and limits — so `messages` can be stored and sent again as is;
 * - arguments are parsed and validated with the tool's zod schema; unparseable or invalid ones,
 *   unknown tools and tools disabled after `maxInvalidCallsPerTool` invalid calls in a row never
 *   reach `execute`; the model reads an error result saying what was wrong;
 * - each call's `ToolContext` carries the idempotency key `${activationKey}:${step}:${callIndex}`
 *   (step is the 1-based model call, callIndex 0-based), so a resumed activation with the same key
 *   derives the same keys and the journal can recognise earlier intents;
 * - results marked `untrusted` are wrapped in `<untrusted nonce="…" source="…">` blocks (core/tools/untrusted.ts) and set `tainted`;
 * - an empty answer (no text, no tool calls) is retried once (if a step is left); a second empty
 *   answer ends with `empty` (field bug M1) — no text is ever made up;
 * - `input.messages` are sent through {@link repairHistory}, so a stored history with dangling
 *   calls or results does not make the provider reject the request.
 *
 * Model failures end the loop with `error` (a {@link ModelError}, after the adapter's retries);
 * tool failures go back to the model. The loop never throws for those.
 *
 * @throws ValidationError for programming errors: `maxSteps` below 1, a bad or duplicate tool name.
 * @example
 * const result = await runToolLoop({ model, messages, tools, maxSteps: 8, context });
 * if (result.kind === "reply") await outbox.enqueue(result.text);
 * await journal.append(result.messages);
 */
export async function runToolLoop(input: ToolLoopInput): Promise<ToolLoopResult> {
  if (!Number.isInteger(input.maxSteps) || input.maxSteps < 1) {
    throw new ValidationError(`maxSteps must be an integer ≥ 1, got ${input.maxSteps}`);
  }
  const dispatcher = new ToolDispatcher(input.tools, {
    context: input.context,
    executeTool: input.executeTool ?? defaultExecute,
    maxInvalidCallsPerTool: input.maxInvalidCallsPerTool ?? DEFAULT_MAX_INVALID_CALLS_PER_TOOL,
  });
  const signal = input.signal ?? new AbortController().signal;
  const history = repairHistory(input.messages);
  const trace: ToolLoopTrace = {
    steps: 0,
    toolCalls: [],
    tainted: false,
    usage: { promptTokens: 0, completionTokens: 0 },
    messages: [],
  };
  const emit = (event: ToolLoopEvent): void => {
    try {
      input.onEvent?.(event);
    } catch {
      // A listener is for observation only; it must not change the activation's outcome.
    }
  };
  const finish = (outcome: ToolLoopOutcome): ToolLoopResult => ({ ...outcome, ...trace });
  let emptyRetried = false;

  for (;;) {
    if (signal.aborted) return finish({ kind: "aborted" });
    if (trace.steps >= input.maxSteps) return finish({ kind: "step_limit", maxSteps: input.maxSteps });

    const step = ++trace.steps;
    const tools = dispatcher.offeredTools();
    const messages = [...history, ...trace.messages];
    emit({ type: "model_request", step, messages: messages.length, tools: tools.length });

    let response: ModelResponse;
    try {
      response = await input.model.complete({
        messages,
        ...(tools.length > 0 ? { tools } : {}),
        signal,
        ...(input.temperature === undefined ? {} : { temperature: input.temperature }),
        ...(input.maxTokens === undefined ? {} : { maxTokens: input.maxTokens }),
      });
    } catch (error) {
      const modelError = asModelError(error, input.model.model);
      if (signal.aborted || modelError.reason === "aborted") return finish({ kind: "aborted" });
      return finish({ kind: "error", error: modelError });
    }
    if (response.usage !== null) {
      trace.usage.promptTokens += response.usage.promptTokens;
      trace.usage.completionTokens += response.usage.completionTokens;
    }
    const text = (response.content ?? "").trim();
    emit({
      type: "model_response",
      step,
      toolCalls: response.toolCalls.length,
      contentChars: text.length,
      finishReason: response.finishReason,
    });

    if (response.toolCalls.length === 0) {
      if (text.length > 0) {
        trace.messages.push({ role: "assistant", content: text });
        return finish({ kind: "reply", text });
      }
      // Field bug M1: resend the same request once; an empty assistant turn is never stored.
      if (!emptyRetried && trace.steps < input.maxSteps) {
        emptyRetried = true;
        emit({ type: "empty_retry", step });
        continue;
      }
      return finish({ kind: "empty", finishReason: response.finishReason });
    }

    const calls = withUniqueIds(response.toolCalls, `${input.context.activationKey}:${step}`);
    if (calls.length > 1 && input.onToolCalls) {
      await input.onToolCalls(step, calls.map((c, callIndex) => ({ idempotencyKey: dispatcher.idempotencyKey({ step, callIndex }), name: c.name, rawArguments: c.arguments })));
    }
    trace.messages.push(assistantToolCallMessage(text, calls));
    await runCalls(calls, step);
  }

  async function runCalls(calls: ModelToolCall[], step: number): Promise<void> {
    let answered = 0;
    try {
      for (const [callIndex, call] of calls.entries()) {
        const position = { step, callIndex };
        const done = signal.aborted ? dispatcher.interrupted(call, position) : await dispatcher.dispatch(call, position, signal);
        trace.messages.push(done.message);
        trace.toolCalls.push(done.record);
        answered++;
        if (done.record.untrusted) trace.tainted = true;
        emit({ type: "tool_call", record: done.record });
        if (done.disabledTool !== null) {
          emit({ type: "tool_disabled", name: done.disabledTool, invalidCalls: dispatcher.maxInvalidCallsPerTool });
        }
      }
    } finally {
      // The dispatcher does not throw, but if anything did, the history must still be complete.
      for (const [callIndex, call] of calls.entries()) {
        if (callIndex < answered) continue;
        const done = dispatcher.interrupted(call, { step, callIndex });
        trace.messages.push(done.message);
        trace.toolCalls.push(done.record);
      }
    }
  }
}

/** The assistant message that carries tool calls (with the text the model wrote alongside, if any). */
function assistantToolCallMessage(text: string, calls: ModelToolCall[]): ChatMessage {
  return {
    role: "assistant",
    content: text.length > 0 ? text : null,
    tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
  };
}

/**
 * Some compatible servers omit tool call ids or repeat them; results are matched by id, so every
 * call of a batch gets a unique one (`<activationKey>:<step>:<index>` when missing or repeated).
 */
function withUniqueIds(calls: ModelToolCall[], prefix: string): ModelToolCall[] {
  const seen = new Set<string>();
  return calls.map((call, index) => {
    const id = call.id && !seen.has(call.id) ? call.id : `call_${prefix}:${index}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

function asModelError(error: unknown, model: string): ModelError {
  if (error instanceof ModelError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ModelError(`${model}: the model client failed unexpectedly: ${message}`, "invalid_response");
}
