import { describe, expect, it } from "vitest";
import { asId, type PersonId } from "../../../core/ids.js";
import type { ActionDescriptor, ActionTarget } from "../../../core/policy/descriptor.js";
import type { ActiveGrant } from "../../../core/policy/grants.js";
import { patternFor, type GrantPattern } from "../../../core/policy/patterns.js";
import { capabilityMatches, decide, defaultPolicy, parsePolicy } from "../../../core/policy/rules.js";
import type { DecisionInput } from "../../../core/policy/decision.js";
import type { GrantScope } from "../../../core/policy/index.js";

const now = new Date("2025-06-01T12:00:00Z");
const person = asId("person", "per_1") as PersonId;
const url = (host: string, path = "/a", scheme: "http" | "https" = "https", port = 443): ActionTarget => ({ kind: "url", scheme, host, port, path, href: `${scheme}://${host}:${port}${path}` });
const page = url("news.example");
const outside = url("evil.example", "/x");
let n = 0;

function action(over: Partial<ActionDescriptor> = {}): ActionDescriptor {
  return { v: 1, tool: "http_fetch", capability: "web.fetch", access: "read", method: "GET", targets: [page], digest: "a".repeat(64), ...over };
}

function grant(pattern: GrantPattern, scope: GrantScope = { kind: "always" }): ActiveGrant {
  return {
    pattern,
    grant: {
      id: asId("grant", `grt_${++n}`),
      personId: person,
      capability: pattern.capability,
      constraints: {},
      pattern,
      scope,
      grantedBy: { channel: "local", accountId: "ada" },
      grantedAt: now,
      consumedAt: null,
      revokedAt: null,
    },
  };
}

/** A grant as a card would make it for `a`: exact for once, payload-open for wider scopes. */
const granted = (a: ActionDescriptor, scope: GrantScope = { kind: "always" }) => grant(patternFor(a, scope.kind === "once" ? "exact" : "payload")!, scope);

function input(over: Partial<DecisionInput> = {}): DecisionInput {
  const a = over.action === undefined ? action() : over.action;
  return {
    capability: a?.capability ?? "memory.write",
    access: a?.access ?? "internal",
    hardToUndo: false,
    action: a,
    destinations: a?.targets ?? [],
    carriesData: true,
    grants: [],
    taskId: "task_a",
    tainted: false,
    now,
    ...over,
  };
}

describe("default rules, each on both sides", () => {
  it("deny-blocked-destination: denies a blocked destination even when a grant exists; an ordinary one is not denied", () => {
    const blocked = action({ targets: [{ kind: "blocked", value: "file:///etc/passwd", reason: "scheme", code: "scheme_not_allowed" }] });
    const g = granted(action());
    expect(decide(input({ action: blocked, grants: [g] }))).toMatchObject({ effect: "deny", ruleId: "deny-blocked-destination" });
    expect(decide(input({ grants: [g] }))).toMatchObject({ effect: "allow", ruleId: "allow-granted" });
  });

  it("allow-internal: internal tools run; a tool with a policy and no grant does not", () => {
    expect(decide(input({ action: null, capability: "memory.write", access: "internal", destinations: [], carriesData: false }))).toMatchObject({ effect: "allow", ruleId: "allow-internal" });
    const write = action({ tool: "files_write", capability: "files.write", access: "write", method: "WRITE", targets: [{ kind: "file", path: "a.txt" }] });
    expect(decide(input({ action: write, carriesData: false }))).toMatchObject({ effect: "ask", ruleId: "ask-write" });
  });

  it("ask-tainted-persistence, ask-job-chain, allow-granted-persistence: writes that outlive a tainted activation, or jobs made by jobs, ask; an exact once-grant lets exactly that call run", () => {
    const remember = action({ tool: "remember", capability: "memory.write", access: "write", method: "REMEMBER", targets: [] });
    const internal = { capability: "memory.write", access: "internal" as const, destinations: [], carriesData: false, action: remember, exactOnly: true };
    expect(decide(input({ ...internal, persists: true, tainted: false }))).toMatchObject({ effect: "allow", ruleId: "allow-internal" });
    expect(decide(input({ ...internal, persists: true, tainted: true }))).toMatchObject({ effect: "ask", ruleId: "ask-tainted-persistence" });
    const once = granted(remember, { kind: "once" });
    expect(decide(input({ ...internal, persists: true, tainted: true, grants: [once] }))).toMatchObject({ effect: "allow", ruleId: "allow-granted-persistence", grant: once });
    const schedule = action({ tool: "schedule_wakeup", capability: "wakeups.write", access: "write", method: "SCHEDULE", targets: [] });
    const job = { ...internal, capability: "wakeups.write", action: schedule, persists: true, createsJob: true };
    expect(decide(input({ ...job, chainDepth: 0 }))).toMatchObject({ effect: "allow", ruleId: "allow-internal" });
    expect(decide(input({ ...job, chainDepth: 1 }))).toMatchObject({ effect: "ask", ruleId: "ask-job-chain" });
    expect(decide(input({ ...job, chainDepth: 3, tainted: true }))).toMatchObject({ effect: "ask" });
    expect(decide(input({ ...job, createsJob: false, chainDepth: 2 }))).toMatchObject({ effect: "allow", ruleId: "allow-internal" });
    // A wider grant never covers an exact-only call.
    expect(decide(input({ ...job, chainDepth: 1, grants: [granted(schedule)] }))).toMatchObject({ effect: "ask", ruleId: "ask-job-chain" });
  });

  it("ask-tainted-egress: tainted + ungranted destination asks even for a read; a read covered by a grant runs", () => {
    const g = granted(action());
    expect(decide(input({ tainted: true, action: action({ targets: [outside] }), grants: [g] }))).toMatchObject({ effect: "ask", ruleId: "ask-tainted-egress" });
    expect(decide(input({ tainted: true, grants: [g] }))).toMatchObject({ effect: "allow", ruleId: "allow-granted" });
  });

  it("ask-hard-to-undo: asks without a grant, runs with one", () => {
    const pay = action({ tool: "pay", capability: "pay.send", access: "write", method: "SEND", targets: [{ kind: "recipient", address: "bob@example.com" }] });
    expect(decide(input({ action: pay, hardToUndo: true }))).toMatchObject({ effect: "ask", ruleId: "ask-hard-to-undo" });
    const g = granted(pay, { kind: "once" });
    expect(decide(input({ action: pay, hardToUndo: true, grants: [g] }))).toMatchObject({ effect: "allow", grant: g });
  });

  it("ask-write: a write asks without a grant and runs with one for that very method and path only", () => {
    const post = action({ tool: "http_request", capability: "web.request", access: "write", method: "POST", targets: [url("api.example", "/notes")] });
    expect(decide(input({ action: post }))).toMatchObject({ effect: "ask", ruleId: "ask-write" });
    const g = granted(post);
    expect(decide(input({ action: post, grants: [g] }))).toMatchObject({ effect: "allow", ruleId: "allow-granted" });
    expect(decide(input({ action: { ...post, digest: "b".repeat(64) }, grants: [g] })).effect).toBe("allow");
    expect(decide(input({ action: { ...post, method: "DELETE" }, grants: [g] })).effect).toBe("ask");
    expect(decide(input({ action: { ...post, targets: [url("api.example", "/account/delete")] }, grants: [g] })).effect).toBe("ask");
    expect(decide(input({ action: { ...post, targets: [url("api.example", "/notes"), outside] }, grants: [g] })).effect).toBe("ask");
  });

  it("ask-read-new-destination: a read nobody granted asks; a fetch grant does not cover web.request", () => {
    expect(decide(input())).toMatchObject({ effect: "ask", ruleId: "ask-read-new-destination" });
    const g = granted(action());
    expect(decide(input({ grants: [g] })).effect).toBe("allow");
    expect(decide(input({ grants: [g], action: action({ tool: "http_request", capability: "web.request", access: "write", method: "GET" }) })).effect).toBe("ask");
  });

  it("default: no matching rule asks (fail closed)", () => {
    expect(decide(input(), [])).toMatchObject({ effect: "ask", ruleId: "default" });
  });
});

describe("grant patterns in decisions", () => {
  it("a once-grant covers exactly its action: another payload, method or path asks", () => {
    const post = action({ tool: "http_request", capability: "web.request", access: "write", method: "POST", targets: [url("api.example", "/notes")] });
    const g = granted(post, { kind: "once" });
    expect(decide(input({ action: post, grants: [g] })).effect).toBe("allow");
    expect(decide(input({ action: { ...post, digest: "c".repeat(64) }, grants: [g] })).effect).toBe("ask");
    expect(decide(input({ action: { ...post, method: "PUT" }, grants: [g] })).effect).toBe("ask");
  });

  it("a read grant covers any path on its origin, never another port or scheme", () => {
    const g = granted(action());
    expect(decide(input({ action: action({ targets: [url("news.example", "/other/page")] }), grants: [g] })).effect).toBe("allow");
    expect(decide(input({ action: action({ targets: [url("news.example", "/a", "https", 8443)] }), grants: [g] })).effect).toBe("ask");
    expect(decide(input({ action: action({ targets: [url("news.example", "/a", "http", 80)] }), grants: [g] })).effect).toBe("ask");
  });

  it("a file grant covers that file only", () => {
    const write = action({ tool: "files_write", capability: "files.write", access: "write", method: "WRITE", targets: [{ kind: "file", path: "notes.txt" }] });
    const g = granted(write);
    expect(decide(input({ action: { ...write, digest: "d".repeat(64) }, grants: [g] })).effect).toBe("allow");
    expect(decide(input({ action: { ...write, targets: [{ kind: "file", path: "secrets.txt" }] }, grants: [g] })).effect).toBe("ask");
  });

  it("task grants cover calls of their own task only", () => {
    const g = granted(action(), { kind: "task", taskId: asId("task", "task_a") });
    expect(decide(input({ grants: [g] })).effect).toBe("allow");
    expect(decide(input({ grants: [g], taskId: "task_b" })).effect).toBe("ask");
    expect(decide(input({ grants: [g], taskId: null })).effect).toBe("ask");
  });

  it("prefers a lasting grant over spending a once-grant", () => {
    const once = granted(action(), { kind: "once" });
    const always = granted(action());
    expect(decide(input({ grants: [once, always] })).grant).toBe(always);
  });
});

describe("policy as data", () => {
  it("deny beats allow: an added deny rule wins over a grant", () => {
    const policy = parsePolicy([...defaultPolicy, { id: "no-evil", description: "never evil", effect: "deny", match: { capability: "web.*", destination: ["url"] } }]);
    const g = granted(action());
    expect(decide(input({ grants: [g] }), policy)).toMatchObject({ effect: "deny", ruleId: "no-evil" });
    expect(decide(input({ grants: [g], action: action({ capability: "mail.read" }) }), policy).effect).not.toBe("deny");
  });

  it("rejects malformed tables: unknown keys, bad effects, duplicate ids", () => {
    expect(() => parsePolicy([{ id: "a", description: "x", effect: "maybe", match: {} }])).toThrow();
    expect(() => parsePolicy([{ id: "a", description: "x", effect: "allow", match: { colour: "red" } }])).toThrow();
    const rule = { id: "a", description: "x", effect: "allow", match: {} };
    expect(() => parsePolicy([rule, rule])).toThrow(/duplicate/);
    expect(parsePolicy([rule])).toHaveLength(1);
  });

  it("capability globs", () => {
    expect(capabilityMatches("web.*", "web.fetch")).toBe(true);
    expect(capabilityMatches("web.*", "webx.fetch")).toBe(false);
    expect(capabilityMatches("web.fetch", "web.fetchall")).toBe(false);
    expect(capabilityMatches("*", "anything.at.all")).toBe(true);
  });
});
