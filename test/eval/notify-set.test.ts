import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluateSet, figures, parseEvalSet } from "./notify-eval.js";

/**
 * The CI floor of issue 12: on the project's own labelled set, rules only (no model), precision of
 * "send" stays at or above 0.95 and must-send recall at 1.0. Also checks that the set keeps its
 * promised coverage and that the eval reports unreadable lines instead of skipping them.
 */
const set = readFileSync(join(import.meta.dirname, "notify-set.jsonl"), "utf8");

/**
 * Also held to the floor: `notify-blind.jsonl`, written from the issue text alone before its author
 * read the filter (an outsider's wording, as the independent check uses), and `notify-probes.jsonl`,
 * phrasings written afterwards to probe the deterministic checks (both directions: must drop, must
 * not drop).
 */
/**
 * And, since issue 18, two sets written from that description: `notify-heldout.jsonl` (127
 * lines, written before the rules changed: precision 52.0% then) and `notify-fresh.jsonl` (66 lines,
 * written after the change and scored once before any tuning: 92.3%, must-send recall 91.7%; its
 * floor is 0.85 — it is kept as the outsider's check, not tuned to 100%).
 */
const floorSets: [string, number][] = [
  ["notify-set.jsonl", 0.95],
  ["notify-blind.jsonl", 0.95],
  ["notify-probes.jsonl", 0.95],
  ["notify-heldout.jsonl", 0.95],
  ["notify-fresh.jsonl", 0.85],
];

describe("notification filter on the labelled sets (rules only)", () => {
  it.each(floorSets)("keeps precision of send and must-send recall = 1.0 on %s (precision floor %s)", async (file, floor) => {
    const { lines, errors } = parseEvalSet(readFileSync(join(import.meta.dirname, file), "utf8"));
    expect(errors).toEqual([]);
    expect(lines.length).toBeGreaterThan(50);
    const results = await evaluateSet(lines, null);
    const f = figures(results);
    const misses = results.filter((r) => r.got !== r.expected).map((r) => `${r.id}: expected ${r.expected}, got ${r.got} (${r.rule})`);
    expect(f.precisionSend, misses.join("\n")).toBeGreaterThanOrEqual(floor);
    expect(f.mustSendRecall, misses.join("\n")).toBe(1);
  }, 120_000);

  it("covers every origin, both hemispheres' DST days, quiet-hour boundaries, budget edges and translated duplicates", () => {
    const { lines } = parseEvalSet(set);
    expect(lines.length).toBeGreaterThanOrEqual(100);
    const origins = new Set(lines.map((l) => l.candidate.origin));
    expect([...origins].sort()).toEqual(["approval", "checkin", "digest-item", "heartbeat", "monitor", "question", "reminder"]);
    const zones = new Set(lines.filter((l) => l.id.includes("dst")).map((l) => l.person.timezone));
    expect(zones.has("Europe/Berlin") && zones.has("America/New_York")).toBe(true);
    expect(zones.has("Australia/Sydney") && zones.has("Pacific/Auckland")).toBe(true);
    for (const part of ["quiet-start", "quiet-end", "budget-", "translated", "reworded", "fired-twice"]) expect(lines.some((l) => l.id.includes(part)), part).toBe(true);
  });

  it("reports an unreadable line with its id and error, never skipping it", () => {
    const { lines, errors } = parseEvalSet(`${set.split("\n")[0]}\n{"id":"bad-1","now":"yesterday"}\nnot json\n`);
    expect(lines).toHaveLength(1);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ line: 2, id: "bad-1" });
    expect(errors[0]!.error).toMatch(/now/);
    expect(errors[1]).toMatchObject({ line: 3, id: null });
  });
});
