import type OpenAI from "openai";
import type { ChatMessage } from "../model/index.js";

type ToolMessage = OpenAI.Chat.Completions.ChatCompletionToolMessageParam;

/**
 * Result text for a tool call whose outcome was never recorded (crash, abort, lost history).
 * It does not claim the call did or did not happen: a side effect may have taken place.
 */
export const INTERRUPTED_RESULT =
  "Error [INTERRUPTED]: this call was interrupted before its result was recorded; its outcome is unknown. " +
  "Check the current state before repeating anything with side effects.";

/** A `tool` role message answering the call with id `toolCallId`. */
export function toolResultMessage(toolCallId: string, content: string): ToolMessage {
  return { role: "tool", tool_call_id: toolCallId, content };
}

/**
 * Makes a loaded history valid for the Chat Completions API, which rejects (400) an assistant tool
 * call without a result and a tool result without its call:
 * - every tool call of an assistant message gets a result right after it (missing ones get
 *   {@link INTERRUPTED_RESULT}, in call order, after the results that exist);
 * - tool results that answer no call of the assistant message just before them, or answer it twice,
 *   are dropped.
 * Other messages are kept as they are, in order. Returns a new array; the input is not changed.
 */
export function repairHistory(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let open: { ids: string[]; answered: Set<string> } | null = null;

  const closeOpenCalls = (): void => {
    if (open === null) return;
    for (const id of open.ids) if (!open.answered.has(id)) out.push(toolResultMessage(id, INTERRUPTED_RESULT));
    open = null;
  };

  for (const message of messages) {
    if (message.role === "tool") {
      const id = message.tool_call_id;
      if (open !== null && open.ids.includes(id) && !open.answered.has(id)) {
        open.answered.add(id);
        out.push(message);
      }
      continue;
    }
    closeOpenCalls();
    out.push(message);
    if (message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls.length > 0) {
      open = { ids: message.tool_calls.map((c) => c.id), answered: new Set() };
    }
  }
  closeOpenCalls();
  return out;
}

/** Ids of tool calls in `messages` that have no result (what {@link repairHistory} would fill in). */
export function unansweredToolCalls(messages: readonly ChatMessage[]): string[] {
  const answered = new Set(messages.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])));
  return messages.flatMap((m) =>
    m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id).filter((id) => !answered.has(id)) : [],
  );
}
