/**
 * What the store keeps of the model's use per person and local day (issue 18 item 7): the tokens the
 * model endpoint reported (`usage.prompt_tokens`, `usage.completion_tokens` of each Chat Completions
 * answer) and the number of calls, added up per person and per day of the person's time zone. The
 * per-person daily budget (MODEL_BUDGET_TOKENS_PER_DAY, core/model/budget.ts) reads it; being in
 * the store, it holds across restarts and across processes sharing one store.
 */
import type { PersonId } from "../ids.js";

/** One person's model use on one local day. */
export interface ModelUsageDay {
  personId: PersonId;
  /** The person's local date, `YYYY-MM-DD` in their time zone. */
  day: string;
  /** Prompt (input) tokens the endpoint reported, summed. */
  promptTokens: number;
  /** Completion (output) tokens the endpoint reported, summed. */
  completionTokens: number;
  /** Model calls counted. */
  calls: number;
  updatedAt: Date;
}

/** The model use per person and local day. */
export interface ModelUsageRepository {
  /**
   * Adds one model call's tokens to the person's day (created at zero the first time), atomically
   * (an increment, so concurrent calls never lose one another's counts); returns the day's totals
   * after the addition. Token counts are non-negative integers.
   */
  addModelUsage(input: { personId: PersonId; day: string; promptTokens: number; completionTokens: number; now: Date }): Promise<ModelUsageDay>;
  /** The person's use on `day` (`YYYY-MM-DD`), or null when nothing was counted that day. */
  getModelUsage(personId: PersonId, day: string): Promise<ModelUsageDay | null>;
}
