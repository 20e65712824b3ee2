/** MongoDB implementation of `JournalRepository` (`tool_journal`, unique on idempotencyKey). */
import type { Clock } from "../../clock.js";
import { ConflictError, NotFoundError } from "../../errors.js";
import type { TaskId } from "../../ids.js";
import type { JournalRepository } from "../index.js";
import type { Json } from "../../json.js";
import type { JournalEntry, NewJournalIntent } from "../../tasks/records.js";
import { creationKey } from "./collections.js";
import type { JournalDoc } from "./documents.js";
import { encodeJson, toJournalEntry } from "./codec.js";
import type { DbLike } from "./driver.js";
import { openJournalEntryFilter } from "./filters.js";
import { openColl } from "./session.js";

/** The tool-call journal: intent once per idempotency key, outcome once per entry (`tool_journal`). */
export class MongoJournalRepository implements JournalRepository {
  private readonly journal;

  constructor(
    db: DbLike,
    private readonly clock: Clock,
  ) {
    this.journal = openColl<JournalDoc>(db, "journal", "journal entry");
  }

  async recordIntent(input: NewJournalIntent): Promise<JournalEntry> {
    const doc: JournalDoc = {
      _id: creationKey("jrn"),
      taskId: input.taskId,
      step: input.step,
      idempotencyKey: input.idempotencyKey,
      tool: input.tool,
      args: encodeJson(input.args),
      sideEffect: input.sideEffect,
      intentAt: input.intentAt ?? this.clock.now(),
      outcome: null,
    };
    await this.journal.insertOne(doc);
    return toJournalEntry(doc);
  }

  async recordOutcome(
    idempotencyKey: string,
    outcome: { ok: true; result: Json } | { ok: false; error: string },
    now: Date,
  ): Promise<JournalEntry> {
    const stored = outcome.ok
      ? { ok: true as const, result: encodeJson(outcome.result), at: now }
      : { ok: false as const, error: outcome.error, at: now };
    const doc = await this.journal.findOneAndUpdate(openJournalEntryFilter(idempotencyKey), { $set: { outcome: stored } });
    if (doc !== null) return toJournalEntry(doc);
    const existing = await this.journal.findOne({ idempotencyKey }, { projection: { _id: 1 } });
    if (existing === null) throw new NotFoundError("journal entry", idempotencyKey);
    throw new ConflictError(`journal entry ${idempotencyKey} already has an outcome; a step's outcome is recorded once`);
  }

  async getEntry(idempotencyKey: string): Promise<JournalEntry | null> {
    const doc = await this.journal.findOne({ idempotencyKey });
    return doc === null ? null : toJournalEntry(doc);
  }

  async listJournal(taskId: TaskId): Promise<JournalEntry[]> {
    const docs = await this.journal.find({ taskId }, { sort: { step: 1, _id: 1 } });
    return docs.map(toJournalEntry);
  }
}
