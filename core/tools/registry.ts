import type { ToolDefinition } from "./tool.js";

/**
 * The tools every activation is offered (the runtime filters per activation: `offered`,
 * `backgroundOnly`). Tools are added at start by the composition root: the core tools, the
 * notification and secret tools, and those of the sandbox and the connectors.
 */
export class ToolRegistry {
  private readonly tools: ToolDefinition[] = [];

  /** Adds tools (names must be unique across all of them; the tool loop refuses duplicates). */
  add(...tools: ToolDefinition[]): void {
    this.tools.push(...tools);
  }

  /** Every registered tool, in the order added. */
  all = (): readonly ToolDefinition[] => this.tools;
}
