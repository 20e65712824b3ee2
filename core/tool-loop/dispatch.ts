import { z } from "zod";
import { ValidationError } from "../errors.js";
import type { ChatTool, ModelToolCall } from "../model/index.js";
import {
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  type LoopToolErrorCode,
  untrustedToolResult,
} from "../tools/index.js";
import { toolResultMessage } from "./history.js";
import type { ExecuteTool, ToolCallRecord, ToolLoopContext } from "./types.js";

/** OpenAI function name rule: 1–64 characters of letters, digits, `_` and `-`. */
const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Converts a tool to a Chat Completions function tool. The parameters are the zod schema's JSON
 * Schema for its *input* side (what the model must write), draft-07 with reused parts inlined,
 * because compatible servers handle `$defs`/`$ref` and `$schema` poorly.
 *
 * @throws Error (from zod) when the schema has parts JSON Schema cannot express (e.g. `z.date()`).
 */
export function toChatTool(tool: ToolDefinition): ChatTool {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.parameters, {
    target: "draft-07",
    io: "input",
    reused: "inline",
  }) as Record<string, unknown>;
  return { type: "function", function: { name: tool.name, description: tool.description, parameters } };
}

/** Where a call sits in the activation. */
export interface CallPosition {
  step: number;
  callIndex: number;
}

/** A handled call: the record, the result message for the model, and the tool it disabled, if any. */
export interface DispatchedCall {
  record: ToolCallRecord;
  message: ReturnType<typeof toolResultMessage>;
  /** Set when this call made the tool disabled (its N-th invalid call in a row). */
  disabledTool: string | null;
}

/**
 * Validates and runs the model's tool calls for one activation, and keeps the per-tool count of
 * invalid calls in a row. Unparseable JSON, schema-invalid arguments and unknown or disabled tools
 * never reach `execute`; the model gets an error result describing the problem instead. Arguments
 * are never repaired or guessed: what runs is exactly what the model wrote, validated (zod defaults
 * and transforms apply).
 */
export class ToolDispatcher {
  private readonly byName = new Map<string, ToolDefinition>();
  private readonly conditional = new Map<string, NonNullable<ToolDefinition["offered"]>>();
  private readonly chatTools = new Map<string, ChatTool>();
  private readonly invalidInARow = new Map<string, number>();
  private readonly disabled = new Set<string>();

  /** @throws ValidationError when a tool name breaks the OpenAI rule or two tools share a name. */
  constructor(
    tools: readonly ToolDefinition[],
    private readonly options: {
      context: ToolLoopContext;
      executeTool: ExecuteTool;
      maxInvalidCallsPerTool: number;
    },
  ) {
    for (const tool of tools) {
      if (!toolNamePattern.test(tool.name)) {
        throw new ValidationError(`tool name ${JSON.stringify(tool.name)} is not allowed`, [
          "tool names are 1–64 characters of letters, digits, _ and - (OpenAI function name rule)",
        ]);
      }
      if (this.byName.has(tool.name)) {
        throw new ValidationError(`two tools are named ${JSON.stringify(tool.name)}`, ["tool names must be unique"]);
      }
      this.byName.set(tool.name, tool);
      this.chatTools.set(tool.name, toChatTool(tool));
      if (tool.offered) this.conditional.set(tool.name, tool.offered);
    }
  }

  /** Invalid calls of one tool in a row after which it is disabled. */
  get maxInvalidCallsPerTool(): number {
    return this.options.maxInvalidCallsPerTool;
  }

  /** Function tools to offer in the next request (disabled tools, and tools whose `offered` says no now, are left out). */
  offeredTools(): ChatTool[] {
    const personId = this.options.context.personId;
    return [...this.chatTools].filter(([name]) => !this.disabled.has(name) && this.conditional.get(name)?.(personId) !== false).map(([, tool]) => tool);
  }

  /** The idempotency key of a call: `${activationKey}:${step}:${callIndex}`. */
  idempotencyKey(position: CallPosition): string {
    return `${this.options.context.activationKey}:${position.step}:${position.callIndex}`;
  }

  /** A result for a call that will not run because the activation was aborted. */
  interrupted(call: ModelToolCall, position: CallPosition): DispatchedCall {
    return this.rejected(call, position, "interrupted", "interrupted", "the activation was stopped before this call ran; it did not run.");
  }

  /** Validates and runs one call; never throws. */
  async dispatch(call: ModelToolCall, position: CallPosition, signal: AbortSignal): Promise<DispatchedCall> {
    const tool = this.byName.get(call.name);
    if (tool === undefined) {
      const available = [...this.chatTools.keys()].filter((name) => !this.disabled.has(name));
      return this.rejected(call, position, "rejected", "unknown_tool",
        `there is no tool named ${JSON.stringify(call.name)}; nothing ran. ` +
          (available.length > 0 ? `Available tools: ${available.join(", ")}.` : "No tools are available now."));
    }
    if (this.disabled.has(tool.name)) {
      return this.rejected(call, position, "rejected", "tool_disabled",
        `${tool.name} is disabled for the rest of this activation after ${this.options.maxInvalidCallsPerTool} invalid calls in a row; it did not run. Do not call it again.`);
    }

    const parsed = parseArguments(call.arguments);
    if (!parsed.ok) {
      return this.invalid(call, position, "invalid_json",
        `the arguments of ${tool.name} are not valid JSON (${parsed.problem}); the tool did not run. Call it again with a JSON object that matches its parameters.`);
    }
    const validated = await tool.parameters.safeParseAsync(parsed.value);
    if (!validated.success) {
      const problems = validated.error.issues.map((i) => `- ${i.path.length > 0 ? i.path.join(".") : "(arguments)"}: ${i.message}`);
      return this.invalid(call, position, "invalid_arguments",
        `the arguments of ${tool.name} do not match its parameters; the tool did not run:\n${problems.join("\n")}\nCall it again with corrected arguments.`);
    }
    this.invalidInARow.delete(tool.name);
    return this.execute(tool, call, position, validated.data, signal);
  }

  private async execute(tool: ToolDefinition, call: ModelToolCall, position: CallPosition, args: unknown, signal: AbortSignal): Promise<DispatchedCall> {
    const { activationKey: _activationKey, ...context } = this.options.context;
    const idempotencyKey = this.idempotencyKey(position);
    const toolContext: ToolContext = { ...context, idempotencyKey, signal };
    let result: ToolResult;
    try {
      result = await this.options.executeTool(tool, args, toolContext);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      result = { ok: false, code: "tool_threw", error: `${tool.name} failed: ${message}` };
    }
    const base = { ...position, id: call.id, name: call.name, idempotencyKey, rawArguments: call.arguments, args };
    if (!result.ok) {
      return {
        record: { ...base, status: "failed", code: result.code, untrusted: false },
        message: toolResultMessage(call.id, `Error [${result.code}]: ${result.error}`),
        disabledTool: null,
      };
    }
    const body = result.content.length > 0 ? result.content : "(the tool returned no output)";
    const untrusted = result.untrusted !== undefined;
    return {
      record: { ...base, status: "ok", code: null, untrusted },
      message: toolResultMessage(call.id, result.untrusted ? untrustedToolResult(body, result.untrusted.source) : body),
      disabledTool: null,
    };
  }

  private invalid(call: ModelToolCall, position: CallPosition, code: LoopToolErrorCode, text: string): DispatchedCall {
    const count = (this.invalidInARow.get(call.name) ?? 0) + 1;
    this.invalidInARow.set(call.name, count);
    const limit = this.options.maxInvalidCallsPerTool;
    if (count < limit) return this.rejected(call, position, "rejected", code, text);
    this.disabled.add(call.name);
    const final = `${text}\nThis was invalid call ${count} in a row: ${call.name} is now disabled for the rest of this activation. Do not call it again; answer with what you have.`;
    return { ...this.rejected(call, position, "rejected", code, final), disabledTool: call.name };
  }

  private rejected(
    call: ModelToolCall,
    position: CallPosition,
    status: "rejected" | "interrupted",
    code: LoopToolErrorCode,
    text: string,
  ): DispatchedCall {
    return {
      record: {
        ...position,
        id: call.id,
        name: call.name,
        idempotencyKey: this.idempotencyKey(position),
        rawArguments: call.arguments,
        args: undefined,
        status,
        code,
        untrusted: false,
      },
      message: toolResultMessage(call.id, `Error [${code}]: ${text}`),
      disabledTool: null,
    };
  }
}

/**
 * Parses the model's raw argument text. An empty string means "no arguments" (`{}`), as several
 * compatible servers send for parameterless calls; the schema still decides whether `{}` is valid.
 */
function parseArguments(raw: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  if (raw.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : "unparseable" };
  }
}
