import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import type { Actor } from "../../../../core/persons/index.js";
import { type ContractContext, at, makePerson, readAllPages } from "./support.js";

const owner: Actor = { channel: "telegram", accountId: "1001" };

/** Grants, approval requests and the audit log. */
export function authorizationContract(ctx: ContractContext): void {
  describe("grants", () => {
    it("records grants and round-trips scope, constraints and actor", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const grant = await store.grants.recordGrant({
        personId: person.id,
        capability: "email.send",
        constraints: { recipient: "bob@example.com", maxAmount: 5000 },
        scope: { kind: "until", until: at(3_600_000) },
        grantedBy: owner,
        grantedAt: at(0),
      });
      expect(grant).toEqual({
        id: grant.id,
        personId: person.id,
        capability: "email.send",
        constraints: { recipient: "bob@example.com", maxAmount: 5000 },
        pattern: null,
        scope: { kind: "until", until: at(3_600_000) },
        grantedBy: owner,
        grantedAt: at(0),
        consumedAt: null,
        revokedAt: null,
      });
      expect(grant.id).toMatch(/^grt_/);
      expect(await store.grants.getGrant(grant.id)).toEqual(grant);
      const taskGrant = await store.grants.recordGrant({ personId: person.id, capability: "web.post", constraints: {}, scope: { kind: "task", taskId: task.id }, grantedBy: owner });
      expect((await store.grants.getGrant(taskGrant.id))?.scope).toEqual({ kind: "task", taskId: task.id });
      expect(taskGrant.grantedAt).toBeInstanceOf(Date);
      expect(await store.grants.getGrant(asId("grant", "grt_missing"))).toBeNull();
      // The action pattern is opaque JSON to the store and round-trips unchanged (keys like `$x` included).
      const pattern = { v: 1, tool: "http_request", method: "POST", targets: [{ kind: "url", host: "api.example", path: "/a.b/$x" }], digest: null, "$odd.key": [1, { n: null }] };
      const bound = await store.grants.recordGrant({ personId: person.id, capability: "web.request", constraints: {}, pattern, scope: { kind: "once" }, grantedBy: owner, grantedAt: at(5) });
      expect(bound.pattern).toEqual(pattern);
      expect((await store.grants.getGrant(bound.id))?.pattern).toEqual(pattern);
      expect((await store.grants.listActiveGrants(person.id, at(6))).find((g) => g.id === bound.id)?.pattern).toEqual(pattern);
    });

    it("lists only active grants: not expired, revoked or consumed; oldest first", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const rec = (scope: Parameters<typeof store.grants.recordGrant>[0]["scope"], capability: string, grantedAt: Date) =>
        store.grants.recordGrant({ personId: person.id, capability, constraints: { destination: "example.com" }, scope, grantedBy: owner, grantedAt });
      const always = await rec({ kind: "always" }, "a", at(1));
      const until = await rec({ kind: "until", until: at(10_000) }, "b", at(2));
      const expiredUntil = await rec({ kind: "until", until: at(5000) }, "c", at(3));
      const once = await rec({ kind: "once" }, "d", at(4));
      const consumed = await rec({ kind: "once" }, "e", at(5));
      const revoked = await rec({ kind: "session", sessionId: "s1" }, "f", at(6));
      await store.grants.recordGrant({ personId: other.id, capability: "a", constraints: {}, scope: { kind: "always" }, grantedBy: owner });
      expect(await store.grants.consumeGrant(consumed.id, at(7))).toBe(true);
      expect(await store.grants.revokeGrant(person.id, revoked.id, at(7))).toBe(true);

      const active = await store.grants.listActiveGrants(person.id, at(5000));
      expect(active.map((g) => g.id)).toEqual([always.id, until.id, once.id]);
      expect(active.map((g) => g.id)).not.toContain(expiredUntil.id);
      expect((await store.grants.listActiveGrants(person.id, at(4999))).map((g) => g.id)).toContain(expiredUntil.id);
      expect((await store.grants.getGrant(consumed.id))?.consumedAt).toEqual(at(7));
      expect((await store.grants.getGrant(revoked.id))?.revokedAt).toEqual(at(7));
    });

    it("consumes a once-grant exactly once, even when two callers race", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const once = await store.grants.recordGrant({ personId: person.id, capability: "pay", constraints: { maxAmount: 100 }, scope: { kind: "once" }, grantedBy: owner });
      const results = await Promise.all([store.grants.consumeGrant(once.id, at(1)), store.grants.consumeGrant(once.id, at(1))]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.grants.consumeGrant(once.id, at(2))).toBe(false);
      expect(await store.grants.consumeGrant(asId("grant", "grt_missing"), at(2))).toBe(false);

      const revokedOnce = await store.grants.recordGrant({ personId: person.id, capability: "pay", constraints: {}, scope: { kind: "once" }, grantedBy: owner });
      await store.grants.revokeGrant(person.id, revokedOnce.id, at(1));
      expect(await store.grants.consumeGrant(revokedOnce.id, at(2))).toBe(false);

      // Only once-grants are consumed; an "always" grant keeps working.
      const always = await store.grants.recordGrant({ personId: person.id, capability: "read", constraints: {}, scope: { kind: "always" }, grantedBy: owner });
      expect(await store.grants.consumeGrant(always.id, at(3))).toBe(false);
      expect((await store.grants.listActiveGrants(person.id, at(4))).map((g) => g.id)).toEqual([always.id]);
    });

    it("revokes only the person's own grant, once", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const grant = await store.grants.recordGrant({ personId: person.id, capability: "x", constraints: {}, scope: { kind: "always" }, grantedBy: owner });
      expect(await store.grants.revokeGrant(other.id, grant.id, at(1))).toBe(false);
      expect(await store.grants.revokeGrant(person.id, grant.id, at(2))).toBe(true);
      expect(await store.grants.revokeGrant(person.id, grant.id, at(3))).toBe(false);
      expect((await store.grants.getGrant(grant.id))?.revokedAt).toEqual(at(2));
      expect(await store.grants.revokeGrant(person.id, asId("grant", "grt_missing"), at(3))).toBe(false);
    });
  });

  describe("approvals", () => {
    it("creates a pending request and lets exactly one of two racing decisions win", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const details = { url: "https://shop.example/checkout", amount: 4999, items: ["a", "b"] };
      const request = await store.approvals.createApprovalRequest({ personId: person.id, taskId: task.id, capability: "shop.buy", summary: "Buy 2 items for €49.99", details, expiresAt: at(600_000) });
      expect(request).toMatchObject({ status: "pending", decision: null, decidedBy: null, decidedAt: null, details, expiresAt: at(600_000), taskId: task.id });
      expect(request.id).toMatch(/^apr_/);
      expect(await store.approvals.getApprovalRequest(request.id)).toEqual(request);

      const slackActor: Actor = { channel: "slack", accountId: "U1" };
      const [first, second] = await Promise.all([
        store.approvals.decideApproval({ id: request.id, decision: { kind: "approve", scope: "task" }, by: owner, now: at(1000) }),
        store.approvals.decideApproval({ id: request.id, decision: { kind: "deny" }, by: slackActor, now: at(1001) }),
      ]);
      const outcomes = [first.outcome, second.outcome].sort();
      expect(outcomes).toEqual(["already_decided", "decided"]);
      const winner = first.outcome === "decided" ? first : second;
      const loser = first.outcome === "decided" ? second : first;
      if (winner.outcome !== "decided" || loser.outcome !== "already_decided") throw new Error("unreachable");
      const stored = await store.approvals.getApprovalRequest(request.id);
      expect(stored).toEqual(winner.request);
      expect(loser.request).toEqual(stored);
      if (winner === first) {
        expect(stored).toMatchObject({ status: "approved", decision: { kind: "approve", scope: "task" }, decidedBy: owner, decidedAt: at(1000) });
      } else {
        expect(stored).toMatchObject({ status: "denied", decision: { kind: "deny" }, decidedBy: slackActor, decidedAt: at(1001) });
      }
      expect(await store.approvals.listPendingApprovals(person.id)).toEqual([]);
    });

    it("reports expired and unknown requests instead of deciding them", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const request = await store.approvals.createApprovalRequest({ personId: person.id, taskId: null, capability: "x", summary: "s", details: null, expiresAt: at(1000) });
      const late = await store.approvals.decideApproval({ id: request.id, decision: { kind: "approve", scope: "once" }, by: owner, now: at(1000) });
      expect(late.outcome).toBe("expired");
      if (late.outcome !== "expired") throw new Error("unreachable");
      expect(late.request.status).toBe("expired");
      expect(late.request.decision).toBeNull();
      expect((await store.approvals.getApprovalRequest(request.id))?.status).toBe("expired");
      const again = await store.approvals.decideApproval({ id: request.id, decision: { kind: "deny" }, by: owner, now: at(1) });
      expect(again.outcome).toBe("expired");
      expect(await store.approvals.decideApproval({ id: asId("approval", "apr_missing"), decision: { kind: "deny" }, by: owner, now: at(1) })).toEqual({ outcome: "not_found" });
    });

    it("lists pending requests oldest first and expires the overdue ones in one sweep", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const make = (personId: typeof person.id, expiresAt: Date) =>
        store.approvals.createApprovalRequest({ personId, taskId: null, capability: "c", summary: "s", details: { n: expiresAt.getTime() }, expiresAt });
      const soon = await make(person.id, at(1000));
      const later = await make(person.id, at(9000));
      const decided = await make(person.id, at(500));
      const others = await make(other.id, at(100));
      await store.approvals.decideApproval({ id: decided.id, decision: { kind: "deny" }, by: owner, now: at(1) });

      expect((await store.approvals.listPendingApprovals(person.id)).map((r) => r.id)).toEqual([soon.id, later.id]);
      const expired = await store.approvals.expireApprovals(at(1000));
      expect(new Set(expired.map((r) => r.id))).toEqual(new Set([soon.id, others.id]));
      for (const r of expired) expect(r.status).toBe("expired");
      expect((await store.approvals.listPendingApprovals(person.id)).map((r) => r.id)).toEqual([later.id]);
      expect((await store.approvals.getApprovalRequest(decided.id))?.status).toBe("denied");
      expect(await store.approvals.expireApprovals(at(1000))).toEqual([]);
    });

    it("lists a task's requests in every status, oldest first", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const other = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "u" });
      const make = (taskId: typeof task.id | null, n: number) =>
        store.approvals.createApprovalRequest({ personId: person.id, taskId, capability: "c", summary: `s${n}`, details: { n }, expiresAt: at(9000) });
      const a = await make(task.id, 1);
      await make(other.id, 2);
      const b = await make(task.id, 3);
      await make(null, 4);
      await store.approvals.decideApproval({ id: a.id, decision: { kind: "deny" }, by: owner, now: at(1) });
      const listed = await store.approvals.listTaskApprovals(task.id);
      expect(listed.map((r) => [r.id, r.status])).toEqual([[a.id, "denied"], [b.id, "pending"]]);
      expect(await store.approvals.listTaskApprovals(asId("task", "tsk_missing"))).toEqual([]);
    });

    it("lists a person's denials decided since a time, in the order decided", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const make = (personId: typeof person.id, n: number) =>
        store.approvals.createApprovalRequest({ personId, taskId: null, capability: "c", summary: `s${n}`, details: { n }, expiresAt: at(9000) });
      const [a, b, c, d, e] = [await make(person.id, 1), await make(person.id, 2), await make(person.id, 3), await make(person.id, 4), await make(other.id, 5)];
      await store.approvals.decideApproval({ id: b.id, decision: { kind: "deny" }, by: owner, now: at(300) });
      await store.approvals.decideApproval({ id: a.id, decision: { kind: "deny" }, by: owner, now: at(400) });
      await store.approvals.decideApproval({ id: c.id, decision: { kind: "deny" }, by: owner, now: at(100) });
      await store.approvals.decideApproval({ id: d.id, decision: { kind: "approve", scope: "once" }, by: owner, now: at(350) });
      await store.approvals.decideApproval({ id: e.id, decision: { kind: "deny" }, by: owner, now: at(350) });
      expect((await store.approvals.listDeniedApprovals(person.id, at(300))).map((r) => r.id)).toEqual([b.id, a.id]);
      expect((await store.approvals.listDeniedApprovals(person.id, at(0))).map((r) => r.id)).toEqual([c.id, b.id, a.id]);
      expect(await store.approvals.listDeniedApprovals(person.id, at(401))).toEqual([]);
    });
  });

  describe("Sentinel state", () => {
    it("stores approval buttons by token and refuses a duplicate token", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const request = await store.approvals.createApprovalRequest({ personId: person.id, taskId: null, capability: "c", summary: "s", details: null, expiresAt: at(9000) });
      const card = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "card-1", text: "card" }, at(1));
      await store.sentinel.recordApprovalChoices(
        [
          { token: "tok-once", approvalId: request.id, choice: "once", outboxId: card.id },
          { token: "tok-deny", approvalId: request.id, choice: "deny", outboxId: null },
        ],
        at(2),
      );
      expect(await store.sentinel.getApprovalChoice("tok-once")).toEqual({ token: "tok-once", approvalId: request.id, choice: "once", outboxId: card.id, createdAt: at(2) });
      expect((await store.sentinel.getApprovalChoice("tok-deny"))?.outboxId).toBeNull();
      expect(await store.sentinel.getApprovalChoice("tok-missing")).toBeNull();
      expect((await store.sentinel.listApprovalChoices(request.id)).map((c) => [c.token, c.choice]).sort()).toEqual([["tok-deny", "deny"], ["tok-once", "once"]]);
      expect(await store.sentinel.listApprovalChoices(asId("approval", "apr_missing"))).toEqual([]);
      await expect(store.sentinel.recordApprovalChoices([{ token: "tok-once", approvalId: request.id, choice: "always", outboxId: null }], at(3))).rejects.toMatchObject({ code: "DUPLICATE" });
      expect((await store.sentinel.getApprovalChoice("tok-once"))?.choice).toBe("once");
    });

    it("keeps one session row per person and replaces it", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      expect(await store.sentinel.getSession(person.id)).toBeNull();
      const first = { personId: person.id, sessionId: "ses_a", startedAt: at(1), lastActivityAt: at(2), lastSeq: 3 };
      await store.sentinel.saveSession(first);
      expect(await store.sentinel.getSession(person.id)).toEqual(first);
      const second = { personId: person.id, sessionId: "ses_b", startedAt: at(10), lastActivityAt: at(20), lastSeq: 7 };
      await store.sentinel.saveSession(second);
      expect(await store.sentinel.getSession(person.id)).toEqual(second);
    });

    it("raises the time high-water mark and never lowers it", async () => {
      const store = ctx.store();
      expect(await store.sentinel.advanceClock(at(1000))).toEqual(at(1000));
      expect(await store.sentinel.advanceClock(at(5000))).toEqual(at(5000));
      expect(await store.sentinel.advanceClock(at(2000))).toEqual(at(5000));
      const raced = await Promise.all([store.sentinel.advanceClock(at(7000)), store.sentinel.advanceClock(at(6000))]);
      expect(raced.map((d) => d.getTime()).sort()).toContain(at(7000).getTime());
      expect(await store.sentinel.advanceClock(at(0))).toEqual(at(7000));
    });

    it("keeps the first untrusted sighting of a host per person", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      await store.sentinel.noteUntrustedHosts(person.id, ["evil.example", "cdn.example:8443"], "https://page.example/a", at(10));
      await store.sentinel.noteUntrustedHosts(person.id, ["evil.example", "new.example"], "https://page.example/b", at(20));
      await store.sentinel.noteUntrustedHosts(person.id, [], "nothing", at(30));
      const seen = await store.sentinel.firstUntrustedSightings(person.id, ["evil.example", "new.example", "cdn.example:8443", "never.example"]);
      const byHost = Object.fromEntries(seen.map((s) => [s.host, s]));
      expect(Object.keys(byHost).sort()).toEqual(["cdn.example:8443", "evil.example", "new.example"]);
      expect(byHost["evil.example"]).toEqual({ personId: person.id, host: "evil.example", firstSeenAt: at(10), source: "https://page.example/a" });
      expect(byHost["new.example"]?.firstSeenAt).toEqual(at(20));
      expect(await store.sentinel.firstUntrustedSightings(other.id, ["evil.example"])).toEqual([]);
      expect(await store.sentinel.firstUntrustedSightings(person.id, [])).toEqual([]);
    });
  });

  describe("access", () => {
    it("keeps roles and group member lists", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      expect(await store.access.listRoles()).toEqual([]);
      await store.access.setRole(a.id, "admin", new Date(1_000));
      await store.access.setRole(a.id, "admin", new Date(1_000));
      expect(await store.access.listRoles()).toEqual([{ personId: a.id, role: "admin" }]);
      await store.access.setRole(a.id, null, new Date(2_000));
      expect(await store.access.listRoles()).toEqual([]);

      const group = { channel: "telegram" as const, groupId: "-1001" };
      const elsewhere = { channel: "slack" as const, groupId: "-1001" };
      expect(await store.access.listGroupMembers(group)).toEqual([]);
      expect(await store.access.addGroupMember(group, a.id, at(1))).toBe(true);
      expect(await store.access.addGroupMember(group, a.id, at(2))).toBe(false);
      expect(await store.access.addGroupMember(group, b.id, at(3))).toBe(true);
      expect(await store.access.listGroupMembers(group)).toEqual([a.id, b.id]);
      expect(await store.access.listGroupMembers(elsewhere)).toEqual([]);
      expect(await store.access.removeGroupMember(group, a.id)).toBe(true);
      expect(await store.access.removeGroupMember(group, a.id)).toBe(false);
      expect(await store.access.listGroupMembers(group)).toEqual([b.id]);
    });
  });

  describe("audit", () => {
    it("lists a person's events newest first, filtered by kind, across pages", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const events = [];
      for (let i = 0; i < 5; i++) {
        events.push(await store.audit.appendAudit({ personId: person.id, kind: i % 2 ? "tool.call" : "sentinel.decision", summary: `e${i}`, data: { i, nested: { ok: true } }, at: at(i * 10) }));
      }
      await store.audit.appendAudit({ personId: other.id, kind: "tool.call", summary: "other", data: null });
      const system = await store.audit.appendAudit({ personId: null, kind: "system.start", summary: "boot", data: [] });
      expect(system.personId).toBeNull();
      expect(events[0]).toMatchObject({ personId: person.id, kind: "sentinel.decision", summary: "e0", data: { i: 0, nested: { ok: true } }, at: at(0) });
      expect(events[0]?.id).toMatch(/^aud_/);

      const { items } = await readAllPages((page) => store.audit.listAudit(person.id, page), 2);
      expect(items).toEqual([...events].reverse());
      const calls = await store.audit.listAudit(person.id, { kinds: ["tool.call"] });
      expect(calls.items.map((e) => e.summary)).toEqual(["e3", "e1"]);
    });

    it("caps a page at 500 items", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      for (let i = 0; i < 502; i++) await store.audit.appendAudit({ personId: person.id, kind: "k", summary: String(i), data: null, at: at(i) });
      const page = await store.audit.listAudit(person.id, { limit: 10_000 });
      expect(page.items).toHaveLength(500);
      expect(page.items[0]?.summary).toBe("501");
      const rest = await store.audit.listAudit(person.id, { limit: 10_000, after: page.next! });
      expect(rest.items.map((e) => e.summary)).toEqual(["1", "0"]);
      expect(rest.next).toBeUndefined();
    });
  });
}
