import { describe, expect, it } from "vitest";
import { asId, type PersonId } from "../../../core/ids.js";
import { decide, defaultPolicy, parsePolicy, capabilityMatches } from "../../../core/sentinel/policy.js";
import type { DecisionInput, Destination } from "../../../core/sentinel/types.js";
import type { Grant, GrantScope } from "../../../core/storage/types.js";

const now = new Date("2025-06-01T12:00:00Z");
const person = asId("person", "per_1") as PersonId;
const page: Destination = { kind: "url", origin: "https://news.example", host: "news.example", url: "https://news.example/a" };
const outside: Destination = { kind: "url", origin: "https://evil.example", host: "evil.example", url: "https://evil.example/x" };
let n = 0;

function grant(capability: string, scope: GrantScope, constraints: Grant["constraints"] = {}, extra: Partial<Grant> = {}): Grant {
  return {
    id: asId("grant", `grt_${++n}`),
    personId: person,
    capability,
    constraints,
    scope,
    grantedBy: { channel: "local", accountId: "ada" },
    grantedAt: now,
    consumedAt: null,
    revokedAt: null,
    ...extra,
  };
}

function input(over: Partial<DecisionInput> = {}): DecisionInput {
  return {
    capability: "web.fetch",
    access: "read",
    hardToUndo: false,
    destinations: [page],
    carriesData: true,
    grants: [],
    taskId: "task_a",
    sessionId: "ses_1",
    tainted: false,
    now,
    ...over,
  };
}

describe("default rules, each on both sides", () => {
  it("deny-blocked-destination: denies a blocked destination even when everything is granted; an ordinary one is not denied", () => {
    const blocked: Destination = { kind: "blocked", value: "file:///etc/passwd", reason: "scheme", code: "scheme_not_allowed" };
    const all = grant("*", { kind: "always" });
    expect(decide(input({ destinations: [blocked], grants: [all] }))).toMatchObject({ effect: "deny", ruleId: "deny-blocked-destination" });
    expect(decide(input({ destinations: [page], grants: [all] }))).toMatchObject({ effect: "allow", ruleId: "allow-granted" });
  });

  it("allow-internal: internal tools run; a tool with a policy and no grant does not", () => {
    expect(decide(input({ capability: "memory.write", access: "internal", destinations: [], carriesData: false }))).toMatchObject({ effect: "allow", ruleId: "allow-internal" });
    expect(decide(input({ capability: "memory.write", access: "write", destinations: [], carriesData: false }))).toMatchObject({ effect: "ask", ruleId: "ask-write" });
  });

  it("ask-tainted-egress: tainted + ungranted destination asks even for a read; untainted read of a granted origin runs", () => {
    const fetchPage = grant("web.fetch", { kind: "always" }, { destination: "https://news.example" });
    expect(decide(input({ tainted: true, destinations: [outside], grants: [fetchPage] }))).toMatchObject({ effect: "ask", ruleId: "ask-tainted-egress" });
    expect(decide(input({ tainted: true, destinations: [page], grants: [fetchPage] }))).toMatchObject({ effect: "allow", ruleId: "allow-granted" });
    expect(decide(input({ tainted: false, destinations: [page], grants: [fetchPage] }))).toMatchObject({ effect: "allow" });
  });

  it("ask-hard-to-undo: asks without a grant, runs with one", () => {
    const pay = { capability: "pay.send", access: "write" as const, hardToUndo: true, destinations: [{ kind: "recipient", value: "bob@example.com" } as Destination] };
    expect(decide(input(pay)).effect).toBe("ask");
    expect(decide(input(pay)).ruleId).toBe("ask-hard-to-undo");
    const g = grant("pay.send", { kind: "once" }, { recipient: "Bob@example.com" });
    expect(decide(input({ ...pay, grants: [g] }))).toMatchObject({ effect: "allow", grant: g });
  });

  it("ask-write: a write asks without a grant and runs with one for its destination only", () => {
    const post = { capability: "web.request", access: "write" as const };
    expect(decide(input(post))).toMatchObject({ effect: "ask", ruleId: "ask-write" });
    const g = grant("web.request", { kind: "always" }, { destination: "https://news.example" });
    expect(decide(input({ ...post, grants: [g] }))).toMatchObject({ effect: "allow", ruleId: "allow-granted" });
    expect(decide(input({ ...post, grants: [g], destinations: [page, outside] })).effect).toBe("ask");
  });

  it("ask-read-new-destination: a read from an ungranted origin asks; a fetch grant does not cover web.request", () => {
    expect(decide(input())).toMatchObject({ effect: "ask", ruleId: "ask-read-new-destination" });
    const g = grant("web.fetch", { kind: "always" }, { destination: "news.example" });
    expect(decide(input({ grants: [g] })).effect).toBe("allow");
    expect(decide(input({ grants: [g], capability: "web.request", access: "write" })).effect).toBe("ask");
  });

  it("allow-granted: a grant of another capability or another origin does not allow", () => {
    expect(decide(input({ grants: [grant("web.fetch", { kind: "always" }, { destination: "https://news.example" })] })).effect).toBe("allow");
    expect(decide(input({ grants: [grant("email.send", { kind: "always" })] })).effect).toBe("ask");
    expect(decide(input({ grants: [grant("web.fetch", { kind: "always" }, { destination: "https://evil.example" })] })).effect).toBe("ask");
  });

  it("default: no matching rule asks (fail closed)", () => {
    expect(decide(input(), [])).toMatchObject({ effect: "ask", ruleId: "default" });
  });
});

describe("grant scopes", () => {
  const scoped = (scope: GrantScope, extra: Partial<Grant> = {}) => input({ grants: [grant("web.fetch", scope, { destination: "https://news.example" }, extra)] });

  it("task grants cover their task only", () => {
    expect(decide(scoped({ kind: "task", taskId: asId("task", "task_a") })).effect).toBe("allow");
    expect(decide({ ...scoped({ kind: "task", taskId: asId("task", "task_a") }), taskId: "task_b" }).effect).toBe("ask");
    expect(decide({ ...scoped({ kind: "task", taskId: asId("task", "task_a") }), taskId: null }).effect).toBe("ask");
  });

  it("session grants cover their session only", () => {
    expect(decide(scoped({ kind: "session", sessionId: "ses_1" })).effect).toBe("allow");
    expect(decide({ ...scoped({ kind: "session", sessionId: "ses_1" }), sessionId: "ses_2" }).effect).toBe("ask");
  });

  it("until grants cover until they expire", () => {
    expect(decide(scoped({ kind: "until", until: new Date(now.getTime() + 1000) })).effect).toBe("allow");
    expect(decide(scoped({ kind: "until", until: new Date(now.getTime() - 1) })).effect).toBe("ask");
    expect(decide(scoped({ kind: "until", until: now })).effect).toBe("ask");
  });

  it("revoked or consumed grants cover nothing", () => {
    expect(decide(scoped({ kind: "always" }, { revokedAt: now })).effect).toBe("ask");
    expect(decide(scoped({ kind: "once" }, { consumedAt: now })).effect).toBe("ask");
    expect(decide(scoped({ kind: "once" })).effect).toBe("allow");
  });

  it("prefers a lasting grant over spending a once-grant", () => {
    const once = grant("web.fetch", { kind: "once" }, { destination: "https://news.example" });
    const always = grant("web.fetch", { kind: "always" }, { destination: "https://news.example" });
    expect(decide(input({ grants: [once, always] })).grant).toBe(always);
  });
});

describe("policy as data", () => {
  it("deny beats allow: an added deny rule wins over a grant", () => {
    const policy = parsePolicy([
      ...defaultPolicy,
      { id: "no-evil", description: "never evil", effect: "deny", match: { capability: "web.*", destination: ["url"] } },
    ]);
    const g = grant("web.fetch", { kind: "always" }, { destination: "https://news.example" });
    expect(decide(input({ grants: [g] }), policy)).toMatchObject({ effect: "deny", ruleId: "no-evil" });
    expect(decide(input({ grants: [g], capability: "mail.read" }), policy).effect).not.toBe("deny");
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
