/**
 * ProactiveFlow on its own (core/runtime/proactive.ts), with the real Notifier on a SQLite store: a
 * finished background activation's words become candidates of the notification filter under keys
 * that follow the occurrence (`notify:<task>@<due>`, a round's `p<n>`, a second proposal's `:1`), so
 * an occurrence run again after a crash says its piece once; the model's proposals in the journal
 * are read only when the activation may have made some; a tainted activation's links are made
 * inert; without a model an asked-for reminder still arrives with its own note, and nothing else does.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { proposeMessageToolName } from "../../../core/notify/tools.js";
import { ProactiveFlow } from "../../../core/runtime/index.js";
import type { Task } from "../../../core/tasks/index.js";
import { checkinCheckpoint, parseCheckpoint, wakeupCheckpoint, type Trigger } from "../../../core/tasks/checkpoint.js";
import { flowFixture, type FlowFixture } from "./flows.js";

let f: FlowFixture;
beforeEach(async () => {
  f = await flowFixture();
});
afterEach(async () => {
  await f.close();
});

const dueAt = new Date("2026-12-01T09:00:00Z");
const occurrence: Trigger = { kind: "wakeup", dueAt: dueAt.toISOString() };

/** A wake-up the person asked for in their own words ("remind me …"). */
async function reminderTask(): Promise<Task> {
  return f.store.tasks.createTask({
    kind: "wakeup",
    personId: f.person.id,
    title: "Bins",
    checkpoint: wakeupCheckpoint({ note: "put the bins out", notify: "always", timing: { cron: "0 9 * * *", timezone: "UTC" }, provenance: { tainted: false, fromPersonWords: true } }),
  });
}

function input(task: Task, over: Partial<Parameters<ProactiveFlow["propose"]>[0]> = {}): Parameters<ProactiveFlow["propose"]>[0] {
  return {
    task,
    checkpoint: parseCheckpoint(task),
    origin: occurrence,
    person: f.person,
    activation: 1,
    text: "Bins go out tonight.",
    key: `${task.id}:a1`,
    waitsFor: { approval: false, reply: null },
    tainted: false,
    mayHaveProposals: false,
    goal: null,
    ...over,
  };
}

const rows = async () => (await f.store.outbox.listOutbound(f.person.id)).items.map((r) => ({ key: r.deliveryKey, text: r.text }));

/** Journals a finished `propose_message` call of activation 1. */
async function journalProposal(task: Task, call: number, text: string) {
  const key = `${task.id}:a1r0:0:${call}`;
  await f.store.journal.recordIntent({ taskId: task.id, step: 0, idempotencyKey: key, tool: proposeMessageToolName, args: { text }, sideEffect: false, intentAt: f.clock.now() });
  await f.store.journal.recordOutcome(key, { ok: true, result: { content: "proposed", data: null, untrusted: null } }, f.clock.now());
}

describe("ProactiveFlow", () => {
  it("proposes an occurrence's words under notify:<task>@<due>, once however often the occurrence runs", async () => {
    const task = await reminderTask();
    const flow = f.proactive;
    await flow.propose(input(task));
    await flow.propose(input(task, { key: `${task.id}:a2` }));
    expect(await rows()).toEqual([{ key: `notify:${task.id}@${dueAt.toISOString()}`, text: "Bins go out tonight." }]);
    const records = await f.store.notifications.listNotificationsSince(f.person.id, new Date(0));
    // Newest first: the second run found its occurrence taken care of.
    expect(records.map((r) => r.decision)).toEqual(["drop", "send"]);
    expect(records[1]).toMatchObject({ askedFor: true, occurrenceKey: `${task.id}@${dueAt.toISOString()}` });
  });

  it("keys a resumed round apart (p<n>), and work without an occurrence by its activation key", async () => {
    const task = await reminderTask();
    await f.proactive.propose(input(task, { key: `${task.id}:a1p1`, text: "Done: the bins are out." }));
    const event = await f.store.tasks.createTask({ kind: "wakeup", personId: f.person.id, title: "Parcel", checkpoint: wakeupCheckpoint({ note: "parcel", notify: "always", timing: { at: dueAt.toISOString() }, provenance: { tainted: false, fromPersonWords: true } }) });
    await f.proactive.propose(input(event, { origin: { kind: "event", hookId: "hook_1", description: "parcel", observations: [] }, key: `${event.id}:a3`, text: "Your parcel arrived." }));
    expect((await rows()).map((r) => r.key)).toEqual([`notify:${task.id}@${dueAt.toISOString()}p1`, `notify:${event.id}:a3`]);
  });

  it("reads the model's proposals from the journal only when the activation may have made some, keying the second :1", async () => {
    const task = await reminderTask();
    await journalProposal(task, 0, "Bins: the green one this week.");
    await journalProposal(task, 1, "Also: the paper bin.");
    await f.proactive.propose(input(task, { mayHaveProposals: false, text: "plain words" }));
    expect((await rows()).map((r) => r.text)).toEqual(["plain words"]);

    const other = await reminderTask();
    await journalProposal(other, 0, "Bins: the green one this week.");
    await journalProposal(other, 1, "Also: the paper bin.");
    await f.proactive.propose(input(other, { mayHaveProposals: true, text: "plain words" }));
    const base = `notify:${other.id}@${dueAt.toISOString()}`;
    expect((await rows()).slice(1)).toEqual([
      { key: base, text: "Bins: the green one this week." },
      { key: `${base}:1`, text: "Also: the paper bin." },
    ]);
  });

  it("makes a tainted activation's words inert before the filter sees them, and leaves untainted words alone", async () => {
    const seen: string[] = [];
    const flow = new ProactiveFlow({ store: f.store, notifier: f.notifier, inertLinks: async (_p, text) => (seen.push(text), text.replace("https://evil.example/x", "evil.example/x (link removed)")) });
    const task = await reminderTask();
    await flow.propose(input(task, { text: "Read https://evil.example/x" }));
    expect(seen).toEqual([]);
    const tainted = await reminderTask();
    await flow.propose(input(tainted, { text: "Read https://evil.example/x", tainted: true }));
    expect(seen).toEqual(["Read https://evil.example/x"]);
    const records = await f.store.notifications.listNotificationsSince(f.person.id, new Date(0));
    expect(records.map((r) => r.text)).toContain("Read evil.example/x (link removed)");
    expect(records.filter((r) => r.text.includes("https://evil.example/x"))).toHaveLength(1);
  });

  it("without a model, delivers an asked-for reminder's own note under :nomodel, and nothing for a goal's check-in", async () => {
    const task = await reminderTask();
    await f.proactive.remindWithoutModel({ task, checkpoint: parseCheckpoint(task), origin: occurrence, key: `${task.id}:a1:nomodel`, person: f.person });
    await f.proactive.remindWithoutModel({ task, checkpoint: parseCheckpoint(task), origin: occurrence, key: `${task.id}:a2:nomodel`, person: f.person });
    expect(await rows()).toEqual([{ key: `notify:${task.id}@${dueAt.toISOString()}:nomodel`, text: "Reminder: put the bins out" }]);
    const checkin = await f.store.tasks.createTask({ kind: "checkin", personId: f.person.id, title: "Garden goal", checkpoint: checkinCheckpoint({ cron: "0 9 * * 1", timeZone: "UTC" }) });
    await f.proactive.remindWithoutModel({ task: checkin, checkpoint: parseCheckpoint(checkin), origin: { kind: "checkin", dueAt: dueAt.toISOString() }, key: `${checkin.id}:a1:nomodel` });
    expect(await rows()).toHaveLength(1);
  });
});
