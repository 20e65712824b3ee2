/**
 * Webhook event → resume: an outside service calls `POST /hooks/:id`; the body resumes every task
 * waiting for that hook, as untrusted data stored with the task (so a crash right after the call loses
 * nothing). Creating a hook sends its URL and secret to the person directly, never to the model.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock.js";
import { asId, type HookId } from "../ids.js";
import type { Outbound } from "../outbox/index.js";
import type { Store } from "../storage/index.js";
import type { Person } from "../persons/records.js";
import type { Task } from "../tasks/records.js";
import type { Trigger } from "../tasks/index.js";

/** Result of {@link WebhookEvents.receive}: unknown hook (404), wrong secret (401), or how many tasks resumed. */
export type HookEventResult = { status: "unknown" } | { status: "forbidden" } | { status: "accepted"; resumed: number };

export class WebhookEvents {
  constructor(
    private readonly deps: {
      store: Pick<Store, "hooks" | "tasks" | "audit">;
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
    const waiting = await store.tasks.findWaitingTasks({ kind: "event", hookId: hook.id });
    const input: Trigger = { kind: "event", hookId: hook.id, description: hook.description, observations: [{ source: `webhook ${hook.id}`, text: body }] };
    let resumed = 0;
    for (const task of waiting) {
      if (await store.tasks.resumeWaitingTask({ taskId: task.id, wait: { kind: "event", hookId: hook.id }, input, now: clock.now() })) resumed++;
    }
    await store.audit.appendAudit({ personId: hook.personId, kind: "hook.event", summary: `webhook "${hook.description}" received; resuming ${resumed} task(s)`, data: { hookId: hook.id, bytes: body.length } });
    if (resumed > 0) this.deps.tasks.poke();
    return { status: "accepted", resumed };
  };

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
