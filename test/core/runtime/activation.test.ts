/**
 * runActivation on its own (core/runtime/activation.ts), on a SQLite store with a scripted model:
 * what the model is shown (the activation's view of the conversation, a background trigger as the
 * last system note, the tools of its kind), what it asks the runtime for (wait for a reply, an
 * approval, the denial breaker's pause), the gate it runs through (taint, session, recurrence), and
 * exactly-once calls through the journal: a resumed activation replays what it did and reports a
 * side effect a crash cut short as interrupted instead of repeating it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { runActivation, type ActivationDeps, type ActivationInput } from "../../../core/runtime/activation.js";
import type { Task } from "../../../core/tasks/index.js";
import { wakeupCheckpoint } from "../../../core/tasks/checkpoint.js";
import type { ExecuteTool } from "../../../core/tool-loop/index.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../../../core/tools/index.js";
import { waitFor } from "../../helpers/wait.js";
import { flowFixture, LEASE_MS, tokens, type FlowFixture } from "./flows.js";
import { call, reply, userTexts } from "./harness.js";

let f: FlowFixture;
beforeEach(async () => {
  f = await flowFixture();
});
afterEach(async () => {
  await f.close();
});

/** A tool recording its calls; `answer` decides each result (default ok). */
function recorder(name: string, options: { sideEffect?: boolean; backgroundOnly?: boolean; answer?: () => Promise<ToolResult> } = {}) {
  const calls: string[] = [];
  const tool = defineTool({
    name,
    description: `${name} something`,
    parameters: z.object({ what: z.string() }),
    sideEffect: options.sideEffect ?? true,
    capability: `test.${name}`,
    ...(options.backgroundOnly && { backgroundOnly: true }),
    async execute(args) {
      calls.push(args.what);
      return options.answer ? options.answer() : { ok: true, content: `${name}: ${args.what}` };
    },
  }) as unknown as ToolDefinition;
  return { tool, calls };
}

const deps = (over: Partial<ActivationDeps> = {}): ActivationDeps => ({ store: f.store, model: f.model, tokens, clock: f.clock, budget: 16_000, maxSteps: 8, tools: [], ...over });

async function claimedWakeup(): Promise<Task> {
  const task = await f.store.tasks.createTask({ kind: "wakeup", personId: f.person.id, title: "Check the garden", checkpoint: wakeupCheckpoint({ note: "check the garden", notify: "always", timing: { at: f.clock.now().toISOString() } }) });
  return (await f.store.tasks.claimTask({ taskId: task.id, owner: "A", now: f.clock.now(), leaseMs: LEASE_MS }))!;
}

function input(task: Task, over: Partial<ActivationInput> = {}): ActivationInput {
  return {
    task,
    person: f.person,
    goal: null,
    runtime: { activation: 1, resumes: 0, open: true, round: 0, sessionId: "ses_test" },
    trigger: { kind: "wakeup", dueAt: f.clock.now().toISOString() },
    triggerText: "a wake-up you scheduled: check the garden",
    observations: [],
    view: { horizonSeq: Number.MAX_SAFE_INTEGER, answer: null, hideUserFrom: null },
    originMessageId: null,
    ...over,
  };
}

const toolNames = (i = 0) => (f.model.requests[i]!.tools ?? []).map((t) => ("function" in t ? t.function.name : t.custom.name));

describe("runActivation", () => {
  it("shows a turn its own messages up to its horizon, without background-only tools or wait_for_event", async () => {
    const background = recorder("propose", { backgroundOnly: true });
    const plain = recorder("look");
    for (const text of ["first", "second", "third, written later"]) await f.say(text);
    const [turn] = (await f.store.tasks.listTasks({ personId: f.person.id, kind: ["turn"] })).items;
    const claimed = (await f.store.tasks.claimTask({ taskId: turn!.id, owner: "A", now: f.clock.now(), leaseMs: LEASE_MS }))!;
    f.model.script = () => reply("hi");
    const outcome = await runActivation(deps({ tools: [background.tool, plain.tool] }), input(claimed, { trigger: null, triggerText: null, view: { horizonSeq: 2, answer: { fromSeq: 1, toSeq: 2 }, hideUserFrom: null } }));
    expect(outcome.result).toMatchObject({ kind: "reply", text: "hi", tainted: false });
    expect(userTexts(f.model.requests[0]!.messages)).toEqual(["first", "second"]);
    expect(toolNames()).toContain("look");
    expect(toolNames()).toContain("wait_for_reply");
    expect(toolNames()).not.toContain("propose");
    expect(toolNames()).not.toContain("wait_for_event");
    expect(f.model.requests[0]!.messages.some((m) => m.role === "system" && String(m.content).startsWith("Runtime:"))).toBe(false);
  });

  it("tells background work its trigger as the last system note, offers it wait_for_event, and records a wait for the person's reply", async () => {
    const hooks: string[] = [];
    const background = recorder("propose", { backgroundOnly: true });
    f.model.script = (messages) => (messages.at(-1)?.role === "tool" ? reply("Is the gate locked?") : call("wait_for_reply", { question: "Is the gate locked?" }));
    const task = await claimedWakeup();
    const outcome = await runActivation(
      deps({ tools: [background.tool], createHook: async (_p, _t, description) => (hooks.push(description), "hook_1" as never) }),
      input(task),
    );
    const first = f.model.requests[0]!.messages;
    expect(first.at(-1)).toEqual({ role: "system", content: "Runtime: a wake-up you scheduled: check the garden. This is an automatic trigger, not a message from the person." });
    expect(toolNames()).toEqual(expect.arrayContaining(["propose", "wait_for_reply", "wait_for_event"]));
    expect(outcome.requests).toEqual({ waitForReply: "Is the gate locked?", waitForEvent: null, approvalId: null, pause: null });
    expect(outcome.result).toMatchObject({ kind: "reply", text: "Is the gate locked?" });
  });

  it("runs every call through the gate with the activation's taint, session and recurrence, and takes Sentinel's approval and pause requests from it", async () => {
    const send = recorder("send");
    const seen: unknown[] = [];
    let refusal: ToolResult = { ok: false, code: "approval_required", error: "asked the person", data: { approvalId: "apr_1" } };
    const gate = (inner: ExecuteTool, activation: Parameters<NonNullable<ActivationDeps["gate"]>>[1]): ExecuteTool => {
      seen.push(activation);
      return async () => refusal;
    };
    f.model.script = (messages) => (messages.at(-1)?.role === "tool" ? reply("waiting for you") : call("send", { what: "a letter" }));
    const task = await claimedWakeup();
    const asked = await runActivation(deps({ tools: [send.tool], gate }), input(task, { inherited: { tainted: true, source: "a web page", depth: 2 }, recurring: true }));
    expect(seen).toEqual([{ taskId: task.id, tainted: true, taintSource: "a web page", chainDepth: 2, sessionId: "ses_test", denialsFrom: null, recurring: true }]);
    expect(send.calls).toEqual([]);
    expect(asked.requests.approvalId).toBe("apr_1");
    expect(asked.result.tainted).toBe(true);

    refusal = { ok: false, code: "approvals_paused", error: "paused", data: { pauseTask: "person" } };
    const paused = await runActivation(deps({ tools: [send.tool], gate }), input(task, { runtime: { activation: 2, resumes: 0, open: true, round: 0, sessionId: "ses_2", pausedAt: "2026-12-01T08:00:00.000Z" } }));
    expect(paused.requests).toMatchObject({ approvalId: null, pause: "person" });
    expect(seen.at(-1)).toMatchObject({ tainted: false, taintSource: null, chainDepth: 0, denialsFrom: new Date("2026-12-01T08:00:00.000Z"), recurring: false });
  });

  it("journals each call once: a resumed activation replays a finished call and reports one a crash cut short as interrupted, never running either again", async () => {
    const pay = recorder("pay");
    let hang = false;
    const charge = recorder("charge", { answer: () => (hang ? new Promise<never>(() => undefined) : Promise.resolve({ ok: true, content: "charged" })) });
    f.model.script = (messages) => {
      const results = messages.filter((m) => m.role === "tool").length;
      if (results === 0) return call("pay", { what: "rent" }, "c1");
      if (results === 1) return call("charge", { what: "card" }, "c2");
      return reply(`results: ${messages.filter((m) => m.role === "tool").map((m) => String(m.content)).join(" | ")}`);
    };
    const task = await claimedWakeup();
    // The first run dies inside `charge` (it never returns), after `pay` finished.
    hang = true;
    runActivation(deps({ tools: [pay.tool, charge.tool] }), input(task)).catch(() => undefined);
    await waitFor(() => charge.calls.length === 1, "the first run to start the charge");
    expect(pay.calls).toEqual(["rent"]);
    hang = false;
    const resumed = await runActivation(deps({ tools: [pay.tool, charge.tool] }), input(task, { runtime: { activation: 1, resumes: 1, open: true, round: 0, sessionId: "ses_test" } }));
    expect(pay.calls).toEqual(["rent"]);
    expect(charge.calls).toEqual(["card"]);
    expect(resumed.result.kind).toBe("reply");
    const text = resumed.result.kind === "reply" ? resumed.result.text : "";
    expect(text).toContain("pay: rent");
    expect(text).toContain('"error":"interrupted"');
    const journal = await f.store.journal.listJournal(task.id);
    expect(journal.filter((e) => e.tool === "pay")).toHaveLength(1);
    expect(journal.filter((e) => e.tool === "charge").map((e) => e.outcome)).toEqual([null]);
  });
});
