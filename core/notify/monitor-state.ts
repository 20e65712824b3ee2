import type { MonitorState, MonitorValue } from "../storage/index.js";

/**
 * "Unchanged since the last report" and "trivial change", decided by code from a monitor's
 * structured state (see `MonitorState`) instead of from its prose.
 */

/** Default significance of a numeric change without an explicit threshold: 1% of the earlier value. */
export const defaultRelativeThreshold = 0.01;

/** How a monitor's state differs from what the person was last told. */
export type MonitorChange =
  | { change: "unchanged"; detail: string }
  | { change: "trivial"; detail: string }
  | { change: "significant"; detail: string };

const isNumber = (v: MonitorValue | undefined): v is number => typeof v === "number";

/**
 * Compares a monitor's current state with the last reported one (same subject). A field added,
 * removed, or whose non-numeric value differs is significant; a numeric field is significant when
 * it moves by at least its threshold (`thresholds[field]`, absolute; default 1% of the earlier
 * value) or crosses or reaches its target (`targets[field]`). When nothing moved it is `unchanged`;
 * when only numbers moved below their thresholds it is `trivial`.
 */
export function compareMonitor(previous: MonitorState, current: MonitorState): MonitorChange {
  const keys = new Set([...Object.keys(previous.values), ...Object.keys(current.values)]);
  const trivial: string[] = [];
  for (const key of keys) {
    const before = previous.values[key];
    const now = current.values[key];
    if (!(key in previous.values)) return { change: "significant", detail: `${key} is new` };
    if (!(key in current.values)) return { change: "significant", detail: `${key} is no longer reported` };
    if (isNumber(before) && isNumber(now)) {
      if (before === now) continue;
      const target = current.targets?.[key] ?? previous.targets?.[key];
      if (target !== undefined && crosses(before, now, target)) return { change: "significant", detail: `${key} ${before} → ${now} reached the target ${target}` };
      const threshold = current.thresholds?.[key] ?? previous.thresholds?.[key] ?? Math.abs(before) * defaultRelativeThreshold;
      if (Math.abs(now - before) >= threshold && threshold >= 0) return { change: "significant", detail: `${key} ${before} → ${now} (threshold ${round(threshold)})` };
      trivial.push(`${key} ${before} → ${now} (below ${round(threshold)})`);
      continue;
    }
    if (before !== now) return { change: "significant", detail: `${key} ${String(before)} → ${String(now)}` };
  }
  return trivial.length === 0 ? { change: "unchanged", detail: `unchanged since the last report (${previous.checked || previous.subject})` } : { change: "trivial", detail: `trivial change: ${trivial.join(", ")}` };
}

/** True when moving from `a` to `b` reaches or passes `target` (from either side). */
function crosses(a: number, b: number, target: number): boolean {
  if (a === target) return false;
  return Math.sign(a - target) !== Math.sign(b - target);
}

const round = (n: number) => Math.round(n * 1000) / 1000;
