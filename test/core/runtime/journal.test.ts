import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { systemClock } from "../../../core/clock.js";
import { interruptedOutcome, journalHistory, journaled } from "../../../core/tasks/journal.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Store } from "../../../core/storage/ports.js";
import type { Task } from "../../../core/tasks/index.js";
import { defineTool, type ToolContext, type ToolDefinition } from "../../../core/tools/tool.js";

describe("tool-call journal: exactly-once side effects", () => {
  let dir: string;
  let store: Store;
  let task: Task;
  let effects: string[];
  let tool: ToolDefinition;
  let reader: ToolDefinition;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "familiar-journal-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    const person = await store.persons.createPerson({ displayName: "Ana" });
    task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
    effects = [];
    tool = defineTool({
      name: "pay",
      description: "pays",
      parameters: z.object({ amount: z.number() }),
      sideEffect: true,
      capability: "payments.send",
      async execute(args, ctx) {
        effects.push(`${ctx.idempotencyKey}:${args.amount}`);
        return { ok: true, content: `paid ${args.amount}` };
      },
    });
    reader = defineTool({
      name: "look",
      description: "reads",
      parameters: z.object({}),
      sideEffect: false,
      capability: "web.fetch",
      async execute() {
        effects.push("read");
        return { ok: true, content: "page", untrusted: { source: "https://example.com" } };
      },
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ctx = (key: string): ToolContext => ({ personId: task.personId, taskId: task.id, originMessageId: null, idempotencyKey: key, now: new Date(), signal: new AbortController().signal });

  it("records intent and outcome, and never runs the same key twice", async () => {
    const run = journaled({ store, clock: systemClock });
    expect(await run(tool, { amount: 5 }, ctx(`${task.id}:a1r0:1:0`))).toEqual({ ok: true, content: "paid 5" });
    expect(await run(tool, { amount: 5 }, ctx(`${task.id}:a1r0:1:0`))).toMatchObject({ ok: true, content: "paid 5" });
    expect(effects).toEqual([`${task.id}:a1r0:1:0:5`]);
    const [entry] = await store.journal.listJournal(task.id);
    expect(entry).toMatchObject({ tool: "pay", sideEffect: true, args: { amount: 5 } });
    expect(entry!.outcome?.ok).toBe(true);
  });

  it("reports a side-effecting call whose outcome was lost as interrupted, and repeats a read-only one", async () => {
    await store.journal.recordIntent({ taskId: task.id, step: 1, idempotencyKey: `${task.id}:a1r0:1:0`, tool: "pay", args: { amount: 5 }, sideEffect: true });
    await store.journal.recordIntent({ taskId: task.id, step: 1, idempotencyKey: `${task.id}:a1r0:1:1`, tool: "look", args: {}, sideEffect: false });
    const run = journaled({ store, clock: systemClock });
    expect(await run(tool, { amount: 5 }, ctx(`${task.id}:a1r0:1:0`))).toEqual({ ok: false, code: "interrupted", error: interruptedOutcome });
    expect(await run(reader, {}, ctx(`${task.id}:a1r0:1:1`))).toMatchObject({ ok: true, content: "page" });
    expect(effects).toEqual(["read"]);
  });

  it("rebuilds an interrupted activation's history from the journal", async () => {
    const run = journaled({ store, clock: systemClock });
    await run(tool, { amount: 7 }, ctx(`${task.id}:a2r0:1:0`));
    await store.journal.recordIntent({ taskId: task.id, step: 2, idempotencyKey: `${task.id}:a2r0:2:0`, tool: "pay", args: { amount: 8 }, sideEffect: true });
    await store.journal.recordIntent({ taskId: task.id, step: 2, idempotencyKey: `${task.id}:a2r0:2:1`, tool: "look", args: {}, sideEffect: false });
    const entries = await store.journal.listJournal(task.id);
    const rebuilt = await journalHistory(entries, `${task.id}:a2`, async () => ({ ok: true, content: "fresh page", untrusted: { source: "https://example.com" } }));
    const results = rebuilt.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results[0]).toBe("paid 7");
    expect(results[1]).toContain("interrupted, outcome unknown");
    expect(results[2]).toMatch(/<untrusted nonce="[0-9a-f]{32}" source="https:\/\/example.com">\nfresh page\n<\/untrusted nonce="[0-9a-f]{32}">/);
    expect(rebuilt.tainted).toBe(true);
    // One assistant message per step with all of its calls, followed by their results in order.
    expect(rebuilt.messages.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool", "tool"]);
    const step2 = rebuilt.messages[2];
    expect(step2?.role === "assistant" ? step2.tool_calls?.map((c) => (c.type === "function" ? c.function.name : "")) : null).toEqual(["pay", "look"]);
    // Other activations' entries are not replayed.
    expect((await journalHistory(entries, `${task.id}:a1`, async () => ({ ok: true, content: "" }))).messages).toEqual([]);
  });
});
