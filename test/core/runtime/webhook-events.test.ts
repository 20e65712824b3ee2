/**
 * WebhookEvents on its own (core/runtime/webhook-event.ts), on a SQLite store: a hook's URL and
 * secret go to the person through the outbound door, never elsewhere; a call with the wrong secret is
 * refused and audited; the right one resumes exactly the tasks waiting for that hook, with the body
 * as an untrusted observation, once (a second call finds nothing waiting).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewOutboxMessage } from "../../../core/outbox/index.js";
import { WebhookEvents } from "../../../core/runtime/webhook-event.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Person } from "../../../core/persons/index.js";
import type { Task } from "../../../core/tasks/index.js";

describe("WebhookEvents", () => {
  let dir: string;
  let store: SqliteStore;
  let queued: NewOutboxMessage[];
  let pokes: number;
  let events: WebhookEvents;
  let person: Person;
  const now = new Date("2026-12-01T09:00:00Z");

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "familiar-hooks-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    queued = [];
    pokes = 0;
    events = new WebhookEvents({
      store,
      clock: { now: () => now },
      publicUrl: () => "https://familiar.example/",
      tasks: { poke: () => void pokes++ },
      outbound: {
        queue: async (message) => {
          queued.push(message);
          return store.outbox.enqueueOutbound(message, now);
        },
      },
    });
    person = await store.persons.createPerson({ displayName: "Ada" });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A task of the person's waiting for `hookId`. */
  async function waitingFor(hookId: string, title = "Deploy watch"): Promise<Task> {
    const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title });
    await store.tasks.claimTask({ taskId: task.id, owner: "A", now, leaseMs: 30_000 });
    return store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "waiting", wait: { kind: "event", hookId: hookId as never } }, now });
  }

  /** The URL and secret the person was sent for the hook. */
  function sent(): { hookId: string; secret: string } {
    const text = queued.at(-1)!.text;
    const url = /https:\/\/familiar\.example\/hooks\/(\S+) /.exec(text);
    const secret = /X-Familiar-Hook-Secret: ([A-Za-z0-9_-]+)/.exec(text);
    return { hookId: url![1]!, secret: secret![1]! };
  }

  it("sends the hook's URL and secret to the person, keyed by the hook, and stores only the secret's hash", async () => {
    const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "Deploy watch" });
    const hookId = await events.create(person, task, "CI finished");
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ personId: person.id, deliveryKey: `hook:${hookId}` });
    const { hookId: inUrl, secret } = sent();
    expect(inUrl).toBe(hookId);
    const hook = await store.hooks.getHook(hookId);
    expect(hook).not.toBeNull();
    expect(hook!.secretHash).not.toContain(secret);
    expect(JSON.stringify(hook)).not.toContain(secret);
  });

  it("answers unknown for a hook that does not exist and forbidden (audited) for a wrong secret, resuming nothing", async () => {
    const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "Deploy watch" });
    const hookId = await events.create(person, task, "CI finished");
    const waiting = await waitingFor(hookId);
    expect(await events.receive("hook_nope", sent().secret, "{}")).toEqual({ status: "unknown" });
    expect(await events.receive(hookId, "wrong", "{}")).toEqual({ status: "forbidden" });
    expect(await events.receive(hookId, `${sent().secret}x`, "{}")).toEqual({ status: "forbidden" });
    expect((await store.tasks.getTask(waiting.id))!.state).toEqual({ status: "waiting", wait: { kind: "event", hookId } });
    expect(pokes).toBe(0);
    const audit = await store.audit.listAudit(person.id);
    expect(audit.items.filter((a) => a.kind === "hook.rejected")).toHaveLength(2);
  });

  it("resumes every task waiting for the hook with the body as an untrusted observation, once, and pokes the task loop", async () => {
    const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "Deploy watch" });
    const hookId = await events.create(person, task, "CI finished");
    const first = await waitingFor(hookId, "first");
    const second = await waitingFor(hookId, "second");
    const other = await events.create(person, task, "other hook");
    const unrelated = await waitingFor(other, "unrelated");
    const { secret } = (() => {
      queued.pop();
      return sent();
    })();
    expect(await events.receive(hookId, secret, '{"status":"green"}')).toEqual({ status: "accepted", resumed: 2, kept: false });
    expect(pokes).toBe(1);
    for (const id of [first.id, second.id]) {
      const resumed = (await store.tasks.getTask(id))!;
      expect(resumed.state).toEqual({ status: "pending" });
      expect(resumed.checkpoint).toMatchObject({ input: { kind: "event", hookId, observations: [{ source: `webhook ${hookId}`, text: '{"status":"green"}' }] } });
    }
    expect((await store.tasks.getTask(unrelated.id))!.state.status).toBe("waiting");
    // Nobody waits any more: the event is kept for the next wait on the hook (issue 18), and it resumes that one.
    expect(await events.receive(hookId, secret, "again")).toEqual({ status: "accepted", resumed: 0, kept: true });
    expect(pokes).toBe(1);
    const third = await waitingFor(hookId, "third");
    expect(await events.resumeKept(hookId)).toBe(1);
    expect(pokes).toBe(2);
    expect((await store.tasks.getTask(third.id))!.checkpoint).toMatchObject({ input: { kind: "event", hookId, observations: [{ text: "again" }] } });
    expect(await events.resumeKept(hookId)).toBe(0);
  });
});
