/**
 * TaskRunner on its own (core/runtime/task-runner.ts), on a SQLite store with a scripted model: it
 * claims due tasks once per lease and never for a busy person; a turn's answer is queued once under
 * its delivery key, recorded in the conversation and the task released together; an activation a
 * crash interrupted is resumed by the next owner from its journal (the side effect is not repeated);
 * a failure fails the task with its reason; without a model a turn is told where to set one up; a
 * turn hands its messages to a task waiting for the person's reply; background words go to the
 * notification filter and recurring work waits for its next occurrence.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ModelClient } from "../../../core/model/index.js";
import { wakeupCheckpoint } from "../../../core/tasks/checkpoint.js";
import { defineTool, type ToolDefinition } from "../../../core/tools/index.js";
import { waitFor } from "../../helpers/wait.js";
import { flowFixture, LEASE_MS, type FlowFixture } from "./flows.js";
import { call, reply, runtimeNote, ScriptedModel, userTexts } from "./harness.js";

let f: FlowFixture;
beforeEach(async () => {
  f = await flowFixture();
});
afterEach(async () => {
  await f.close();
});

const none = new Set<string>();

/** Claims the task due first for `owner` and runs it to the end. */
async function runNext(owner = "A", runner = f.runner(owner)) {
  const claimed = await runner.claim(none);
  expect(claimed, "a task is due").not.toBeNull();
  await runner.run(claimed!);
  return claimed!.task;
}

describe("TaskRunner", () => {
  it("claims a due task once: a second owner finds nothing while the lease holds, and a busy person's task is neither due nor claimed", async () => {
    const turn = await f.say("hello");
    const a = f.runner("A");
    const b = f.runner("B");
    const busy = new Set<string>([f.person.id]);
    expect(await a.nextDueAt(busy)).toBeNull();
    expect(await a.claim(busy)).toBeNull();
    expect(await a.nextDueAt(none)).not.toBeNull();
    const claimed = await a.claim(none);
    expect(claimed?.task.id).toBe(turn.id);
    expect(a.keyOf(claimed!)).toBe(f.person.id);
    expect(a.describe(claimed!)).toEqual({ taskId: turn.id, kind: "turn", personId: f.person.id });
    expect(await b.claim(none)).toBeNull();
    // Once the lease ran out (the owner died), another owner may claim it.
    f.clock.advance(LEASE_MS + 1);
    expect((await b.claim(none))?.task.id).toBe(turn.id);
  });

  it("answers a turn: the reply queued once under reply:<task>:a1, recorded in the conversation, the task done", async () => {
    f.model.script = (messages) => reply(`you said ${userTexts(messages).join(" / ")}`);
    await f.say("one");
    await f.say("two");
    const task = await runNext();
    const rows = (await f.store.outbox.listOutbound(f.person.id)).items;
    expect(rows.map((r) => [r.deliveryKey, r.text])).toEqual([[`reply:${task.id}:a1`, "you said one / two"]]);
    expect(f.wakes.outbox).toBeGreaterThan(0);
    const conversation = await f.store.conversation.listMessagesBetween(f.person.id, 1, 10);
    expect(conversation.map((m) => [m.role, m.text])).toEqual([
      ["user", "one"],
      ["user", "two"],
      ["assistant", "you said one / two"],
    ]);
    expect((await f.store.tasks.getTask(task.id))!.state).toEqual({ status: "done", result: "you said one / two" });
    expect(f.model.requests).toHaveLength(1);
  });

  it("resumes an activation a crash interrupted: the next owner replays the journaled call without repeating it, and answers once", async () => {
    const paid: string[] = [];
    const pay = defineTool({
      name: "pay",
      description: "pays a bill",
      parameters: z.object({ bill: z.string() }),
      sideEffect: true,
      capability: "test.pay",
      async execute(args) {
        paid.push(args.bill);
        return { ok: true, content: `paid ${args.bill}` };
      },
    }) as unknown as ToolDefinition;
    const script = (messages: Parameters<ScriptedModel["script"]>[0]) => {
      const last = messages.at(-1);
      return last?.role === "tool" ? reply(`done: ${String(last.content)}`) : call("pay", { bill: "rent" });
    };
    // Process A calls the tool, then dies while its second model call is out (it never returns).
    let callsA = 0;
    const dying: ModelClient = { model: "scripted", complete: async (r) => (++callsA === 1 ? script(r.messages) : new Promise(() => undefined)) };
    const a = f.runner("A", { tools: [pay], model: dying });
    await f.say("pay the rent");
    const claimed = (await a.claim(none))!;
    // Its run never finishes (the model call never returns), like a process killed mid-activation.
    a.run(claimed).catch(() => undefined);
    await waitFor(() => callsA === 2, "process A's second model call");
    expect(paid).toEqual(["rent"]);

    f.clock.advance(LEASE_MS + 1);
    f.model.script = script;
    const task = await runNext("B", f.runner("B", { tools: [pay] }));
    expect(task.id).toBe(claimed.task.id);
    expect(paid).toEqual(["rent"]);
    // B's model saw the journaled result and never asked for the call again.
    expect(f.model.requests).toHaveLength(1);
    expect(f.model.requests[0]!.messages.some((m) => m.role === "tool" && String(m.content) === "paid rent")).toBe(true);
    expect(await f.outbox()).toEqual(["done: paid rent"]);
    expect((await f.store.tasks.getTask(task.id))!.state.status).toBe("done");
  });

  it("fails a task whose run throws, with the reason, instead of leaving it claimed", async () => {
    const runner = f.runner("A");
    const broken = f.runner("A", {
      tools: () => {
        throw new Error("the tool registry is broken");
      },
    });
    const turn = await f.say("hello");
    await broken.run((await broken.claim(none))!);
    expect((await f.store.tasks.getTask(turn.id))!.state).toEqual({ status: "failed", error: "the tool registry is broken" });
    expect(await f.outbox()).toEqual([]);
    // Not claimed any more: nothing is due, and nothing waits for the lease to run out.
    f.clock.advance(LEASE_MS + 1);
    expect(await runner.claim(none)).toBeNull();
  });

  it("without a model, tells a turn where to set one up and ends it; an asked-for reminder still arrives with its own note", async () => {
    const runner = f.runner("A", { model: null });
    const turn = await f.say("hello?");
    await runner.run((await runner.claim(none))!);
    const [told] = await f.outbox();
    expect(told).toContain("No model is configured yet");
    expect(told).toContain("http://127.0.0.1:1/setup");
    expect((await f.store.tasks.getTask(turn.id))!.state).toEqual({ status: "done", result: null });

    const reminder = await f.store.tasks.createTask({
      kind: "wakeup",
      personId: f.person.id,
      title: "Water the plants",
      checkpoint: wakeupCheckpoint({ note: "Water the plants", notify: "always", timing: { at: f.clock.now().toISOString() }, provenance: { tainted: false, fromPersonWords: true } }),
    });
    await runner.run((await runner.claim(none))!);
    expect((await f.outbox()).at(-1)).toContain("Water the plants");
    expect((await f.store.tasks.getTask(reminder.id))!.state).toEqual({ status: "done", result: null });
    expect(f.model.requests).toEqual([]);
  });

  it("hands a turn's messages to the task waiting for the person's reply, which then answers them directly", async () => {
    f.model.script = (messages) => {
      const answer = userTexts(messages).find((t) => t === "green");
      if (answer) return reply(`Invitations will be ${answer}`);
      return messages.at(-1)?.role === "tool" ? reply("Which colour should the invitations be?") : call("wait_for_reply", { question: "Which colour?" });
    };
    const asking = await f.store.tasks.createTask({
      kind: "wakeup",
      personId: f.person.id,
      title: "Plan the party",
      checkpoint: wakeupCheckpoint({ note: "plan the party", notify: "always", timing: { at: f.clock.now().toISOString() } }),
    });
    await runNext();
    expect((await f.store.tasks.getTask(asking.id))!.state).toEqual({ status: "waiting", wait: { kind: "reply" } });

    const turn = await f.say("green");
    const handed = await runNext();
    expect(handed.id).toBe(turn.id);
    expect((await f.store.tasks.getTask(turn.id))!.state).toEqual({ status: "done", result: `answered by task ${asking.id}, which waited for this reply` });
    expect(f.wakes.tasks).toBeGreaterThan(0);
    // The turn itself made no model call; the waiting task is due with the reply as its input.
    expect(f.model.requests).toHaveLength(2);
    const resumed = await runNext();
    expect(resumed.id).toBe(asking.id);
    expect((await f.store.outbox.listOutbound(f.person.id)).items.at(-1)).toMatchObject({ text: "Invitations will be green", deliveryKey: expect.stringMatching(new RegExp(`^reply:${asking.id}:a`)) });
    expect((await f.store.tasks.getTask(asking.id))!.state.status).toBe("done");
  });

  it("proposes a background activation's words to the notification filter under the occurrence's key; recurring work waits for its next occurrence", async () => {
    f.model.script = () => reply("Stretch your legs!");
    const daily = await f.store.tasks.createTask({
      kind: "wakeup",
      personId: f.person.id,
      title: "Stretch",
      checkpoint: wakeupCheckpoint({ note: "stretch", notify: "always", timing: { cron: "0 9 * * *", timezone: "UTC" }, provenance: { tainted: false, fromPersonWords: true } }),
      notBefore: f.clock.now(),
    });
    await runNext();
    const rows = (await f.store.outbox.listOutbound(f.person.id)).items;
    expect(rows.map((r) => r.text)).toEqual(["Stretch your legs!"]);
    expect(rows[0]!.deliveryKey).toMatch(new RegExp(`^notify:${daily.id}@`));
    expect(runtimeNote(f.model.requests[0]!.messages)).toContain("stretch");
    expect((await f.store.tasks.getTask(daily.id))!.state).toEqual({ status: "waiting", wait: { kind: "time", until: new Date("2026-12-02T09:00:00Z") } });
    // Nothing was said as a direct reply, and the conversation holds the notification only once delivered (not here).
    expect(rows.some((r) => r.deliveryKey.startsWith("reply:"))).toBe(false);
  });
});
