import { describe, expect, it } from "vitest";
import { asId } from "../../../core/ids.js";
import { inheritedOf, parseCheckpoint } from "../../../core/tasks/checkpoint.js";
import type { Json } from "../../../core/json.js";
import type { Task, TaskKind } from "../../../core/tasks/index.js";

const task = (kind: TaskKind, checkpoint: Json): Task => ({
  id: asId("task", "task_1"),
  personId: asId("person", "person_1"),
  goalId: null,
  kind,
  title: "t",
  plan: [],
  cursor: 0,
  checkpoint,
  lease: null,
  state: { status: "pending" },
  notBefore: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

describe("what an activation inherits from its task (issue 11)", () => {
  it("old checkpoints still parse: a wake-up without provenance or with the round-1 provenance is untainted at depth 1", () => {
    const bare = parseCheckpoint(task("wakeup", { note: "n", notify: "always", timing: { at: "2026-01-01T09:00:00+01:00" } }));
    expect(inheritedOf(bare, null)).toEqual({ tainted: false, source: null, depth: 1 });
    const round1 = parseCheckpoint(task("wakeup", { note: "n", notify: "always", timing: { at: "2026-01-01T09:00:00+01:00" }, provenance: { tainted: true, fromPersonWords: false } }));
    expect(inheritedOf(round1, null)).toEqual({ tainted: true, source: "outside content", depth: 1 });
    const checkin = parseCheckpoint(task("checkin", { cron: "0 9 * * *", timeZone: "UTC" }));
    expect(inheritedOf(checkin, null)).toEqual({ tainted: false, source: null, depth: 1 });
  });

  it("a tainted wake-up or a check-in of a tainted goal starts tainted with its source; depth comes from the job; a turn is the person's own", () => {
    const wake = parseCheckpoint(task("wakeup", { note: "n", notify: "always", timing: { at: "2026-01-01T09:00:00+01:00" }, provenance: { tainted: true, fromPersonWords: false, source: "https://evil.example/p", depth: 2 } }));
    expect(inheritedOf(wake, null)).toEqual({ tainted: true, source: "https://evil.example/p", depth: 2 });
    const checkin = parseCheckpoint(task("checkin", { cron: "0 9 * * *", timeZone: "UTC", provenance: { tainted: false, fromPersonWords: true, depth: 1 } }));
    expect(inheritedOf(checkin, { taint: { source: "webhook hook_1" } })).toEqual({ tainted: true, source: "goal made from webhook hook_1", depth: 1 });
    expect(inheritedOf(parseCheckpoint(task("turn", { fromSeq: 1, toSeq: 1 })), { taint: { source: "x" } })).toEqual({ tainted: false, source: null, depth: 0 });
  });
});
