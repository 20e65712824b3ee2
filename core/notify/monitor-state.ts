import type { MonitorState, MonitorValue } from "./records.js";

/**
 * "Unchanged since the last report" and "trivial change", decided by code from a monitor's
 * structured state (see `MonitorState`) instead of from its prose.
 */

/** Default significance of a numeric change without an explicit threshold: 1% of the earlier value. */
export const defaultRelativeThreshold = 0.01;

/**
 * With a target and no stated threshold, a move matters when it covers at least this share of the
 * distance to the target (issue 18: "a $0.50 move far from a $330 target" is trivial; the last $5
 * before it are not). Crossing or reaching the target always matters.
 */
export const targetDistanceShare = 0.25;

/**
 * The smallest move of a value `before` that matters (same unit as the value): the person's stated
 * `threshold` when there is one; else 1% of the value, or — when the person named targets — a
 * quarter of the distance to the nearest one, whichever is larger.
 */
export function minimumMove(before: number, threshold: number | undefined, targets: readonly number[] = []): number {
  if (threshold !== undefined) return threshold;
  const relative = Math.abs(before) * defaultRelativeThreshold;
  const distances = targets.map((t) => Math.abs(before - t)).filter((d) => d > 0);
  return distances.length > 0 ? Math.max(relative, Math.min(...distances) * targetDistanceShare) : relative;
}

/** How a monitor's state differs from what the person was last told. */
export type MonitorChange =
  | { change: "unchanged"; detail: string }
  | { change: "trivial"; detail: string }
  | { change: "significant"; detail: string };

const isNumber = (v: MonitorValue | undefined): v is number => typeof v === "number";

/**
 * Compares a monitor's current state with the last reported one (same subject). A field added,
 * removed, or whose non-numeric value differs is significant; a numeric field is significant when
 * it moves by at least its threshold (`thresholds[field]`, absolute; default `minimumMove`: 1% of
 * the earlier value, or a quarter of the distance to its target) or crosses or reaches its target
 * (`targets[field]`). When nothing moved it is `unchanged`;
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
      const threshold = minimumMove(before, current.thresholds?.[key] ?? previous.thresholds?.[key], target === undefined ? [] : [target]);
      if (Math.abs(now - before) >= threshold && threshold >= 0) return { change: "significant", detail: `${key} ${before} → ${now} (threshold ${round(threshold)})` };
      trivial.push(`${key} ${before} → ${now} (below ${round(threshold)})`);
      continue;
    }
    if (before !== now) return { change: "significant", detail: `${key} ${String(before)} → ${String(now)}` };
  }
  return trivial.length === 0 ? { change: "unchanged", detail: `unchanged since the last report (${previous.checked || previous.subject})` } : { change: "trivial", detail: `trivial change: ${trivial.join(", ")}` };
}

/** A subject without case, accents, punctuation, articles and possessives ("Your DHL parcel JD0146" → "dhl parcel jd0146"). */
export function subjectKey(subject: string): string {
  return subject
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .replace(/\b(the|a|an|your|my|der|die|das|dein|deine|el|la|los|las|tu|mi|le|les|ton|ta|mon|ma|o|os|il|lo)\b/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Whether two monitor subjects name the same thing: the same words once normalised (`subjectKey`),
 * or the same identifier (a token mixing letters and digits such as a tracking number or a case id).
 */
export function sameSubject(a: string, b: string): boolean {
  const [x, y] = [subjectKey(a), subjectKey(b)];
  if (x === y) return true;
  const ids = (k: string) => new Set(k.split(" ").filter((t) => t.length >= 5 && /\d/.test(t) && /\p{L}/u.test(t)));
  const [ix, iy] = [ids(x), ids(y)];
  return [...ix].some((t) => iy.has(t));
}

/** True when moving from `a` to `b` reaches or passes `target` (from either side). */
function crosses(a: number, b: number, target: number): boolean {
  if (a === target) return false;
  return Math.sign(a - target) !== Math.sign(b - target);
}

const round = (n: number) => Math.round(n * 1000) / 1000;
