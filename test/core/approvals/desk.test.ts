import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { PersonId, TaskId } from "../../../core/ids.js";
import { ApprovalDesk, type Presser } from "../../../core/approvals/desk.js";
import { ApprovalCards } from "../../../core/approvals/card-issuer.js";
import { parseCardView, type CardView } from "../../../core/channels/card-view.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { parseGrantPattern } from "../../../core/policy/patterns.js";
import { parseApprovalDetails } from "../../../core/approvals/request.js";
import { Sentinel } from "../../../core/sentinel/gate.js";
import { SentinelClock, SessionTracker } from "../../../core/policy/time.js";
import { SentinelViews } from "../../../core/sentinel/views.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ApprovalRequest } from "../../../core/approvals/index.js";
import { defineTool, type ToolContext, type ToolDefinition, type ToolResult } from "../../../core/tools/tool.js";
import { Outbound } from "../../../core/outbox/index.js";

let dir: string;
let store: SqliteStore;
let ada: PersonId;
let bob: PersonId;
let taskId: TaskId;
let now: Date;
let requested: ApprovalRequest[];
let ran: unknown[];
let clock: SentinelClock;
let sessions: SessionTracker;
let sentinel: Sentinel;
let cards: ApprovalCards;
let desk: ApprovalDesk;
let delivered = 0;

/** A write tool with an HTTP-like policy; it only records what it was asked to do. */
const postNote = defineTool({
  name: "post_note",
  description: "x",
  parameters: z.object({ url: z.string(), method: z.string(), body: z.string().optional(), headers: z.record(z.string(), z.string()).optional() }),
  sideEffect: true,
  capability: "web.request",
  policy: { capability: "web.request", access: "write", method: { arg: "method" }, destinationArgs: ["url"], headerArgs: ["headers"], bodyArgs: ["body"], exfiltrationArgs: ["body"] },
  async execute(args): Promise<ToolResult> {
    ran.push(args);
    return { ok: true, content: "posted" };
  },
}) as unknown as ToolDefinition;

function open(): void {
  const wall = () => now;
  clock = new SentinelClock(store, wall);
  sessions = new SessionTracker(store);
  sentinel = new Sentinel({ store, egress: new EgressGuard(), onApprovalRequested: (r) => void requested.push(r), now: wall, clock, sessions });
  cards = new ApprovalCards({ store, clock, outbound: new Outbound({ store, clock: { now: wall }, wake: () => undefined }) });
  desk = new ApprovalDesk({ store, clock, sessions });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "familiar-approvals-"));
  store = openSqliteStore({ path: join(dir, "familiar.db") });
  ada = (await store.persons.createPerson({ displayName: "Ada" })).id;
  bob = (await store.persons.createPerson({ displayName: "Bob" })).id;
  taskId = (await store.tasks.createTask({ kind: "wakeup", personId: ada, title: "Pay the invoice" })).id;
  now = new Date("2026-03-02T10:00:00Z");
  requested = [];
  ran = [];
  open();
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const ctx = (over: Partial<ToolContext> = {}): ToolContext => ({
  personId: ada,
  taskId,
  originMessageId: null,
  idempotencyKey: `act${Math.random()}:1:0`,
  now,
  signal: new AbortController().signal,
  ...over,
});
const note = (over: Record<string, unknown> = {}) => ({ url: "https://api.example.com/notes", method: "POST", body: '{"text":"hi"}', ...over });

/** Sentinel asks for `args`; returns the stored request. */
async function ask(args: Record<string, unknown> = note(), over: Partial<ToolContext> = {}): Promise<ApprovalRequest> {
  const before = requested.length;
  const result = await sentinel.wrap()(postNote, args, ctx(over));
  expect(result).toMatchObject({ ok: false, code: "approval_required" });
  expect(requested).toHaveLength(before + 1);
  return requested.at(-1)!;
}

/** Issues the card and "delivers" it to Ada's Telegram chat 111 as message `m<n>`. */
async function issue(request: ApprovalRequest): Promise<{ card: CardView; messageRef: string; buttons: Record<string, string> }> {
  await cards.issue(request);
  const row = await store.outbox.claimNextOutbound({ owner: "test", now, leaseMs: 60_000, personId: request.personId });
  expect(row?.deliveryKey).toBe(`approval:${request.id}`);
  const messageRef = `m${++delivered}`;
  await store.outbox.markDelivered({ id: row!.id, owner: "test", channel: "telegram", address: "111", platformIds: [messageRef], now });
  const card = parseCardView(row!.card)!;
  return { card, messageRef, buttons: Object.fromEntries(card.buttons.map((b) => [b.label.startsWith("Always allow") ? "Always" : b.label.replace(/ \(.*\)$/, ""), b.id])) };
}

const adaAt = (messageRef: string, over: Partial<Presser> = {}): Presser => ({ channel: "telegram", accountId: "111", personId: ada, address: "111", messageRef, ...over });

describe("approval cards", () => {
  it("carry only opaque button ids (≤ 32 ASCII characters) that map to one stored (request, choice) pair", async () => {
    const request = await ask();
    const { card, buttons } = await issue(request);
    expect(card.buttons.map((b) => b.label)).toEqual(["Approve once", "Allow for this task", "Allow for this session (until 2 h away)", "Allow for 24 h", expect.stringMatching(/^Always allow /), "Deny"]);
    const ids = card.buttons.map((b) => b.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(/^ap:[A-Za-z0-9_-]{22}$/);
      expect(id.length).toBeLessThanOrEqual(32);
      expect(id).not.toContain(request.id.slice(4, 12));
    }
    const choice = await store.sentinel.getApprovalChoice(buttons["Always"]!.slice(3));
    expect(choice).toMatchObject({ approvalId: request.id, choice: "always" });
    // The card says what the wider choices cover.
    expect(card.scopes.join("\n")).toContain("POST requests to api.example.com/notes (any body or query)");
  });

  it("offer no “This task” without a task", async () => {
    const { card } = await issue(await ask(note(), { taskId: null }));
    expect(card.buttons.map((b) => b.label)).not.toContain("Allow for this task");
  });
});

describe("presses", () => {
  it("A1: someone else's press is refused, audited, and the request stays pending", async () => {
    const request = await ask();
    const { buttons, messageRef } = await issue(request);
    const result = await desk.decidePress({ buttonId: buttons["Always"]!, presser: adaAt(messageRef, { accountId: "222", personId: bob, address: "222" }) });
    expect(result).toMatchObject({ outcome: "not_owner", notice: "This request isn't yours.", status: null });
    const unknown = await desk.decidePress({ buttonId: buttons["Approve once"]!, presser: adaAt(messageRef, { accountId: "333", personId: null }) });
    expect(unknown.outcome).toBe("not_owner");
    expect((await store.approvals.getApprovalRequest(request.id))!.status).toBe("pending");
    expect(await store.grants.listActiveGrants(ada, now)).toHaveLength(0);
    const audit = (await store.audit.listAudit(ada, { kinds: ["approval.press_rejected"] })).items;
    expect(audit.map((e) => (e.data as { refusal: string }).refusal)).toEqual(["not_owner", "not_owner"]);
  });

  it("a forged button id changes nothing and is audited", async () => {
    const request = await ask();
    const { messageRef } = await issue(request);
    for (const forged of ["ap:AAAAAAAAAAAAAAAAAAAAAA", `ap:${request.id}:a`, "ap:"]) {
      expect(await desk.decidePress({ buttonId: forged, presser: adaAt(messageRef) })).toMatchObject({ outcome: "not_found" });
    }
    expect((await store.approvals.getApprovalRequest(request.id))!.status).toBe("pending");
    expect(await store.grants.listActiveGrants(ada, now)).toHaveLength(0);
    expect((await store.audit.listAudit(ada, { kinds: ["approval.press_rejected"] })).items.map((e) => (e.data as { refusal: string }).refusal)).toEqual(["unknown_button", "unknown_button", "unknown_button"]);
  });

  it("a press counts only in the chat and on the message its card was sent to (a replayed or moved press changes nothing)", async () => {
    const first = await ask();
    const a = await issue(first);
    const second = await ask(note({ url: "https://api.example.com/other" }), { taskId: null });
    const b = await issue(second);
    // Card A's "Always" pressed on card B's message, from another chat, or with no message at all.
    for (const presser of [adaAt(b.messageRef), adaAt(a.messageRef, { groupId: "-100999" }), adaAt(a.messageRef, { channel: "slack" }), adaAt(a.messageRef, { messageRef: null })]) {
      expect(await desk.decidePress({ buttonId: a.buttons["Always"]!, presser })).toMatchObject({ outcome: "wrong_place" });
    }
    expect((await store.approvals.getApprovalRequest(first.id))!.status).toBe("pending");
    expect(await store.grants.listActiveGrants(ada, now)).toHaveLength(0);
    // On its own message it works, once; pressing it again is harmless.
    expect(await desk.decidePress({ buttonId: a.buttons["Approve once"]!, presser: adaAt(a.messageRef) })).toMatchObject({ outcome: "approved" });
    expect(await desk.decidePress({ buttonId: a.buttons["Always"]!, presser: adaAt(a.messageRef) })).toMatchObject({ outcome: "already_decided" });
    const grants = await store.grants.listActiveGrants(ada, now);
    expect(grants.map((g) => g.scope.kind)).toEqual(["once"]);
  });

  it("a restricted card stores buttons for Approve once and Deny only", async () => {
    const request = await ask(note(), { tainted: true });
    expect(parseApprovalDetails(request)?.offered).toEqual(["once", "deny"]);
    const { card } = await issue(request);
    expect(card.buttons.map((b) => b.label)).toEqual(["Approve once", "Deny"]);
    expect(card.notices.map((n) => n.text).join(" ")).toContain("Only “Approve once” is offered");
  });

  it("A2: an expired request says so and records nothing — after a restart, and after the clock is moved back", async () => {
    const request = await ask();
    const { buttons, messageRef } = await issue(request);
    now = new Date(now.getTime() + 25 * 3_600_000);
    await store.close();
    store = openSqliteStore({ path: join(dir, "familiar.db") });
    open();
    // Sentinel has seen the later time once (any decision does that) …
    await clock.now();
    // … then the wall clock is set back 2 hours past the request's expiry.
    now = new Date(now.getTime() - 2 * 3_600_000);
    const result = await desk.decidePress({ buttonId: buttons["Always"]!, presser: adaAt(messageRef) });
    expect(result).toMatchObject({ outcome: "expired", notice: "This request expired; nothing was done.", status: { outcome: "expired" } });
    expect(await store.grants.listActiveGrants(ada, now)).toHaveLength(0);
    expect((await store.approvals.getApprovalRequest(request.id))!.status).toBe("expired");
  });

  it("first answer wins: concurrent presses record one decision and one grant", async () => {
    const request = await ask();
    const { buttons, messageRef } = await issue(request);
    const results = await Promise.all(["Always", "Deny", "Approve once"].map((label) => desk.decidePress({ buttonId: buttons[label]!, presser: adaAt(messageRef) })));
    expect(results.map((x) => x.outcome).sort()).toEqual(["already_decided", "already_decided", expect.stringMatching(/approved|denied/)]);
    expect((await store.grants.listActiveGrants(ada, now)).length).toBeLessThanOrEqual(1);
  });

  it.each([
    ["Approve once", "once"],
    ["Allow for this task", "task"],
    ["Allow for this session", "session"],
    ["Allow for 24 h", "until"],
    ["Always", "always"],
  ] as const)("%s records a grant bound to the card's action pattern", async (label, kind) => {
    await store.conversation.appendMessage({ personId: ada, role: "user", channel: "telegram", text: "post my note", taskId: null, at: now });
    const request = await ask();
    const { buttons, messageRef } = await issue(request);
    const result = await desk.decidePress({ buttonId: buttons[label]!, presser: adaAt(messageRef) });
    expect(result.outcome).toBe("approved");
    const grant = result.grant!;
    expect(grant).toMatchObject({ personId: ada, capability: "web.request", scope: { kind }, grantedBy: { channel: "telegram", accountId: "111" }, grantedAt: now });
    const pattern = parseGrantPattern(grant.pattern)!;
    expect(pattern).toMatchObject({ tool: "post_note", method: "POST", targets: [{ kind: "url", host: "api.example.com", path: "/notes", paths: "exact" }] });
    expect(pattern.digest).toBe(kind === "once" ? parseApprovalDetails(request)!.action.digest : null);
    if (kind === "task") expect(grant.scope).toEqual({ kind: "task", taskId });
    if (kind === "until") expect((grant.scope as { until: Date }).until.getTime()).toBe(now.getTime() + 24 * 3600 * 1000);
    if (kind === "session") expect(grant.scope).toEqual({ kind: "session", sessionId: (await store.sentinel.getSession(ada))!.sessionId });
    expect((await store.audit.listAudit(ada, { kinds: ["approval.decided"] })).items).toHaveLength(1);
  });
});

describe("no approval fatigue", () => {
  it("at most one pending card per task: a further ask waits for the card already shown", async () => {
    const first = await ask();
    const other = await sentinel.wrap()(postNote, note({ url: "https://api.example.com/more" }), ctx());
    expect(other).toMatchObject({ ok: false, code: "approval_required", data: { approvalId: first.id, waiting: true } });
    expect(requested).toHaveLength(1);
    expect(await store.approvals.listPendingApprovals(ada)).toHaveLength(1);
  });

  it("a denial covers its place and kind for the rest of the task: the same request, another body, path or write verb there get no card; another place asks", async () => {
    const request = await ask();
    const { buttons, messageRef } = await issue(request);
    await desk.decidePress({ buttonId: buttons["Deny"]!, presser: adaAt(messageRef) });
    for (const args of [note(), note({ body: "something else" }), note({ url: "https://eu.api.example.com/other?x=1" }), note({ method: "PUT" })]) {
      const refused = await sentinel.wrap()(postNote, args, ctx());
      expect(refused).toMatchObject({ ok: false, code: "denied" });
      expect(refused.ok ? "" : refused.error).toMatch(/denied sending to or changing example\.com earlier in this task/);
    }
    expect(requested).toHaveLength(1);
    await ask(note({ url: "https://api.other.example/notes" }));
    expect(requested).toHaveLength(2);
  });

  it("three denials in a task trip the breaker (once); further asks are refused and pause the task; writing again lifts it", async () => {
    let paused = 0;
    for (let i = 0; i < 3; i++) {
      const r = await ask(note({ url: `https://api${i}.example/notes`, body: `try ${i}` }));
      const { buttons, messageRef } = await issue(r);
      const result = await desk.decidePress({ buttonId: buttons["Deny"]!, presser: adaAt(messageRef) });
      if (result.paused) paused++;
    }
    expect(paused).toBe(1);
    const blocked = await sentinel.wrap()(postNote, note({ url: "https://api4.example/notes", body: "try 4" }), ctx());
    expect(blocked).toMatchObject({ ok: false, code: "approvals_paused", data: { pauseTask: "task" } });
    expect(requested).toHaveLength(3);
    now = new Date(now.getTime() + 60_000);
    await store.conversation.appendMessage({ personId: ada, role: "user", channel: "telegram", text: "ok, try again", taskId: null, at: now });
    await ask(note({ url: "https://api5.example/notes", body: "try 5" }));
    expect(requested).toHaveLength(4);
  });

  it("at most three pending cards per person: the fourth ask is not shown", async () => {
    for (let i = 0; i < 3; i++) {
      const t = (await store.tasks.createTask({ kind: "wakeup", personId: ada, title: `t${i}` })).id;
      await ask(note({ body: `n${i}` }), { taskId: t });
    }
    const t4 = (await store.tasks.createTask({ kind: "wakeup", personId: ada, title: "t4" })).id;
    expect(await sentinel.wrap()(postNote, note({ body: "n4" }), ctx({ taskId: t4 }))).toMatchObject({ ok: false, code: "approval_deferred" });
    expect(requested).toHaveLength(3);
    expect(ran).toHaveLength(0);
  });
});

describe("SentinelViews", () => {
  it("lists live grants in words, revokes (audited, at once), pages the audit log and says what is happening", async () => {
    const views = new SentinelViews(store, { clock, sessions });
    expect(await views.currentStatus(ada)).toBe("Idle.");
    const r = await ask();
    expect(await views.currentStatus(ada)).toBe(`Waiting for your approval: ${r.summary}.`);
    const { buttons, messageRef } = await issue(r);
    await desk.decidePress({ buttonId: buttons["Always"]!, presser: adaAt(messageRef) });
    expect(await views.currentStatus(ada)).toMatch(/^Idle\. Last: Approved always: POST api\.example\.com\/notes/);

    const [view] = await views.listGrantsView(ada);
    expect(view).toMatchObject({ capability: "web.request", target: "POST requests to api.example.com/notes (any body or query)", scope: "always", grantedVia: "telegram" });
    expect(await views.revokeGrant(bob, view!.id)).toMatchObject({ revoked: false });
    expect(await views.revokeGrant(ada, view!.id)).toMatchObject({ revoked: true });
    expect(await views.listGrantsView(ada)).toEqual([]);

    const first = await views.listAuditView(ada, { limit: 1 });
    expect(first.items[0]).toMatchObject({ kind: "grant.revoked" });
  });

  it("a task grant ends with its task (and no longer shows)", async () => {
    const views = new SentinelViews(store, { clock, sessions });
    const r = await ask();
    const { buttons, messageRef } = await issue(r);
    await desk.decidePress({ buttonId: buttons["Allow for this task"]!, presser: adaAt(messageRef) });
    expect(await views.listGrantsView(ada)).toHaveLength(1);
    expect(await sentinel.wrap()(postNote, note({ body: "covered" }), ctx())).toMatchObject({ ok: true });
    await store.tasks.transitionTask({ taskId, owner: null, to: { status: "cancelled", reason: "done with it" }, now });
    expect(await views.listGrantsView(ada)).toEqual([]);
    expect((await store.audit.listAudit(ada, { kinds: ["grant.ended"] })).items).toHaveLength(1);
  });
});
