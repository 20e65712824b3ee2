/**
 * Pending calls of recurring work (issue 18 item 9). When an activation of a recurring job (a cron
 * wake-up, a goal's check-in) asks for approval, the job is not blocked: the asking activation is
 * **parked** in the checkpoint with its approval id, the job waits for its next occurrence as
 * usual, and later occurrences run as new activations (they start untainted unless the job
 * itself is). While the card waits, those occurrences cannot show another card (one card per task;
 * Sentinel tells the model the card is waiting). The decision resumes the parked activation — its
 * own history and journal — as one pending call: approved, the call runs; denied or expired, the
 * model is told. Watches (a wake-up on connection changes that is not once) are recurring work too:
 * the next matching change runs as a new activation while the card waits, and the resumed call
 * re-arms the watch after the latest change it handled, not its own. One-shot work and turns still
 * wait for their card as before.
 */
import type { RuntimeState, ParkedRuntime, Trigger } from "../tasks/index.js";

/** The highest activation number the task ever started (the next new one is this + 1). */
export function highestActivation(runtime: RuntimeState): number {
  return Math.max(runtime.activation, runtime.lastActivation ?? 0, runtime.parked?.lastActivation ?? 0, runtime.parked?.activation ?? 0);
}

/**
 * The runtime to resume when `input` decides the parked call: the parked activation, open, with the
 * task's highest activation and pause mark kept. Otherwise `previous` unchanged.
 */
export function unpark(previous: RuntimeState, input: Trigger | null | undefined): RuntimeState {
  const parked = previous.parked;
  if (input?.kind !== "approval" || parked?.approvalId !== input.approvalId) return previous;
  const changeSeq = Math.max(previous.changeSeq ?? 0, previous.origin?.kind === "change" ? previous.origin.seq : 0);
  return {
    ...parked,
    open: true,
    lastActivation: highestActivation(previous),
    ...(changeSeq > 0 && { changeSeq }),
    ...(previous.pausedAt !== undefined && { pausedAt: previous.pausedAt }),
  };
}

/** What follows an activation for the runtime state, given what it asked. */
export interface Settled {
  /** The runtime to store. */
  after: RuntimeState;
  /** The approval the task itself waits for (null: it does not wait for a card — maybe parked). */
  waitFor: string | null;
  /** An approval to check right after release (it may have been decided while the activation ran). */
  watch: string | null;
}

/**
 * Settles the runtime after an activation: a one-shot task waits for its new card with the
 * activation kept open; a recurring task parks the activation that made a new card and goes on
 * with its schedule; a pause (the denial breaker) is remembered; otherwise the activation closes,
 * keeping any parked call.
 */
export function settleRuntime(runtime: RuntimeState, asked: { approvalId: string | null; pause: string | null }, recurring: boolean, now: Date): Settled {
  const { parked: kept, ...current } = runtime;
  const lastActivation = highestActivation(runtime);
  const closed: RuntimeState = { ...current, open: false, approvalId: null, resumes: 0, lastActivation, ...(kept !== undefined && { parked: kept }) };
  if (asked.approvalId !== null && !recurring) {
    return { after: { ...runtime, open: true, approvalId: asked.approvalId, lastActivation }, waitFor: asked.approvalId, watch: asked.approvalId };
  }
  if (asked.approvalId !== null) {
    // The card already parked (an occurrence was told to wait for it): nothing new to park.
    if (kept?.approvalId === asked.approvalId) return { after: closed, waitFor: null, watch: asked.approvalId };
    const parked: ParkedRuntime = { ...current, open: true, approvalId: asked.approvalId, lastActivation };
    return { after: { ...closed, parked }, waitFor: null, watch: asked.approvalId };
  }
  const paused = asked.pause !== null ? { pausedAt: now.toISOString() } : {};
  return { after: { ...closed, ...paused }, waitFor: null, watch: kept?.approvalId ?? null };
}
