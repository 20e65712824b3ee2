/**
 * Webhook event → resume: an outside service calls `POST /hooks/:id`; the body resumes every task
 * waiting for that hook, as untrusted data stored with the task (so a crash right after the call loses
 * nothing). An event that comes before its task waits — the service may call as soon as the person
 * has the URL, while the activation that made the hook still runs — is kept in the store (the newest
 * {@link hookEventRetention}.perHook per hook, for a day) and resumes the task as soon as it starts
 * waiting for the hook. Creating a hook sends its URL and secret to the person directly, never to
 * the model.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock.js";
import { asId, type HookId } from "../ids.js";
import type { Outbound } from "../outbox/index.js";
import type { Store } from "../storage/index.js";
import type { Person } from "../persons/records.js";
import type { Task } from "../tasks/records.js";
import type { Trigger } from "../tasks/index.js";
import type { Hook } from "./records.js";

/**
 * Result of {@link WebhookEvents.receive}: unknown hook (404), wrong secret (401), or how many tasks
 * resumed — and `kept` when none waited yet and the event was kept for the task.
 */
export type HookEventResult = { status: "unknown" } | { status: "forbidden" } | { status: "accepted"; resumed: number; kept: boolean };

/** How long an event that came before its task waited is kept, and how many per hook (the newest). */
export const hookEventRetention = { ms: 24 * 3_600_000, perHook: 10 };

export class WebhookEvents {
  constructor(
    private readonly deps: {
      store: Pick<Store, "hooks" | "tasks" | "audit" | "hookEvents">;
      clock: Clock;
      /** Base URL people give outside services, e.g. `https://familiar.example.com` (read when needed). */
      publicUrl: () => string;
      /** The task loop, poked when tasks resumed. */
      tasks: { poke(): void };
      /** Where the hook's URL and secret are sent to the person. */
      outbound: Pick<Outbound, "queue">;
    },
  ) {}

  /**
   * An outside service called a webhook. The secret (header `X-Familiar-Hook-Secret`) is compared in
   * constant time with the stored hash; the body resumes every task waiting for the hook.
   */
  receive = async (hookId: string, secret: string, body: string): Promise<HookEventResult> => {
    const { store, clock } = this.deps;
    const hook = await store.hooks.getHook(asId("hook", hookId));
    if (!hook) return { status: "unknown" };
    const given = createHash("sha256").update(secret).digest();
    const expected = Buffer.from(hook.secretHash, "hex");
    if (expected.length !== given.length || !timingSafeEqual(given, expected)) {
      await store.audit.appendAudit({ personId: hook.personId, kind: "hook.rejected", summary: `webhook ${hook.id}: wrong secret`, data: { hookId: hook.id } });
      return { status: "forbidden" };
    }
    await store.hooks.touchHook(hook.id, clock.now());
    let resumed = await this.resumeWaiting(hook, body);
    let kept = false;
    if (resumed === 0) {
      await store.hookEvents.keepHookEvent({ hookId: hook.id, body, now: clock.now(), maxPerHook: hookEventRetention.perHook });
      // Its task may have started waiting in the meantime: hand the event over now.
      resumed = await this.resumeKept(hook.id);
      kept = resumed === 0;
    }
    const what = kept ? "kept until its task waits" : `resuming ${resumed} task(s)`;
    await store.audit.appendAudit({ personId: hook.personId, kind: "hook.event", summary: `webhook "${hook.description}" received; ${what}`, data: { hookId: hook.id, bytes: body.length, kept } });
    if (resumed > 0) this.deps.tasks.poke();
    return { status: "accepted", resumed, kept };
  };

  /**
   * A task started waiting for `hookId`: the oldest event kept for it (received within the last
   * day) resumes it. Returns how many tasks resumed (0 when nothing was kept or nobody waits).
   */
  resumeKept = async (hookId: HookId): Promise<number> => {
    const { store, clock } = this.deps;
    if ((await store.tasks.findWaitingTasks({ kind: "event", hookId })).length === 0) return 0;
    const hook = await store.hooks.getHook(hookId);
    if (!hook) return 0;
    const event = await store.hookEvents.takeHookEvent({ hookId, notBefore: new Date(clock.now().getTime() - hookEventRetention.ms) });
    if (!event) return 0;
    const resumed = await this.resumeWaiting(hook, event.body);
    // Lost a race with another resume: the event stays kept for the next wait.
    if (resumed === 0) await store.hookEvents.keepHookEvent({ hookId, body: event.body, now: event.receivedAt, maxPerHook: hookEventRetention.perHook });
    else this.deps.tasks.poke();
    return resumed;
  };

  /** Resumes every task waiting for `hook` with `body` as its untrusted event; returns how many. */
  private async resumeWaiting(hook: Hook, body: string): Promise<number> {
    const { store, clock } = this.deps;
    const waiting = await store.tasks.findWaitingTasks({ kind: "event", hookId: hook.id });
    const input: Trigger = { kind: "event", hookId: hook.id, description: hook.description, observations: [{ source: `webhook ${hook.id}`, text: body }] };
    let resumed = 0;
    for (const task of waiting) {
      if (await store.tasks.resumeWaitingTask({ taskId: task.id, wait: { kind: "event", hookId: hook.id }, input, now: clock.now() })) resumed++;
    }
    return resumed;
  }

  /** Creates a webhook for a task and sends its URL and secret to the person directly (never to the model). */
  create = async (person: Person, task: Task, description: string): Promise<HookId> => {
    const { store } = this.deps;
    const secret = randomBytes(24).toString("base64url");
    const hook = await store.hooks.createHook({ personId: person.id, description, secretHash: createHash("sha256").update(secret).digest("hex") });
    const url = `${this.deps.publicUrl().replace(/\/$/, "")}/hooks/${hook.id}`;
    await this.deps.outbound.queue({
      personId: person.id,
      deliveryKey: `hook:${hook.id}`,
      text: `To trigger “${description}” (task: ${task.title}), have the service send an HTTP POST to ${url} with the header \`X-Familiar-Hook-Secret: ${secret}\`. Keep the secret private.`,
    });
    return hook.id;
  };
}
