/**
 * What follows an activation — the one place that decides a task's next state, and the honest texts
 * for turns that produced no answer.
 */
import { asId } from "../ids.js";
import type { TaskState } from "../tasks/records.js";
import { nextCronTime } from "../time/index.js";
import type { ActivationOutcome } from "./activation.js";
import type { TaskCheckpoint, Trigger } from "../tasks/index.js";

/**
 * The task's next state after an activation, in this order: waiting for the approval it asked for,
 * for the webhook it created, for the person's reply; paused by the denial breaker; else, for
 * recurring work (a cron wake-up or a goal's check-in), waiting for its next occurrence after `now`,
 * and for a watch that is not once (a wake-up on connection changes), waiting for the next change
 * after the one that started it (`origin`); else failed (the model could not be reached) or done.
 */
export function nextState(checkpoint: TaskCheckpoint, outcome: Pick<ActivationOutcome, "requests" | "result">, now: Date, origin?: Trigger, changeSeq?: number): TaskState {
  const { requests, result } = outcome;
  if (requests.approvalId) return { status: "waiting", wait: { kind: "approval", approvalId: asId("approval", requests.approvalId) } };
  if (requests.waitForEvent) return { status: "waiting", wait: { kind: "event", hookId: requests.waitForEvent.hookId } };
  if (requests.waitForReply) return { status: "waiting", wait: { kind: "reply" } };
  if (requests.pause) return pausedState(checkpoint, now);
  const recurring = nextOccurrence(checkpoint, now);
  if (recurring) return { status: "waiting", wait: { kind: "time", until: recurring } };
  const watching = nextChangeWait(checkpoint, origin, changeSeq);
  if (watching) return watching;
  if (result.kind === "error") return { status: "failed", error: result.error.message };
  return { status: "done", result: result.kind === "reply" ? result.text.slice(0, 2_000) : null };
}

/**
 * The state of a task the denial breaker paused (core/approvals/denials.ts): background work is held
 * until the person resumes it (`/resume`, or resuming its goal), keeping its next occurrence; a
 * turn ends (the person was told, and their next message is a new turn).
 */
export function pausedState(checkpoint: TaskCheckpoint, now: Date): TaskState {
  if (checkpoint.kind === "turn") return { status: "done", result: null };
  return { status: "waiting", wait: { kind: "held", until: nextOccurrence(checkpoint, now) } };
}

/** Next occurrence after `now` of recurring work (cron in its time zone); null for one-shot work. */
export function nextOccurrence(checkpoint: TaskCheckpoint, now: Date): Date | null {
  if (checkpoint.kind === "wakeup" && "cron" in checkpoint.timing) return nextCronTime(checkpoint.timing.cron, checkpoint.timing.timezone, now);
  if (checkpoint.kind === "checkin") return nextCronTime(checkpoint.cron, checkpoint.timeZone, now);
  return null;
}

/**
 * The wait of a watch after one of its activations: the next change after the one that started it
 * (`origin`), or after `changeSeq` when later activations already handled later changes (a parked
 * call resumed); null for anything that is not a watch, or a watch that was once.
 */
export function nextChangeWait(checkpoint: TaskCheckpoint, origin: Trigger | undefined, changeSeq = 0): TaskState | null {
  if (checkpoint.kind !== "wakeup" || !("on" in checkpoint.timing) || checkpoint.timing.on.once) return null;
  const afterSeq = Math.max(origin?.kind === "change" ? origin.seq : 0, changeSeq);
  return { status: "waiting", wait: { kind: "change", afterSeq } };
}

/** Why an activation produced no answer (field case M1: the person gets an honest line, never a placeholder). */
export type NoAnswer = "empty" | "step_limit" | "error" | "no_model" | "aborted" | "reply";

/** Short honest texts for turns that produced no answer; `setupUrl` is where the setup page is. */
export function failureText(kind: NoAnswer, setupUrl = "http://127.0.0.1:3000/setup"): string {
  switch (kind) {
    case "step_limit":
      return "I ran out of steps while working on that. Say “continue” if you want me to keep going.";
    case "error":
      return "I couldn't reach my language model just now, so I can't answer yet. Please try again in a moment.";
    case "no_model":
      return `No model is configured yet, so I can't answer. Open Familiar's setup page in a browser (${setupUrl} on the Familiar machine) to choose one, or set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server).`;
    default:
      return "Sorry — I couldn't come up with an answer to that just now. Could you try again?";
  }
}
