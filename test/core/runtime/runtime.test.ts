import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { z } from "zod";
import { wakeupCheckpoint } from "../../../core/tasks/checkpoint.js";
import { DueLoop } from "../../../core/scheduling/due-loop.js";
import { defineTool, type ToolDefinition } from "../../../core/tools/tool.js";
import { call, reply, RuntimeHarness, runtimeNote, ScriptedModel, userTexts, type Proc } from "./harness.js";

let h: RuntimeHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** Labels like `#a` in the person's messages that this activation answers: the user messages after the last assistant message. */
function asked(messages: Parameters<typeof userTexts>[0]): string[] {
  const out: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === "user"; i--) out.unshift(...(String(messages[i]!.content).match(/#\w+/g) ?? []));
  return out;
}

async function personOf(proc: Proc, user: string) {
  return (await proc.store.persons.findIdentity("local", user))!.personId;
}

describe("runtime: turns answer every message", () => {
  it("answers a message that arrives while a wake-up activation of the same person runs", async () => {
    const model = new ScriptedModel((messages) => {
      const note = runtimeNote(messages);
      if (note) return reply("Time to stretch!");
      return reply(`answer ${asked(messages).join(" ")}`);
    });
    h = new RuntimeHarness(model);
    const proc = await h.start();
    await h.say(proc, "ana", "hello #a");
    await h.until(proc, () => proc.channel.texts().includes("answer #a"), "the first answer");
    const personId = await personOf(proc, "ana");
    await proc.store.tasks.createTask({ kind: "wakeup", personId, title: "stretch", checkpoint: wakeupCheckpoint({ note: "stretch", notify: "always", timing: { at: h.clock.now().toISOString() } }) });
    model.hold();
    proc.familiar.taskLoop.poke();
    await h.until(proc, () => model.requests.length === 2, "the wake-up's model call");
    // While the wake-up activation waits for the model, the person writes.
    await h.say(proc, "ana", "are you there? #b");
    model.release();
    await h.until(proc, () => proc.channel.texts().includes("answer #b"), "the answer to the message sent during the wake-up");
    expect(proc.channel.texts()).toEqual(["answer #a", "Time to stretch!", "answer #b"]);
  });

  it("answers several quick messages together, and none is left unanswered", async () => {
    const model = new ScriptedModel((messages) => reply(`answer ${asked(messages).join(" ")}`));
    h = new RuntimeHarness(model);
    const proc = await h.start();
    model.hold();
    await h.say(proc, "ana", "one #a");
    await h.until(proc, () => model.requests.length === 1, "the first turn's call");
    await h.say(proc, "ana", "two #b");
    await h.say(proc, "ana", "three #c");
    model.release();
    await h.settle(proc);
    expect(proc.channel.texts()).toEqual(["answer #a", "answer #b #c"]);
  });

  it("a turn resumed after a crash is bound to its own messages; every payment happens once", async () => {
    const paid: string[] = [];
    const pay = defineTool({
      name: "pay",
      description: "pays",
      parameters: z.object({ label: z.string() }),
      sideEffect: true,
      capability: "test.pay",
      async execute(args) {
        paid.push(args.label);
        return { ok: true, content: `paid ${args.label}` };
      },
    }) as unknown as ToolDefinition;
    const model = new ScriptedModel((messages) => {
      const last = messages.at(-1);
      if (last?.role === "tool") return reply(`done ${String(last.content)}`);
      const labels = asked(messages);
      return labels.length ? call("pay", { label: labels.join("+") }) : reply("nothing to pay");
    });
    h = new RuntimeHarness(model, [pay]);
    const first = await h.start();
    model.hold();
    await h.say(first, "ana", "pay #a");
    await h.until(first, () => model.requests.length === 1, "the turn's model call");
    // The process dies mid model call; the person writes again while it is down.
    await first.kill();
    const second = await h.start();
    await h.say(second, "ana", "pay #b");
    model.release();
    await h.settle(second);
    expect(paid.sort()).toEqual(["#a", "#b"]);
    expect(second.channel.texts()).toEqual(["done paid #a", "done paid #b"]);
    // The turn answering #a (its first run and its resumption) never saw the later message.
    const turnA = model.requests.filter((r) => asked(r.messages).join() === "#a");
    expect(turnA.length).toBeGreaterThanOrEqual(2);
    for (const r of turnA) expect(userTexts(r.messages)).not.toContain("pay #b");
  });
});

describe("runtime: wake-ups", () => {
  async function wakeupAt(proc: Proc, user: string, dueAt: Date, timing: { at: string } | { cron: string; timezone: string }) {
    const personId = await personOf(proc, user);
    return proc.store.tasks.createTask({ kind: "wakeup", personId, title: "stretch", notBefore: dueAt, checkpoint: wakeupCheckpoint({ note: "stretch", notify: "always", timing }) });
  }

  it("runs once per occurrence whatever makes it due (start-up, stray pokes, a second process), then waits for the next", async () => {
    const model = new ScriptedModel((messages) => (runtimeNote(messages) ? reply(`Stretch (${/due ([^)]*)\)/.exec(runtimeNote(messages)!)?.[1]})`) : reply("ok")));
    h = new RuntimeHarness(model);
    const first = await h.start();
    await h.say(first, "ana", "hi");
    await h.settle(first);
    const due = new Date(h.clock.now().getTime() + 60_000);
    const task = await wakeupAt(first, "ana", new Date(due.getTime()), { cron: "* * * * *", timezone: "UTC" });
    await first.stop();
    // Down while it fell due; another wake-up is due at the restart too.
    h.clock.set(new Date(due.getTime() + 90_000));
    const second = await h.start();
    await wakeupAt(second, "ana", h.clock.now(), { at: h.clock.now().toISOString() });
    for (let i = 0; i < 5; i++) second.familiar.taskLoop.poke();
    await h.settle(second);
    const stretches = second.channel.texts().filter((t) => t.startsWith("Stretch"));
    expect(stretches).toHaveLength(2);
    const after = (await second.store.tasks.getTask(task.id))!;
    expect(after.state).toMatchObject({ status: "waiting", wait: { kind: "time" } });
    const next = after.state.status === "waiting" && after.state.wait.kind === "time" ? after.state.wait.until : null;
    expect(next!.getTime()).toBeGreaterThan(h.clock.now().getTime());
  });

  it("never runs early, runs at its time, is held while paused and runs once after /resume", async () => {
    const model = new ScriptedModel((messages) => (runtimeNote(messages) ? reply("Stretch now") : reply("ok")));
    h = new RuntimeHarness(model);
    const proc = await h.start();
    await h.say(proc, "ana", "hi");
    await h.settle(proc);
    const due = new Date(h.clock.now().getTime() + 10 * 60_000);
    await wakeupAt(proc, "ana", due, { at: due.toISOString() });
    await h.settle(proc);
    expect(proc.channel.texts()).not.toContain("Stretch now");
    await h.say(proc, "ana", "/pause");
    h.clock.set(due);
    await h.settle(proc);
    expect(proc.channel.texts()).not.toContain("Stretch now");
    await h.say(proc, "ana", "/resume");
    await h.settle(proc);
    expect(proc.channel.texts().filter((t) => t === "Stretch now")).toHaveLength(1);
  });

  it("skips an occurrence missed beyond the grace window, once, and audits it", async () => {
    const model = new ScriptedModel((messages) => (runtimeNote(messages) ? reply("Stretch now") : reply("ok")));
    h = new RuntimeHarness(model);
    const first = await h.start({ graceMs: 60_000 });
    await h.say(first, "ana", "hi");
    await h.settle(first);
    const due = new Date(h.clock.now().getTime() + 60_000);
    const task = await wakeupAt(first, "ana", due, { at: due.toISOString() });
    await first.stop();
    h.clock.set(new Date(due.getTime() + 5 * 60_000));
    const second = await h.start({ graceMs: 60_000 });
    await h.settle(second);
    expect(second.channel.texts()).not.toContain("Stretch now");
    expect((await second.store.tasks.getTask(task.id))!.state).toMatchObject({ status: "cancelled" });
    const audit = await second.store.audit.listAudit(task.personId, { kinds: ["task.skipped"] });
    expect(audit.items).toHaveLength(1);
  });
});

describe("runtime: delivery and identities", () => {
  it("clears an unreachable mark when the person writes again, and replies where they last wrote from", async () => {
    const model = new ScriptedModel(() => reply("hello again"));
    h = new RuntimeHarness(model);
    const proc = await h.start();
    await h.say(proc, "ana", "hi");
    await h.settle(proc);
    await proc.store.persons.setIdentityUnreachable("local", "ana", "gone", h.clock.now());
    await proc.familiar.handleInbound({ kind: "message", channel: "local", updateId: "u2", accountId: "ana", address: "ana-phone", text: "back", at: h.clock.now() });
    await h.settle(proc);
    const identity = await proc.store.persons.findIdentity("local", "ana");
    expect(identity).toMatchObject({ unreachable: null, address: "ana-phone" });
    expect(proc.channel.sent.at(-1)).toMatchObject({ address: "ana-phone", text: "hello again" });
  });
});

describe("DueLoop", () => {
  it("logs a failing scan and tries again on its timer; the process does not die", async () => {
    let calls = 0;
    const ran: number[] = [];
    const errors: unknown[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => void errors.push(line) });
    const loop = new DueLoop<number>(
      {
        nextDueAt: async () => new Date(0),
        claim: async () => {
          calls++;
          if (calls === 1) throw new Error("store unavailable");
          return calls === 2 ? 7 : null;
        },
        keyOf: () => "k",
        run: async (n) => void ran.push(n),
        describe: () => ({}),
      },
      { name: "test", clock: { now: () => new Date(0) }, logger, maxInFlight: 1, recheckMs: 20 },
    );
    loop.start();
    const end = Date.now() + 5_000;
    while (ran.length === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 20));
      loop.poke();
    }
    await loop.stop(100);
    expect(ran).toEqual([7]);
    expect(errors.join("")).toContain("store unavailable");
  });
});

describe("runtime: a step with several tool calls across a crash", () => {
  it("calls a crash kept from starting are reported as not run (and made again), the one cut short as unknown; none runs twice", async () => {
    const started: string[] = [];
    let stall: (() => void) | null = null;
    const pay = defineTool({
      name: "pay",
      description: "pays",
      parameters: z.object({ label: z.string() }),
      sideEffect: true,
      capability: "test.pay",
      async execute(args) {
        started.push(args.label);
        // The first payment never returns in the first process: it is killed meanwhile.
        if (args.label === "#a" && stall === null) await new Promise<void>((r) => (stall = r));
        return { ok: true, content: `paid ${args.label}` };
      },
    }) as unknown as ToolDefinition;
    const model = new ScriptedModel((messages) => {
      const last = messages.at(-1);
      if (last?.role === "tool") {
        // After the resume: make again what did not run; then sum up.
        const results = messages.slice(messages.findLastIndex((m) => m.role !== "tool") + 1).map((m) => String(m.content));
        const notRun = messages
          .filter((m) => m.role === "tool" && String(m.content).includes("not run"))
          .map((m) => (m.role === "tool" ? m.tool_call_id : ""))
          .flatMap((id) => messages.flatMap((m) => (m.role === "assistant" && m.tool_calls ? m.tool_calls : [])).filter((c) => c.id === id))
          .filter((c) => c.type === "function" && !messages.some((m) => m.role === "tool" && String(m.content) === `paid ${(JSON.parse(c.function.arguments) as { label: string }).label}`));
        if (notRun.length > 0 && notRun[0]!.type === "function") return call("pay", JSON.parse(notRun[0]!.function.arguments) as Record<string, unknown>);
        return reply(`done: ${results.join(" | ")}`);
      }
      return { content: null, toolCalls: ["#a", "#b", "#c"].map((label, i) => ({ id: `c${i}`, name: "pay", arguments: JSON.stringify({ label }) })), finishReason: "tool_calls", usage: null };
    });
    h = new RuntimeHarness(model, [pay]);
    const first = await h.start();
    await h.say(first, "ana", "pay #a #b #c");
    await h.until(first, () => started.includes("#a"), "the first payment to start");
    await first.kill();
    const second = await h.start();
    await h.settle(second);
    // #a may or may not have happened (the person is told), #b and #c never started and were made again, once each.
    expect(started.filter((l) => l === "#b")).toEqual(["#b"]);
    expect(started.filter((l) => l === "#c")).toEqual(["#c"]);
    expect(started.filter((l) => l === "#a")).toEqual(["#a"]);
    const resumed = model.requests.find((r) => r.messages.some((m) => m.role === "tool" && String(m.content).includes("not run")));
    expect(resumed).toBeDefined();
    expect(resumed!.messages.filter((m) => m.role === "tool").map((m) => (JSON.parse(String(m.content)) as { error: string }).error)).toEqual(["interrupted", "not_run", "not_run"]);
  });
});

describe("runtime: approvals across a crash", () => {
  it("a crash between storing an approval request and queueing its card: the card goes out after the restart, once, with its buttons", async () => {
    const sent: unknown[] = [];
    const email = defineTool({
      name: "send_email",
      description: "Sends an email.",
      parameters: z.object({ to: z.string(), text: z.string() }),
      sideEffect: true,
      capability: "email.send",
      policy: { capability: "email.send", access: "write", destinationArgs: ["to"], exfiltrationArgs: ["text"] },
      execute: async (args) => (sent.push(args), { ok: true, content: "sent" }),
    });
    const model = new ScriptedModel((messages) => (messages.at(-1)?.role === "tool" ? reply("I asked you first.") : call("send_email", { to: "eve@example.com", text: "hello" })));
    h = new RuntimeHarness(model, [email]);
    // The first process dies right after the request is stored: queueing the card never happens.
    let dieAtCard = true;
    const first = await h.start({
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, prop, receiver) {
            const value: unknown = Reflect.get(target, prop, receiver);
            if (prop !== "outbox") return value;
            return new Proxy(target.outbox, {
              get(outbox, name, r) {
                const fn: unknown = Reflect.get(outbox, name, r);
                if (name !== "enqueueOutbound" || typeof fn !== "function") return fn;
                return (input: { deliveryKey: string }, now: Date) => {
                  if (dieAtCard && input.deliveryKey.startsWith("approval:")) throw new Error("killed before the card was queued");
                  return Reflect.apply(fn, outbox, [input, now]);
                };
              },
            });
          },
        }),
    });
    await h.say(first, "ana", "email eve hello");
    const pid = await personOf(first, "ana");
    await h.until(first, async () => (await first.store.approvals.listPendingApprovals(pid)).length === 1, "the approval request");
    await first.kill();
    dieAtCard = false;
    expect(first.channel.sent.some((s) => s.key.includes("approval:"))).toBe(false);

    const second = await h.start();
    const [request] = await second.store.approvals.listPendingApprovals(pid);
    await h.until(second, () => second.channel.sent.some((s) => s.key.includes(`approval:${request!.id}`)), "the card after the restart");
    const choices = await second.store.sentinel.listApprovalChoices(request!.id);
    expect(choices.length).toBeGreaterThan(0);
    expect(choices.every((c) => c.outboxId !== null)).toBe(true);
    expect(sent).toEqual([]);
    // A second restart queues nothing new: the card is sent once.
    await second.kill();
    const third = await h.start();
    await h.settle(third);
    expect(third.channel.sent.filter((s) => s.key.includes("approval:")).length).toBe(0);
    expect(await third.store.sentinel.listApprovalChoices(request!.id)).toEqual(choices);
  });
});
