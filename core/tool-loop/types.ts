import type { ModelError } from "../errors.js";
import type { ChatMessage, ModelClient } from "../model/index.js";
import type { ToolErrorCode, ToolContext, ToolDefinition, ToolResult } from "../tools/index.js";

/** What the loop knows about the activation; `activationKey` seeds every call's idempotency key. */
export type ToolLoopContext = Omit<ToolContext, "idempotencyKey" | "signal"> & {
  /** Stable id of this activation (e.g. `task_…:3` for a task's third activation, or a turn's message id). */
  activationKey: string;
};

/**
 * Runs one validated tool call. The runtime wraps this to journal intent/result and to ask Sentinel;
 * the default simply calls `tool.execute(args, context)`. A throw becomes a tool error for the model.
 */
export type ExecuteTool = (tool: ToolDefinition, args: unknown, context: ToolContext) => Promise<ToolResult>;

/** Input of {@link runToolLoop}. */
export interface ToolLoopInput {
  model: ModelClient;
  /** The assembled context (system prompt, history, the new input), already within the token budget. */
  messages: ChatMessage[];
  /** Tools the model may call in this activation. Names must be unique. */
  tools: ToolDefinition[];
  /** Model calls this activation may make (≥ 1), including the one retry of an empty answer. */
  maxSteps: number;
  context: ToolLoopContext;
  executeTool?: ExecuteTool;
  /** Cancels the activation: the current model request is aborted and remaining calls are not run. */
  signal?: AbortSignal;
  /** Progress events, for logs and typing indicators. A throwing listener is ignored. */
  onEvent?: (event: ToolLoopEvent) => void;
  /** Invalid calls of one tool in a row after which it is disabled for the activation (default 3). */
  maxInvalidCallsPerTool?: number;
  /**
   * Awaited before the calls of a step with more than one tool call run, with every call of the
   * step and the idempotency key it will run under: the journal records the plan so that calls a
   * crash kept from ever starting are reported to the resumed activation as not run, instead of
   * vanishing from its history. A throw fails the activation before any call runs.
   */
  onToolCalls?: (step: number, calls: PlannedToolCall[]) => Promise<void>;
  /** Passed to every model request when set. */
  temperature?: number;
  /** Passed to every model request when set (completion tokens). */
  maxTokens?: number;
}

/**
 * How one tool call ended:
 * - `ok`: ran and succeeded;
 * - `failed`: ran (or was attempted) and failed — the tool returned `ok: false` or threw;
 * - `rejected`: never ran — unparseable JSON, arguments not matching the schema, unknown or disabled tool;
 * - `interrupted`: never ran because the activation was aborted first.
 */
export type ToolCallStatus = "ok" | "failed" | "rejected" | "interrupted";

/** A tool call the model asked for in a step, before it runs. */
export interface PlannedToolCall {
  /** `${activationKey}:${step}:${callIndex}`, the key the call will run under. */
  idempotencyKey: string;
  name: string;
  /** Arguments exactly as the model wrote them. */
  rawArguments: string;
}

/** One tool call of the loop, in order, for the caller's journal and audit. */
export interface ToolCallRecord {
  /** Model call (1-based) that asked for it. */
  step: number;
  /** Position in that model call's tool calls (0-based). */
  callIndex: number;
  /** The tool call id the result message answers. */
  id: string;
  name: string;
  /** `${activationKey}:${step}:${callIndex}`. */
  idempotencyKey: string;
  /** Arguments exactly as the model wrote them. */
  rawArguments: string;
  /** The schema-validated arguments `execute` received; undefined when the call did not run. */
  args: unknown;
  status: ToolCallStatus;
  /** Error code (a {@link LoopToolErrorCode} or the tool's own), null on success. */
  code: ToolErrorCode | null;
  /** The result was untrusted content from outside (it tainted the activation). */
  untrusted: boolean;
}

/** Token counts summed over every model call of the loop. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/** Why the loop stopped. */
export type ToolLoopOutcome =
  /** The model answered with text (trimmed, never empty). */
  | { kind: "reply"; text: string }
  /**
   * The model said nothing twice (field bug M1). The caller sends a short honest error on a user turn
   * and nothing on a proactive one; no placeholder text is ever invented.
   */
  | { kind: "empty"; finishReason: string | null }
  /** `maxSteps` model calls were made and the model still wanted to call tools. */
  | { kind: "step_limit"; maxSteps: number }
  /** The signal was aborted (shutdown, cancellation); nothing more ran. */
  | { kind: "aborted" }
  /** A model request failed for good (after the adapter's retries), e.g. timeout or auth. */
  | { kind: "error"; error: ModelError };

/** What happened along the way; present on every outcome. */
export interface ToolLoopTrace {
  /** Model calls made (attempted), at most `maxSteps`. */
  steps: number;
  toolCalls: ToolCallRecord[];
  /** Untrusted content entered the context during this loop (Sentinel tightens egress from now on). */
  tainted: boolean;
  usage: TokenUsage;
  /**
   * Messages appended after `input.messages`, in order: assistant messages (with tool calls) and
   * tool results. Every tool call has exactly one result, whatever the outcome, so the caller can
   * store this and send it again later.
   */
  messages: ChatMessage[];
}

/** Result of {@link runToolLoop}: switch on `kind`. */
export type ToolLoopResult = ToolLoopOutcome & ToolLoopTrace;

/** Progress of the loop, in order. */
export type ToolLoopEvent =
  | { type: "model_request"; step: number; messages: number; tools: number }
  | { type: "model_response"; step: number; toolCalls: number; contentChars: number; finishReason: string | null }
  | { type: "empty_retry"; step: number }
  | { type: "tool_call"; record: ToolCallRecord }
  | { type: "tool_disabled"; name: string; invalidCalls: number };
