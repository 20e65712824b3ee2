import type { Update } from "grammy/types";
import { pino, type Logger } from "pino";
import type { UpdateJournal } from "../../bots/telegram/polling.js";
import type { InboundEvent, InboundOutcome, InboundSink } from "../../core/channels/port.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";

/**
 * Sinks and a log capture for the Telegram adapter tests: the adapter only sees an `InboundSink`,
 * so these stand in for the core (recording, in-memory dedupe, durable dedupe in the SQLite store).
 */

/** A promise with its resolve function exposed (a turn or a sink the test releases). */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A sink recording every event; `answer` decides the outcome (default: accepted). */
export function recordingSink(answer: (event: InboundEvent) => Promise<InboundOutcome> | InboundOutcome = () => ({ status: "accepted" })) {
  const events: InboundEvent[] = [];
  const sink: InboundSink = async (event) => {
    events.push(event);
    return answer(event);
  };
  return { sink, events };
}

/**
 * Emulates the core's dedupe in memory: the first event of an update id is `accepted` (and
 * `onAccepted` runs, e.g. starting a turn, without being awaited), later ones are `duplicate`.
 */
export function dedupeSink(onAccepted: (event: InboundEvent) => void = () => {}) {
  const seen = new Set<string>();
  const outcomes: { updateId: string; status: InboundOutcome["status"] }[] = [];
  const sink: InboundSink = async (event) => {
    const status = seen.has(event.updateId) ? "duplicate" : "accepted";
    seen.add(event.updateId);
    outcomes.push({ updateId: event.updateId, status });
    if (status === "accepted") onAccepted(event);
    return { status };
  };
  return { sink, outcomes };
}

/**
 * Durable dedupe through the core's own SQLite `InboundRepository` (`openSqliteStore` on a file):
 * the update id is stored before the sink resolves, as the core does, so a second process sees what
 * the first one recorded. `afterRecord` runs after the write and the sink waits for it (a command's
 * side effects still running when the process is killed).
 */
export function durableDedupeSink(path: string, afterRecord: (event: InboundEvent, status: InboundOutcome["status"]) => Promise<void> = async () => {}) {
  const store = openSqliteStore({ path });
  const outcomes: { updateId: string; status: InboundOutcome["status"] }[] = [];
  const sink: InboundSink = async (event) => {
    const fresh = await store.inbound.markUpdateProcessed(event.channel, event.updateId, new Date());
    const status = fresh ? "accepted" : "duplicate";
    outcomes.push({ updateId: event.updateId, status });
    await afterRecord(event, status);
    return { status };
  };
  return { sink, outcomes, close: () => store.close() };
}

/**
 * An update journal in memory (for adapter tests that need no crash): `held` lists what is held,
 * `ops` every hold/release in order; `failHolds` makes the next holds throw, `holdGate` makes them wait.
 */
export function memoryJournal(initial: Update[] = []) {
  const held = new Map<number, Update>(initial.map((u) => [u.update_id, u]));
  const ops: string[] = [];
  const state = { failHolds: 0, holdGate: null as Promise<void> | null };
  const journal: UpdateJournal = {
    async hold(updates) {
      if (state.holdGate) await state.holdGate;
      if (state.failHolds > 0) {
        state.failHolds--;
        ops.push(`hold failed ${updates.map((u) => u.update_id).join(",")}`);
        throw new Error("store unavailable");
      }
      for (const u of updates) held.set(u.update_id, u);
      ops.push(`hold ${updates.map((u) => u.update_id).join(",")}`);
    },
    async release(updateId) {
      held.delete(updateId);
      ops.push(`release ${updateId}`);
    },
    async held() {
      return [...held.values()].sort((a, b) => a.update_id - b.update_id);
    },
  };
  return { journal, held, ops, state };
}

/** A pino logger whose JSON lines are kept in `lines` (level as a number: 40 warn, 50 error). */
export function captureLogger(): { logger: Logger; lines: { level: number; msg: string; [key: string]: unknown }[] } {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}
