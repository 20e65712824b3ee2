/**
 * Webhook events kept for a task that does not wait yet (issue 18): an outside service may call a
 * hook right after its URL reached the person, while the activation that made it is still running.
 * Such an event resumed nothing; it is kept (bounded: the newest few per hook, for a day) and taken
 * by the task as soon as it starts waiting for the hook.
 */
import type { HookId } from "../ids.js";

/** An event a hook received while no task waited for it. */
export interface KeptHookEvent {
  hookId: HookId;
  /** The request body as received (untrusted). */
  body: string;
  receivedAt: Date;
}

/** Webhook events waiting for their task. */
export interface HookEventRepository {
  /**
   * Keeps an event of `hookId` received at `now`. At most `maxPerHook` events are kept per hook:
   * keeping one more drops the oldest.
   */
  keepHookEvent(input: { hookId: HookId; body: string; now: Date; maxPerHook: number }): Promise<void>;
  /**
   * Takes (removes and returns) the hook's oldest kept event received at or after `notBefore`;
   * older ones are dropped. Atomic: one event is taken by one caller. Null when none is kept.
   */
  takeHookEvent(input: { hookId: HookId; notBefore: Date }): Promise<KeptHookEvent | null>;
}
