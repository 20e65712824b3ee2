/**
 * The per-person daily model budget (issue 18 item 7; setting MODEL_BUDGET_TOKENS_PER_DAY). Every
 * model call made for a person — their turns, their wake-ups, check-ins, watches and webhook or
 * approval resumptions, the notification judge on their messages, their rolling summary — is
 * counted in the store per person and local day (the person's time zone): the tokens the endpoint
 * reported (`usage.prompt_tokens` + `usage.completion_tokens`), or, from a server that reports
 * none, an estimate of about four characters a token of the request and the answer.
 *
 * With a budget set (tokens per person per day; 0 or unset: unlimited), once a day's count reaches
 * it no further model call is made for that person that day: the metered client refuses before the
 * request with a `ModelError` of reason `budget`. The task runner then keeps the activation open and
 * lets the task wait until the person's next local midnight, when it goes on where it stopped (a
 * turn answers the messages it had, wake-ups, check-ins and watches run then — once, even if several
 * occurrences fell in the wait); messages arriving meanwhile are kept and their turn waits for the
 * same time. The person is told once per day, in plain words ({@link budgetReachedText}). A call
 * that is already running when the count crosses the budget finishes (the count is known only from
 * its answer), so a day can end a little over the budget, never by more than one call.
 */
import { DateTime } from "luxon";
import type { Clock } from "../clock.js";
import { ModelError } from "../errors.js";
import type { ModelClient, ModelRequest, ModelResponse } from "../model/index.js";
import type { Outbound } from "../outbox/index.js";
import type { ModelUsageRepository } from "../storage/index.js";
import type { Person } from "../persons/records.js";

/** Who a metered call is for: the person's id and time zone (their day). */
export type BudgetPerson = Pick<Person, "id" | "timeZone">;

/** A person's budget today. */
export interface BudgetState {
  /** The person's local date, `YYYY-MM-DD`. */
  day: string;
  /** Tokens counted today (prompt + completion). */
  used: number;
  /** The daily budget in tokens, or null when unlimited. */
  limit: number | null;
  /** The next local midnight: when the count starts again. */
  resetsAt: Date;
  exhausted: boolean;
}

export interface ModelBudgetDeps {
  usage: ModelUsageRepository;
  clock: Clock;
  /** Tokens per person and local day (MODEL_BUDGET_TOKENS_PER_DAY); 0: unlimited (use is still counted). */
  tokensPerDay: number;
  /** Where the one "budget reached" message of a day is queued. */
  outbound?: Pick<Outbound, "queue">;
}

/** The person's local day at `at` and the instant it ends (their next midnight); an unknown zone counts as UTC. */
export function localDay(at: Date, timeZone: string): { day: string; resetsAt: Date } {
  let local = DateTime.fromJSDate(at, { zone: timeZone });
  if (!local.isValid) local = DateTime.fromJSDate(at, { zone: "UTC" });
  return { day: local.toISODate() ?? at.toISOString().slice(0, 10), resetsAt: local.startOf("day").plus({ days: 1 }).toJSDate() };
}

/** The plain message a person gets once on the day their model budget runs out. */
export function budgetReachedText(): string {
  return "I've used today's model budget for you, so I'm pausing until 00:00 your time. I've kept your messages and will answer them then; your reminders and goals wait until then too.";
}

/** Counts model use per person and local day and holds calls once the day's budget is used (see module doc). */
export class ModelBudget {
  constructor(private readonly deps: ModelBudgetDeps) {}

  /** Whether a budget is set at all. */
  get limited(): boolean {
    return this.deps.tokensPerDay > 0;
  }

  /** The person's use and budget today. */
  async state(person: BudgetPerson): Promise<BudgetState> {
    const { day, resetsAt } = localDay(this.deps.clock.now(), person.timeZone);
    const row = await this.deps.usage.getModelUsage(person.id, day);
    const used = row ? row.promptTokens + row.completionTokens : 0;
    const limit = this.limited ? this.deps.tokensPerDay : null;
    return { day, used, limit, resetsAt, exhausted: limit !== null && used >= limit };
  }

  /** When the person's budget opens again if it is used up now (their next midnight), else null. */
  async exhaustedUntil(person: BudgetPerson): Promise<Date | null> {
    if (!this.limited) return null;
    const state = await this.state(person);
    return state.exhausted ? state.resetsAt : null;
  }

  /**
   * `model` for calls made for `person`: each answer's tokens are counted, and with a budget set a
   * call is refused before the request once today's count reached it.
   * @throws ModelError (reason `budget`) from `complete` when the person's budget is used up today.
   */
  meter(person: BudgetPerson, model: ModelClient): ModelClient {
    return {
      model: model.model,
      complete: async (request: ModelRequest): Promise<ModelResponse> => {
        const until = await this.exhaustedUntil(person);
        if (until) throw new ModelError(`${model.model}: today's model budget for this person is used up until ${until.toISOString()}`, "budget");
        const response = await model.complete(request);
        await this.count(person, request, response);
        return response;
      },
    };
  }

  /** A meter for functions that take the person and a model (the notification judge, the rolling summary). */
  readonly metered = (person: BudgetPerson, model: ModelClient): ModelClient => this.meter(person, model);

  /** Tells the person, once per local day, that their budget is used up (idempotent by the day's delivery key). */
  async tell(person: BudgetPerson): Promise<void> {
    if (!this.deps.outbound) return;
    const { day } = localDay(this.deps.clock.now(), person.timeZone);
    await this.deps.outbound.queue({ personId: person.id, deliveryKey: `model-budget:${person.id}:${day}`, text: budgetReachedText() });
  }

  private async count(person: BudgetPerson, request: ModelRequest, response: ModelResponse): Promise<void> {
    const usage = response.usage ?? estimateUsage(request, response);
    const now = this.deps.clock.now();
    const { day } = localDay(now, person.timeZone);
    await this.deps.usage.addModelUsage({ personId: person.id, day, promptTokens: Math.max(0, Math.round(usage.promptTokens)), completionTokens: Math.max(0, Math.round(usage.completionTokens)), now });
  }
}

/** About four characters a token, for servers that report no usage. */
function estimateUsage(request: ModelRequest, response: ModelResponse): { promptTokens: number; completionTokens: number } {
  const prompt = JSON.stringify(request.messages).length + (request.tools ? JSON.stringify(request.tools).length : 0);
  const completion = (response.content ?? "").length + JSON.stringify(response.toolCalls).length;
  return { promptTokens: Math.ceil(prompt / 4), completionTokens: Math.ceil(completion / 4) };
}
