import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asId, type PersonId } from "../../../core/ids.js";
import { ApprovalDesk, approvalButtonId, approvalCard, parseApprovalButtonId, type Choice } from "../../../core/sentinel/approvals.js";
import { SentinelViews } from "../../../core/sentinel/views.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { TaskId } from "../../../core/ids.js";
import type { ApprovalRequest } from "../../../core/storage/types.js";

let dir: string;
let store: SqliteStore;
let ada: PersonId;
let bob: PersonId;
let taskId: TaskId;
const now = () => new Date();
const adaPresser = () => ({ channel: "telegram" as const, accountId: "111", personId: ada });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "familiar-approvals-"));
  store = openSqliteStore({ path: join(dir, "familiar.db") });
  ada = (await store.persons.createPerson({ displayName: "Ada" })).id;
  bob = (await store.persons.createPerson({ displayName: "Bob" })).id;
  taskId = (await store.tasks.createTask({ kind: "wakeup", personId: ada, title: "Pay the invoice" })).id;
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function request(over: { expiresAt?: Date; taskId?: TaskId | null; destinations?: unknown[] } = {}): Promise<ApprovalRequest> {
  return store.approvals.createApprovalRequest({
    personId: ada,
    taskId: over.taskId === undefined ? taskId : over.taskId,
    capability: "web.request",
    summary: "http_request (web.request, write) → https://api.example.com",
    details: {
      destinations: (over.destinations ?? [{ kind: "url", origin: "https://api.example.com", host: "api.example.com", url: "https://api.example.com/pay" }]) as never,
      sessionId: "ses_1",
      reason: "Writes ask unless a grant covers them.",
      args: { body: "{{secret:api}}" },
    },
    expiresAt: over.expiresAt ?? new Date(Date.now() + 3_600_000),
  });
}
const button = (r: ApprovalRequest, choice: Choice) => approvalButtonId(r.id, choice);

describe("approval cards", () => {
  it("have six buttons with opaque ids of at most 32 ASCII characters that round-trip", async () => {
    const r = await request();
    const card = approvalCard(r);
    expect(card.buttons.map((b) => b.label)).toEqual(["Approve once", "This task", "This session", "For 24 h", "Always", "Deny"]);
    for (const b of card.buttons) {
      expect(b.id.length).toBeLessThanOrEqual(32);
      expect(b.id).toMatch(/^[\x21-\x7e]+$/);
      expect(b.id).not.toContain("api.example.com");
      expect(parseApprovalButtonId(b.id)!.approvalId).toBe(r.id);
    }
    expect(card.text).toContain("https://api.example.com");
    expect(parseApprovalButtonId("ap:~AAAA:x")).toBeNull();
    expect(parseApprovalButtonId("something-else")).toBeNull();
  });

  it("omit This task when there is no task", async () => {
    const r = await request({ taskId: null });
    expect(approvalCard(r).buttons.map((b) => b.label)).not.toContain("This task");
  });
});

describe("decidePress", () => {
  it("A1: someone else's press is refused, audited, and the request stays pending", async () => {
    const r = await request();
    const desk = new ApprovalDesk(store);
    const result = await desk.decidePress({ buttonId: button(r, "always"), presser: { channel: "telegram", accountId: "222", personId: bob }, now: now() });
    expect(result).toMatchObject({ outcome: "not_owner", notice: "This request isn't yours.", cardUpdate: null });
    const unknown = await desk.decidePress({ buttonId: button(r, "once"), presser: { channel: "telegram", accountId: "333", personId: null }, now: now() });
    expect(unknown.outcome).toBe("not_owner");
    expect((await store.approvals.getApprovalRequest(r.id))!.status).toBe("pending");
    expect(await store.grants.listActiveGrants(ada, now())).toHaveLength(0);
    const audit = (await store.audit.listAudit(ada, { kinds: ["approval.press_rejected"] })).items;
    expect(audit).toHaveLength(2);
    expect(audit[1]!.data).toMatchObject({ accountId: "222", presserPersonId: bob });
  });

  it("A2: an expired request says expired, edits the card and records nothing — also after a restart", async () => {
    const r = await request({ expiresAt: new Date(Date.now() + 50) });
    await store.close();
    store = openSqliteStore({ path: join(dir, "familiar.db") });
    const later = new Date(Date.now() + 1000);
    const result = await new ApprovalDesk(store).decidePress({ buttonId: button(r, "always"), presser: adaPresser(), now: later });
    expect(result).toMatchObject({ outcome: "expired", notice: "This request expired; nothing was done.", cardUpdate: { buttons: [] } });
    expect(result.cardUpdate!.text).toContain("Expired");
    expect(result.grant).toBeUndefined();
    expect(await store.grants.listActiveGrants(ada, now())).toHaveLength(0);
    expect((await store.approvals.getApprovalRequest(r.id))!.status).toBe("expired");
  });

  it("an unknown request is reported as gone", async () => {
    const result = await new ApprovalDesk(store).decidePress({ buttonId: approvalButtonId(asId("approval", "apr_0000000000000000000000000000"), "once"), presser: adaPresser(), now: now() });
    expect(result.outcome).toBe("not_found");
  });

  it("first answer wins: concurrent presses record one decision and one grant", async () => {
    const r = await request();
    const desk = new ApprovalDesk(store);
    const results = await Promise.all([
      desk.decidePress({ buttonId: button(r, "always"), presser: adaPresser(), now: now() }),
      desk.decidePress({ buttonId: button(r, "deny"), presser: adaPresser(), now: now() }),
      desk.decidePress({ buttonId: button(r, "once"), presser: adaPresser(), now: now() }),
    ]);
    expect(results.map((x) => x.outcome).sort()).toEqual(["already_decided", "already_decided", "approved"]);
    expect(await store.grants.listActiveGrants(ada, now())).toHaveLength(1);
  });

  it.each([
    ["once", { kind: "once" }],
    ["task", { kind: "task" }],
    ["session", { kind: "session", sessionId: "ses_1" }],
    ["until", { kind: "until" }],
    ["always", { kind: "always" }],
  ] as const)("Approve %s records a grant with that scope, who granted it and through which channel", async (choice, scope) => {
    const r = await request();
    const at = now();
    const result = await new ApprovalDesk(store).decidePress({ buttonId: button(r, choice), presser: adaPresser(), now: at });
    expect(result).toMatchObject({ outcome: "approved", cardUpdate: { buttons: [] } });
    expect(result.grant).toMatchObject({
      personId: ada,
      capability: "web.request",
      constraints: { destination: "https://api.example.com" },
      scope,
      grantedBy: { channel: "telegram", accountId: "111" },
    });
    if (choice === "task") expect(result.grant!.scope).toEqual({ kind: "task", taskId });
    if (choice === "until") expect((result.grant!.scope as { until: Date }).until.getTime()).toBe(at.getTime() + 24 * 3600 * 1000);
    expect(await store.grants.listActiveGrants(ada, at)).toHaveLength(1);
    expect((await store.audit.listAudit(ada, { kinds: ["approval.decided"] })).items).toHaveLength(1);
  });

  it("Deny records the decision and no grant", async () => {
    const r = await request();
    const result = await new ApprovalDesk(store).decidePress({ buttonId: button(r, "deny"), presser: adaPresser(), now: now() });
    expect(result).toMatchObject({ outcome: "denied", notice: "Denied. Nothing was done." });
    expect((await store.approvals.getApprovalRequest(r.id))!.status).toBe("denied");
    expect(await store.grants.listActiveGrants(ada, now())).toHaveLength(0);
  });

  it("a scope that does not apply (no task) is refused and the request stays pending", async () => {
    const r = await request({ taskId: null });
    const result = await new ApprovalDesk(store).decidePress({ buttonId: button(r, "task"), presser: adaPresser(), now: now() });
    expect(result.outcome).toBe("invalid");
    expect((await store.approvals.getApprovalRequest(r.id))!.status).toBe("pending");
  });
});

describe("SentinelViews", () => {
  it("lists grants, revokes (audited, at once), pages the audit log and says what is happening", async () => {
    const views = new SentinelViews(store);
    expect(await views.currentStatus(ada)).toBe("Idle.");
    const r = await request();
    expect(await views.currentStatus(ada)).toBe(`Waiting for your approval: ${r.summary}.`);
    await new ApprovalDesk(store).decidePress({ buttonId: button(r, "always"), presser: adaPresser(), now: now() });
    expect(await views.currentStatus(ada)).toMatch(/^Idle\. Last: Approved always: http_request/);

    const [view] = await views.listGrantsView(ada);
    expect(view).toMatchObject({ capability: "web.request", target: "https://api.example.com", scope: "always", grantedVia: "telegram" });
    expect(await views.revokeGrant(bob, view!.id)).toMatchObject({ revoked: false });
    expect(await views.revokeGrant(ada, view!.id)).toMatchObject({ revoked: true });
    expect(await views.listGrantsView(ada)).toEqual([]);
    expect(await views.revokeGrant(ada, view!.id)).toMatchObject({ revoked: false });

    const first = await views.listAuditView(ada, { limit: 1 });
    expect(first.items[0]).toMatchObject({ kind: "grant.revoked" });
    const second = await views.listAuditView(ada, { limit: 1, after: first.next! });
    expect(second.items[0]!.kind).toBe("approval.decided");

    await store.tasks.claimTask({ taskId, owner: "w1", now: now(), leaseMs: 60_000 });
    expect(await views.currentStatus(ada)).toBe("Working on: Pay the invoice.");
  });
});
