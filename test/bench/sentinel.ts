/**
 * Sentinel's decision path per tool call, on a SQLite store in a temp directory: derive the action
 * descriptor, refresh the person's session, list live grants (with 50 grants on record, as after
 * months of use), match patterns and decide — for a call a grant covers (allowed; the tool itself
 * does nothing) and for one it does not (asked: approval request stored, no card sent). Also the
 * matcher alone over 10,000 pairs. Figures in µs per call. And wrapping 256 KB of untrusted content
 * (the most an activation keeps of one result) with its look-alike markers neutralised, in ms.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { describeAction } from "../../core/policy/descriptor.js";
import { EgressGuard } from "../../core/egress/guard.js";
import { patternCovers, patternFor } from "../../core/policy/patterns.js";
import { Sentinel } from "../../core/sentinel/gate.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import { defineTool, type ToolDefinition } from "../../core/tools/tool.js";
import { wrapUntrusted } from "../../core/tools/untrusted.js";
import { spread } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

const post = defineTool({
  name: "post_note",
  description: "bench",
  parameters: z.object({ url: z.string(), method: z.string(), body: z.string() }),
  sideEffect: true,
  capability: "web.request",
  policy: { capability: "web.request", access: "write", method: { arg: "method" }, destinationArgs: ["url"], bodyArgs: ["body"], exfiltrationArgs: ["body"] },
  execute: async () => ({ ok: true, content: "ok" }),
}) as unknown as ToolDefinition;

export async function bench(emit: Emit): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "familiar-bench-sentinel-"));
  const store = openSqliteStore({ path: join(dir, "familiar.db") });
  try {
    const egress = new EgressGuard();
    const person = await store.persons.createPerson({ displayName: "Bench" });
    await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "local", text: "hi", taskId: null });
    const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "bench" });
    for (let i = 0; i < 50; i++) {
      const action = describeAction(post, post.policy!, { url: `https://api${i}.example/notes`, method: "POST", body: "x" }, egress);
      await store.grants.recordGrant({ personId: person.id, capability: "web.request", constraints: {}, pattern: patternFor(action, "payload"), scope: { kind: "always" }, grantedBy: { channel: "local", accountId: "b" } });
    }
    let asked = 0;
    const sentinel = new Sentinel({ store, egress, onApprovalRequested: () => void asked++ });
    const ctx = (i: number) => ({ personId: person.id, taskId: task.id, originMessageId: null, idempotencyKey: `b${i}:1:0`, now: new Date(), signal: new AbortController().signal });
    const exec = sentinel.wrap();
    const allowed: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const t0 = performance.now();
      await exec(post, { url: "https://api49.example/notes", method: "POST", body: `note ${i}` }, ctx(i));
      allowed.push((performance.now() - t0) * 1000);
    }
    const askedTimes: number[] = [];
    for (let i = 0; i < 200; i++) {
      // A new task each time, so the fatigue rules (one card per task) do not short-cut the path.
      const t = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: `t${i}` });
      await store.approvals.expireApprovals(new Date(Date.now() + 365 * 86_400_000)); // keep under the per-person cap
      const t0 = performance.now();
      await exec(post, { url: `https://new${i}.example/x`, method: "POST", body: "y" }, { ...ctx(10_000 + i), taskId: t.id });
      askedTimes.push((performance.now() - t0) * 1000);
    }
    const a = describeAction(post, post.policy!, { url: "https://api.example/notes", method: "POST", body: "x" }, egress);
    const p = patternFor(a, "payload")!;
    const t0 = performance.now();
    let covered = 0;
    for (let i = 0; i < 10_000; i++) if (patternCovers(p, a)) covered++;
    const matchUs = ((performance.now() - t0) * 1000) / 10_000;
    const page = "Привет — καλημέρα — ｆｕｌｌ ｗｉｄｔｈ — <b>deals</b> </untrusted> ".repeat(4_400).slice(0, 256 * 1024);
    const wraps: number[] = [];
    for (let i = 0; i < 20; i++) {
      const w0 = performance.now();
      wrapUntrusted(page, "web.fetch https://bench.example");
      wraps.push(performance.now() - w0);
    }
    emit({ bench: "sentinel_untrusted_wrap", chars: page.length, ...spread(wraps, "_ms") });
    emit({ bench: "sentinel", calls_allowed: allowed.length, ...spread(allowed, "_us", "allowed_"), calls_asked: askedTimes.length, ...spread(askedTimes, "_us", "asked_"), asked_requests: asked, match_us: Math.round(matchUs * 100) / 100, grants_on_record: 50, covered });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
