/**
 * Property tests of the grant matcher (`patternCovers`): random action descriptors against random
 * grant patterns and against the patterns cards make. Small value pools make collisions (same
 * host, same path, same digest) frequent, so "almost the same action" is tested as much as
 * "a different action".
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { targetKey, type ActionDescriptor, type ActionTarget } from "../../../core/policy/descriptor.js";
import {
  patternCovers,
  patternFor,
  sameAction,
  type GrantPattern,
  type TargetPattern,
} from "../../../core/policy/patterns.js";

const hosts = ["api.example", "news.example", "xn--pple-43d.com", "127.0.0.1"];
const paths = ["/", "/notes", "/notes/1", "/account/delete", "/a/b"];
const files = ["notes.txt", "a/b.txt", "secrets.txt"];
const recipients = ["bob@example.com", "eve@evil.example"];
const digests = ["0".repeat(64), "1".repeat(64), "f".repeat(64)];
const tools = ["http_fetch", "http_request", "files_write", "browser_submit"];
const capabilities = ["web.fetch", "web.request", "files.write"];
const methods = ["GET", "POST", "PUT", "DELETE", "WRITE", "SUBMIT"];

const urlTarget = fc.record({
  scheme: fc.constantFrom<"http" | "https">("http", "https"),
  host: fc.constantFrom(...hosts),
  port: fc.constantFrom(80, 443, 8443),
  path: fc.constantFrom(...paths),
}).map((t): ActionTarget => ({ kind: "url", ...t, href: `${t.scheme}://${t.host}:${t.port}${t.path}` }));

const target: fc.Arbitrary<ActionTarget> = fc.oneof(
  { weight: 4, arbitrary: urlTarget },
  { weight: 2, arbitrary: fc.constantFrom(...files).map((path): ActionTarget => ({ kind: "file", path })) },
  { weight: 1, arbitrary: fc.constantFrom(...recipients).map((address): ActionTarget => ({ kind: "recipient", address })) },
  { weight: 1, arbitrary: fc.constant<ActionTarget>({ kind: "blocked", value: "file:///etc/passwd", reason: "scheme", code: "scheme_not_allowed" }) },
);

const descriptor: fc.Arbitrary<ActionDescriptor> = fc.record({
  tool: fc.constantFrom(...tools),
  capability: fc.constantFrom(...capabilities),
  access: fc.constantFrom<"read" | "write">("read", "write"),
  method: fc.constantFrom(...methods),
  targets: fc.uniqueArray(target, { maxLength: 3, selector: targetKey }),
  digest: fc.constantFrom(...digests),
}).map((d) => ({ v: 1 as const, ...d }));

const targetPattern: fc.Arbitrary<TargetPattern> = fc.oneof(
  fc.record({
    kind: fc.constant("url" as const),
    scheme: fc.constantFrom<"http" | "https">("http", "https"),
    host: fc.constantFrom(...hosts),
    port: fc.constantFrom(80, 443, 8443),
    path: fc.constantFrom(...paths),
    paths: fc.constantFrom<"exact" | "any">("exact", "any"),
  }),
  fc.constantFrom(...files).map((path): TargetPattern => ({ kind: "file", path })),
  fc.constantFrom(...recipients).map((address): TargetPattern => ({ kind: "recipient", address })),
);

const randomPattern: fc.Arbitrary<GrantPattern> = fc.record({
  tool: fc.constantFrom(...tools),
  capability: fc.constantFrom(...capabilities),
  method: fc.constantFrom(...methods),
  targets: fc.array(targetPattern, { maxLength: 3 }),
  digest: fc.option(fc.constantFrom(...digests), { nil: null }),
}).map((p) => ({ v: 1 as const, ...p }));

/** An independent statement of what a pattern may cover (the oracle): written from the words. */
function allowedByWords(p: GrantPattern, d: ActionDescriptor): boolean {
  if (p.tool !== d.tool || p.capability !== d.capability || p.method !== d.method) return false;
  if (d.targets.some((t) => t.kind === "blocked")) return false;
  if (p.digest !== null && p.digest !== d.digest) return false;
  if (d.targets.length === 0) return p.targets.length === 0;
  return d.targets.every((t) =>
    p.targets.some((q) => {
      if (t.kind === "url" && q.kind === "url") return q.scheme === t.scheme && q.host === t.host && q.port === t.port && (q.paths === "any" || q.path === t.path);
      if (t.kind === "file" && q.kind === "file") return q.path === t.path;
      if (t.kind === "recipient" && q.kind === "recipient") return q.address === t.address;
      return false;
    }),
  );
}

const runs = { numRuns: 4000 };

describe("patternCovers (property tests)", () => {
  it("never covers more than the pattern states: another tool, capability, method, host, port, path (exact), file, recipient or payload is never covered", () => {
    fc.assert(
      fc.property(randomPattern, descriptor, (p, d) => {
        if (patternCovers(p, d)) expect(allowedByWords(p, d)).toBe(true);
      }),
      runs,
    );
  });

  it("a payload-open pattern covers everything its words allow", () => {
    fc.assert(
      fc.property(randomPattern, descriptor, (p, d) => {
        if (p.digest === null) expect(patternCovers(p, d)).toBe(allowedByWords(p, d));
      }),
      runs,
    );
  });

  it("Approve once (the exact pattern of an action) covers that action and no other", () => {
    fc.assert(
      fc.property(descriptor, descriptor, (a, b) => {
        const p = patternFor(a, "exact");
        if (p === null) {
          expect(a.targets.some((t) => t.kind === "blocked")).toBe(true);
          return;
        }
        expect(patternCovers(p, a)).toBe(true);
        expect(patternCovers(p, b)).toBe(sameAction(a, b));
      }),
      runs,
    );
  });

  it("a wider scope's pattern covers the action shown, keeps tool/method/targets fixed, and widens paths only for reads", () => {
    fc.assert(
      fc.property(descriptor, descriptor, (a, b) => {
        const p = patternFor(a, "payload");
        if (p === null) return;
        expect(patternCovers(p, a)).toBe(true);
        if (!patternCovers(p, b)) return;
        expect([b.tool, b.capability, b.method]).toEqual([a.tool, a.capability, a.method]);
        for (const t of b.targets) {
          const shown = a.targets.some((s) => {
            if (s.kind === "url" && t.kind === "url") return s.scheme === t.scheme && s.host === t.host && s.port === t.port && (a.access === "read" || s.path === t.path);
            return targetKey(s) === targetKey(t);
          });
          expect(shown).toBe(true);
        }
      }),
      runs,
    );
  });

  it("a mutated action (one field changed) is never covered by the original's once-grant", () => {
    const mutation = fc.constantFrom("tool", "capability", "method", "digest", "path", "host", "port", "file");
    fc.assert(
      fc.property(descriptor, mutation, (a, field) => {
        const p = patternFor(a, "exact");
        if (p === null) return;
        const b: ActionDescriptor = structuredClone(a);
        const first = b.targets[0];
        switch (field) {
          case "tool": b.tool = `${a.tool}_other`; break;
          case "capability": b.capability = `${a.capability}.other`; break;
          case "method": b.method = a.method === "POST" ? "DELETE" : "POST"; break;
          case "digest": b.digest = a.digest === digests[0] ? digests[1]! : digests[0]!; break;
          case "path": if (first?.kind === "url") first.path = `${first.path}x`; else return; break;
          case "host": if (first?.kind === "url") first.host = `x${first.host}`; else return; break;
          case "port": if (first?.kind === "url") first.port = first.port + 1; else return; break;
          case "file": if (first?.kind === "file") first.path = `${first.path}.bak`; else return; break;
        }
        expect(patternCovers(p, b)).toBe(false);
      }),
      runs,
    );
  });
});
