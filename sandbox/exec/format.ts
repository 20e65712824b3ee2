/**
 * A run's result as the model reads it: one status line (exit status or the limit, duration, CPU,
 * memory), the limit in words, stdout and stderr (already cut to their budget, the cut marked),
 * and the files created, changed and deleted (at most 50 of each, then a count).
 */
import { formatBytes } from "./limits.js";
import type { ExecResult } from "./runner.js";

const MAX_LISTED = 50;

function list(label: string, items: string[]): string | null {
  if (items.length === 0) return null;
  const shown = items.slice(0, MAX_LISTED).join(", ");
  return `${label}: ${shown}${items.length > MAX_LISTED ? ` and ${items.length - MAX_LISTED} more` : ""}`;
}

function status(result: ExecResult): string {
  if (result.outcome === "aborted") return "stopped (the activation was stopped)";
  if (result.outcome === "limit") return `killed at a limit (${result.limit?.limit ?? "limit"})`;
  if (result.signal !== null) return `ended by ${result.signal}`;
  return `exit ${result.exitCode ?? "?"}`;
}

/** The text the model reads for a run. */
export function formatResult(result: ExecResult): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const lines = [`${status(result)} — ${seconds(result.durationMs)}, CPU ${seconds(result.cpuMs)}, memory ${formatBytes(result.peakMemoryBytes)}`];
  if (result.limit) lines.push(`Limit: ${result.limit.limit.replace(/_/g, " ")} — ${result.limit.message}${result.limit.by === "killed" ? "; the whole process tree was killed" : ""}.`);
  for (const wall of result.boundaries) lines.push(`Refused by the sandbox (${wall.boundary.replace(/_/g, " ")}): ${wall.message}.`);
  if (result.unlinked.length > 0) lines.push(`Before the run, removed from the workspace (hardlinks to files outside it): ${result.unlinked.join(", ")}`);
  for (const [name, output] of [["stdout", result.stdout], ["stderr", result.stderr]] as const) {
    if (output.bytes === 0) continue;
    lines.push(`${name}${output.cut ? ` (${formatBytes(output.bytes)}, cut to fit)` : ""}:\n${output.text.replace(/\n$/, "")}`);
  }
  if (result.stdout.bytes === 0 && result.stderr.bytes === 0) lines.push("(no output)");
  const files = [
    list("Files created", result.files.created.map((f) => `${f.path}${f.type === "link" ? " (link)" : ` (${formatBytes(f.size)})`}`)),
    list("changed", result.files.changed.map((f) => `${f.path} (${formatBytes(f.size)})`)),
    list("deleted", result.files.deleted),
    list("Removed after the run (over the quota)", result.removedOverQuota),
  ].filter((line): line is string => line !== null);
  lines.push(files.length > 0 ? files.join("; ") : "No file in the workspace was created, changed or deleted.");
  return lines.join("\n");
}
