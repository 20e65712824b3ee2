import type { PersistencePolicy, ToolContext, ToolDefinition, ToolPolicy } from "../tools/index.js";
import type { DecisionInput } from "./decision.js";
import { visible } from "./readable.js";

/**
 * The Sentinel view of an internal tool that persists something: a write with a fixed verb and no
 * destination, every argument shown on the card. Approvals of it are bound to the exact call.
 */
export function persistencePolicy(tool: ToolDefinition, persists: PersistencePolicy): ToolPolicy {
  return { capability: tool.capability, access: "write", method: { fixed: persists.method }, destinationArgs: [], exfiltrationArgs: [] };
}

/** Lines a persistence card adds: where the taint came from, and the job chain's depth. */
export function persistenceNotes(tool: ToolDefinition, input: DecisionInput, context: ToolContext): { name: string; value: string }[] {
  const notes: { name: string; value: string }[] = [];
  if (input.tainted) notes.push({ name: "read before", value: visible(context.taintSource ?? "outside content").text.slice(0, 300) });
  if (input.createsJob === true) {
    const depth = input.chainDepth ?? 0;
    notes.push({
      name: "job chain",
      value: depth === 0 ? "a new job from this conversation (depth 1)" : `a job scheduled by a job (depth ${depth + 1}; jobs started by jobs need you)`,
    });
  }
  if (tool.persists?.kind === "memory" && input.tainted) notes.push({ name: "kept as", value: "marked as coming from outside content" });
  return notes;
}
