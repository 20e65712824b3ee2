import { asId, type PersonId } from "../../ids.js";
import type { ModelUsageDay, ModelUsageRepository } from "../index.js";
import { type Row, type SqliteContext, ms, toDate } from "./context.js";

function toUsage(row: Row): ModelUsageDay {
  return {
    personId: asId("person", row.person_id as string),
    day: row.day as string,
    promptTokens: row.prompt_tokens as number,
    completionTokens: row.completion_tokens as number,
    calls: row.calls as number,
    updatedAt: toDate(row.updated_at),
  };
}

/** Model tokens per person and local day (table `model_usage`, migration 98): one upserted row per day. */
export class SqliteModelUsageRepository implements ModelUsageRepository {
  constructor(private readonly ctx: SqliteContext) {}

  addModelUsage(input: { personId: PersonId; day: string; promptTokens: number; completionTokens: number; now: Date }): Promise<ModelUsageDay> {
    return this.ctx.run(
      () =>
        toUsage(
          this.ctx
            .stmt(
              `INSERT INTO model_usage (person_id, day, prompt_tokens, completion_tokens, calls, updated_at) VALUES (?, ?, ?, ?, 1, ?)
               ON CONFLICT (person_id, day) DO UPDATE SET prompt_tokens = prompt_tokens + excluded.prompt_tokens,
                 completion_tokens = completion_tokens + excluded.completion_tokens, calls = calls + 1, updated_at = excluded.updated_at
               RETURNING *`,
            )
            .get(input.personId, input.day, input.promptTokens, input.completionTokens, ms(input.now)) as Row,
        ),
      { references: { entity: "person", id: input.personId } },
    );
  }

  getModelUsage(personId: PersonId, day: string): Promise<ModelUsageDay | null> {
    return this.ctx.run(() => {
      const row = this.ctx.stmt("SELECT * FROM model_usage WHERE person_id = ? AND day = ?").get(personId, day) as Row | undefined;
      return row ? toUsage(row) : null;
    });
  }
}
