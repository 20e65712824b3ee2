/**
 * ApprovalFlow on its own (core/runtime/approval-resume.ts), on a SQLite store with the real
 * Sentinel asking: a request's card is queued under its delivery key and its expiry scheduled; a
 * press by the owner on the delivered card decides it, edits the card and resumes the waiting task
 * exactly once (a second press, or someone else's, resumes nothing); expiry tells the task; a
 * crash between storing a request and queueing its card is repaired at start without a second card;
 * a decision from the web app is idempotent per action id.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { InboundPress } from "../../../core/channels/index.js";
import { EgressGuard } from "../../../core/egress/index.js";
import { SentinelClock, SessionTracker } from "../../../core/policy/index.js";
import { ApprovalFlow, approvalExpiryJobName } from "../../../core/runtime/index.js";
import type { ScheduleRequest, Scheduler } from "../../../core/scheduling/index.js";
import { Sentinel } from "../../../core/sentinel/index.js";
import type { ApprovalRequest } from "../../../core/approvals/index.js";
import type { Task } from "../../../core/tasks/index.js";
import { parseCheckpoint, wakeupCheckpoint } from "../../../core/tasks/checkpoint.js";
import { defineTool, type ToolDefinition } from "../../../core/tools/index.js";
import { flowFixture, LEASE_MS, silent, type FlowFixture } from "./flows.js";

let f: FlowFixture;
let scheduled: ScheduleRequest[];
let flow: ApprovalFlow;
let sentinel: Sentinel;
/** Whether Sentinel hands a stored request to the flow (false: the process "died" right after storing it). */
let handOver: boolean;

const post = defineTool({
  name: "post_note",
  description: "posts a note",
  parameters: z.object({ url: z.string(), method: z.string(), body: z.string() }),
  sideEffect: true,
  capability: "web.request",
  policy: { capability: "web.request", access: "write", method: { arg: "method" }, destinationArgs: ["url"], bodyArgs: ["body"], exfiltrationArgs: ["body"] },
  async execute() {
    return { ok: true, content: "posted" };
  },
}) as unknown as ToolDefinition;

function scheduler(): Scheduler {
  return {
    define: () => undefined,
    schedule: async (r) => (scheduled.push(r), null),
    cancel: async () => 0,
    cancelAll: async () => 0,
    nextRunAt: async () => null,
    start: async () => undefined,
    drain: async () => undefined,
    status: () => ({ running: true, backend: "test" }),
  };
}

beforeEach(async () => {
  f = await flowFixture();
  scheduled = [];
  handOver = true;
  const wall = () => f.clock.now();
  const time = { clock: new SentinelClock(f.store, wall), sessions: new SessionTracker(f.store) };
  flow = new ApprovalFlow({ store: f.store, clock: f.clock, logger: silent, outbound: f.outbound, scheduler: scheduler(), tasks: { poke: () => void f.wakes.tasks++ }, sentinel: time });
  sentinel = new Sentinel({ store: f.store, egress: new EgressGuard(), onApprovalRequested: (r) => (handOver ? flow.requested(r) : Promise.resolve()), now: wall, ...time });
});
afterEach(async () => {
  await f.close();
});

/** A wake-up task asks Sentinel for a write; the task then waits for the approval, as the runner leaves it. */
async function ask(options: { wait?: boolean } = {}): Promise<{ task: Task; request: ApprovalRequest }> {
  const created = await f.store.tasks.createTask({ kind: "wakeup", personId: f.person.id, title: "Post the note", checkpoint: wakeupCheckpoint({ note: "post", notify: "always", timing: { at: f.clock.now().toISOString() } }) });
  await f.store.tasks.claimTask({ taskId: created.id, owner: "A", now: f.clock.now(), leaseMs: LEASE_MS });
  const ctx = { personId: f.person.id, taskId: created.id, originMessageId: null, idempotencyKey: `${created.id}:a1r0:1:0`, now: f.clock.now(), signal: new AbortController().signal };
  const result = await sentinel.wrap()(post, { url: "https://api.example.com/notes", method: "POST", body: "hi" }, ctx);
  expect(result).toMatchObject({ ok: false, code: "approval_required" });
  const [request] = await f.store.approvals.listPendingApprovals(f.person.id);
  if (options.wait === false) return { task: (await f.store.tasks.getTask(created.id))!, request: request! };
  const task = await f.store.tasks.transitionTask({ taskId: created.id, owner: "A", to: { status: "waiting", wait: { kind: "approval", approvalId: request!.id } }, now: f.clock.now() });
  return { task, request: request! };
}

/** Delivers the request's card to Ada's local chat as message `card-1`; returns its buttons by label. */
async function deliverCard(request: ApprovalRequest): Promise<Record<string, string>> {
  const row = await f.store.outbox.claimNextOutbound({ owner: "test", now: f.clock.now(), leaseMs: 60_000, personId: f.person.id });
  expect(row?.deliveryKey).toBe(`approval:${request.id}`);
  await f.store.outbox.markDelivered({ id: row!.id, owner: "test", channel: "local", address: "ada", platformIds: ["card-1"], now: f.clock.now() });
  return Object.fromEntries(row!.buttons.map((b) => [b.label.replace(/ \(.*\)$/, ""), b.id]));
}

const press = (buttonId: string, accountId = "ada"): InboundPress => ({ kind: "press", channel: "local", updateId: `u${Math.random()}`, accountId, address: accountId, buttonId, messageRef: "card-1", at: f.clock.now() });

describe("ApprovalFlow", () => {
  it("queues a requested card under approval:<id> with its buttons, schedules its expiry, and wakes delivery", async () => {
    const before = f.wakes.outbox;
    const { request } = await ask();
    const [card] = (await f.store.outbox.listOutbound(f.person.id)).items;
    expect(card).toMatchObject({ deliveryKey: `approval:${request.id}` });
    expect(card!.buttons.map((b) => b.label)).toContain("Deny");
    expect(scheduled).toEqual([{ name: approvalExpiryJobName, key: request.id, data: { approvalId: request.id }, timing: { kind: "at", at: request.expiresAt } }]);
    expect(f.wakes.outbox).toBeGreaterThan(before);
  });

  it("a press by the owner approves, edits the card and resumes the waiting task once; a second press resumes nothing", async () => {
    const { task, request } = await ask();
    const buttons = await deliverCard(request);
    const person = (await f.store.persons.getPerson(f.person.id))!;
    expect(await flow.press(press("not-an-approval-button"), person, null)).toBeNull();
    expect(await flow.press(press(buttons["Approve once"]!), person, null)).toMatchObject({ status: "handled" });
    expect((await f.store.approvals.getApprovalRequest(request.id))!.status).toBe("approved");
    const resumed = (await f.store.tasks.getTask(task.id))!;
    expect(resumed.state.status).toBe("pending");
    expect(parseCheckpoint(resumed).input).toEqual({ kind: "approval", approvalId: request.id, outcome: "approved", summary: request.summary, scope: "once" });
    expect(f.wakes.tasks).toBe(1);
    const keys = (await f.store.outbox.listOutbound(f.person.id)).items.map((r) => r.deliveryKey);
    expect(keys).toContain(`approval:${request.id}:approved`);

    const again = await flow.press(press(buttons["Deny"]!), person, null);
    expect(again).toMatchObject({ status: "handled" });
    expect((await f.store.approvals.getApprovalRequest(request.id))!.status).toBe("approved");
    expect(f.wakes.tasks).toBe(1);
  });

  it("a press while the task still runs decides, but resumes and wakes nothing (the runner resumes it when it releases the task)", async () => {
    const { task, request } = await ask({ wait: false });
    const buttons = await deliverCard(request);
    await flow.press(press(buttons["Approve once"]!), f.person, null);
    expect((await f.store.approvals.getApprovalRequest(request.id))!.status).toBe("approved");
    expect((await f.store.tasks.getTask(task.id))!.state.status).toBe("running");
    expect(f.wakes.tasks).toBe(0);
  });

  it("someone else's press decides nothing and resumes nothing", async () => {
    const { task, request } = await ask();
    const buttons = await deliverCard(request);
    const bob = await f.store.persons.createPerson({ displayName: "Bob" });
    expect(await flow.press(press(buttons["Approve once"]!, "bob"), bob, null)).toMatchObject({ status: "handled", notice: "This request isn't yours." });
    expect((await f.store.approvals.getApprovalRequest(request.id))!.status).toBe("pending");
    expect((await f.store.tasks.getTask(task.id))!.state).toEqual({ status: "waiting", wait: { kind: "approval", approvalId: request.id } });
  });

  it("expires a request at its deadline, tells the waiting task, and expires nothing twice", async () => {
    const { task, request } = await ask();
    expect(await flow.expire()).toBe(0);
    f.clock.set(new Date(request.expiresAt.getTime() + 1));
    expect(await flow.expire()).toBe(1);
    expect((await f.store.approvals.getApprovalRequest(request.id))!.status).toBe("expired");
    expect(parseCheckpoint((await f.store.tasks.getTask(task.id))!).input).toMatchObject({ kind: "approval", outcome: "expired" });
    expect((await f.store.outbox.listOutbound(f.person.id)).items.map((r) => r.deliveryKey)).toContain(`approval:${request.id}:expired`);
    expect(await flow.expire()).toBe(0);
    expect(f.wakes.tasks).toBe(1);
  });

  it("at start, queues the card and expiry a crash left undone, and keeps an already queued card with the buttons it showed", async () => {
    handOver = false;
    const { request } = await ask();
    expect(await f.store.outbox.listOutbound(f.person.id)).toMatchObject({ items: [] });
    expect(await flow.recoverCards()).toBe(1);
    const [card] = (await f.store.outbox.listOutbound(f.person.id)).items;
    expect(card?.deliveryKey).toBe(`approval:${request.id}`);
    expect(scheduled.map((s) => s.key)).toEqual([request.id]);
    expect(await flow.recoverCards()).toBe(1);
    const rows = (await f.store.outbox.listOutbound(f.person.id)).items;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.buttons).toEqual(card!.buttons);
    // The kept buttons still decide the request.
    const buttons = await deliverCard(request);
    await flow.press(press(buttons["Deny"]!), f.person, null);
    expect((await f.store.approvals.getApprovalRequest(request.id))!.status).toBe("denied");
  });

  it("a decision from the web app is checked like a press and idempotent per action id", async () => {
    const { task, request } = await ask();
    const buttons = await deliverCard(request);
    const via = { channel: "local" as const, accountId: "ada", messageRef: "card-1" };
    expect(await flow.decide({ person: f.person, buttonId: buttons["Deny"]!, via, actionId: "act-1" })).toMatchObject({ status: "handled" });
    expect(await flow.decide({ person: f.person, buttonId: buttons["Approve once"]!, via, actionId: "act-1" })).toEqual({ status: "duplicate" });
    expect((await f.store.approvals.getApprovalRequest(request.id))!.status).toBe("denied");
    expect(parseCheckpoint((await f.store.tasks.getTask(task.id))!).input).toMatchObject({ kind: "approval", outcome: "denied", scope: null });
  });
});
