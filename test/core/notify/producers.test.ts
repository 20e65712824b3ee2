import { describe, expect, it } from "vitest";
import { asId } from "../../../core/ids.js";
import { backgroundCandidates } from "../../../core/notify/producers.js";
import { proposeMessageToolName } from "../../../core/notify/tools.js";
import type { JournalEntry, Task } from "../../../core/tasks/index.js";

/** How candidates from background activations are classified (issue 18 item 1). */

const task = { id: asId("task", "task_r"), personId: asId("person", "p1") } as unknown as Task;
const dueAt = new Date("2026-06-10T17:00:00Z");
const asked = { note: "pay invoice INV-2231", notify: "always" as const, provenance: { tainted: false, fromPersonWords: true } };
const proposal = (text: string, i: number): JournalEntry =>
  ({ idempotencyKey: `task_r:a1r0:${i}`, tool: proposeMessageToolName, args: { text }, outcome: { ok: true }, intentAt: new Date(dueAt.getTime() + i) }) as unknown as JournalEntry;
const run = (text: string | null, entries: JournalEntry[] = [], spec: typeof asked | null = asked) =>
  backgroundCandidates({ journal: { listJournal: async () => entries } } as never, { task, activation: 1, text, waitsFor: { approval: false, reply: null }, tainted: false, spec, dueAt, goal: null });

describe("candidates of an asked-for wake-up", () => {
  it("are reminders keyed by their occurrence", async () => {
    const [c] = await run("Reminder: pay invoice INV-2231.");
    expect(c).toMatchObject({ origin: "reminder", notify: "always", text: "Reminder: pay invoice INV-2231.", occurrenceKey: `task_r@${dueAt.toISOString()}`, provenance: { fromPersonWords: true, tainted: false } });
  });

  it("fall back to the reminder's own note when the model's answer says nothing (empty, a marker, a silence token)", async () => {
    for (const t of ["[SILENT]", "NOTHING_TO_REPORT", " ", "<no_reply>"]) {
      expect((await run(t)).map((c) => [c.text, c.origin, c.occurrenceKey]), t).toEqual([["Reminder: pay invoice INV-2231", "reminder", `task_r@${dueAt.toISOString()}`]]);
    }
    // Proposals that say nothing give way too; one that says something is the reminder.
    expect((await run("NOTHING_TO_REPORT", [proposal("[SILENT]", 0)])).map((c) => c.text)).toEqual(["Reminder: pay invoice INV-2231"]);
    expect((await run("NOTHING_TO_REPORT", [proposal("[SILENT]", 0), proposal("Pay INV-2231 today (€120).", 1)])).map((c) => c.text)).toEqual(["Pay INV-2231 today (€120)."]);
  });

  it("leave a check-in's empty answer empty (the filter drops it)", async () => {
    expect((await run("[SILENT]", [], null)).map((c) => [c.text, c.origin])).toEqual([["[SILENT]", "checkin"]]);
  });
});
