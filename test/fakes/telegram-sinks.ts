import Database from "better-sqlite3";
import { pino, type Logger } from "pino";
import type { InboundEvent, InboundOutcome, InboundSink } from "../../core/channels/port.js";

/**
 * Sinks and a log capture for the Telegram adapter tests: the adapter only sees an `InboundSink`,
 * so these stand in for the core (recording, in-memory dedupe, durable dedupe on a SQLite file).
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
 * Durable dedupe: processed update ids are written to a SQLite file before the sink resolves (as
 * the core's InboundRepository does), so a second process sees what the first one recorded.
 * `afterRecord` runs after the write and its promise is what the sink waits for (a command's side
 * effects still running when the process is killed).
 */
export function durableDedupeSink(path: string, afterRecord: (event: InboundEvent, fresh: boolean) => Promise<void> = async () => {}) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE IF NOT EXISTS processed_updates (update_id TEXT PRIMARY KEY, text TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO processed_updates (update_id, text) VALUES (?, ?) ON CONFLICT (update_id) DO NOTHING");
  const outcomes: { updateId: string; status: InboundOutcome["status"] }[] = [];
  const sink: InboundSink = async (event) => {
    const fresh = insert.run(event.updateId, event.kind === "message" ? event.text : event.buttonId).changes === 1;
    const status = fresh ? "accepted" : "duplicate";
    outcomes.push({ updateId: event.updateId, status });
    await afterRecord(event, fresh);
    return { status };
  };
  const processed = () => db.prepare("SELECT update_id AS updateId FROM processed_updates ORDER BY update_id").all() as { updateId: string }[];
  return { sink, outcomes, processed, close: () => void db.close() };
}

/** A pino logger whose JSON lines are kept in `lines` (level as a number: 40 warn, 50 error). */
export function captureLogger(): { logger: Logger; lines: { level: number; msg: string; [key: string]: unknown }[] } {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}
