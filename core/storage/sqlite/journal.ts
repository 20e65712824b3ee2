import { ConflictError, DuplicateKeyError, NotFoundError } from "../../errors.js";
import { asId, type TaskId } from "../../ids.js";
import type { JournalRepository } from "../index.js";
import type { Json } from "../../json.js";
import type { JournalEntry, NewJournalIntent } from "../../tasks/records.js";
import { type Row, type SqliteContext, jsonText, ms, parseJson, toDate } from "./context.js";

function toEntry(row: Row): JournalEntry {
  let outcome: JournalEntry["outcome"] = null;
  if (row.outcome_ok === 1) outcome = { ok: true, result: parseJson<Json>(row.outcome_result), at: toDate(row.outcome_at) };
  else if (row.outcome_ok === 0) outcome = { ok: false, error: row.outcome_error as string, at: toDate(row.outcome_at) };
  return {
    taskId: asId("task", row.task_id as string),
    step: row.step as number,
    idempotencyKey: row.idempotency_key as string,
    tool: row.tool as string,
    args: parseJson<Json>(row.args),
    sideEffect: row.side_effect === 1,
    intentAt: toDate(row.intent_at),
    outcome,
  };
}

/** The tool-call journal: intent before a call, outcome after, keyed by idempotency key. */
export class SqliteJournalRepository implements JournalRepository {
  constructor(private readonly ctx: SqliteContext) {}

  recordIntent(input: NewJournalIntent): Promise<JournalEntry> {
    return this.ctx.run(
      () =>
        toEntry(
          this.ctx
            .stmt(
              `INSERT INTO journal (idempotency_key, task_id, step, tool, args, side_effect, intent_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
            )
            .get(input.idempotencyKey, input.taskId, input.step, input.tool, jsonText(input.args), input.sideEffect ? 1 : 0, ms(input.intentAt ?? this.ctx.clock.now())) as Row,
        ),
      {
        duplicate: (cause) => new DuplicateKeyError("journal entry", input.idempotencyKey, { cause }),
        references: { entity: "task", id: input.taskId },
      },
    );
  }

  recordOutcome(idempotencyKey: string, outcome: { ok: true; result: Json } | { ok: false; error: string }, now: Date): Promise<JournalEntry> {
    return this.ctx.run(() => {
      const row = this.ctx
        .stmt(
          `UPDATE journal SET outcome_ok = ?, outcome_result = ?, outcome_error = ?, outcome_at = ?
           WHERE idempotency_key = ? AND outcome_ok IS NULL RETURNING *`,
        )
        .get(outcome.ok ? 1 : 0, outcome.ok ? jsonText(outcome.result) : null, outcome.ok ? null : outcome.error, ms(now), idempotencyKey) as Row | undefined;
      if (row) return toEntry(row);
      const exists = this.ctx.stmt("SELECT 1 FROM journal WHERE idempotency_key = ?").get(idempotencyKey);
      if (!exists) throw new NotFoundError("journal entry", idempotencyKey);
      throw new ConflictError(`journal entry ${idempotencyKey} already has an outcome; outcomes are recorded once`);
    });
  }

  getEntry(idempotencyKey: string): Promise<JournalEntry | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM journal WHERE idempotency_key = ?").get(idempotencyKey) as Row | undefined;
      return row ? toEntry(row) : null;
    });
  }

  listJournal(taskId: TaskId): Promise<JournalEntry[]> {
    return this.ctx.run(() =>
      (this.ctx.stmt("SELECT * FROM journal WHERE task_id = ? ORDER BY step, intent_at, idempotency_key").all(taskId) as Row[]).map(toEntry),
    );
  }
}
