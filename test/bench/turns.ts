/**
 * Conversation benchmark (issue "Talk to Familiar"). The app runs in this process (`startTestApp`,
 * embedded SQLite in a temp dir, LOG_LEVEL=info into memory) against an instant fake model
 * (`startFakeOpenAI`, echo answers); people talk through the local chat HTTP API like the page.
 * Called by test/bench/run.ts:
 *
 *   await bench((line) => console.log(JSON.stringify(line)));
 *
 * Emits:
 * - `turns.overhead`: ~200 sequential turns of one person after 20 warm-up turns. `e2e_*`: POST of
 *   the message → the reply read through the open long-poll. `overhead_*`: the same minus the
 *   model's time, which is the client-side duration of every model HTTP call inside that window
 *   (`fetch` call → response body read, see `installModelTimer`), so it subtracts the fake's own
 *   time and the loopback round trip. Compared with `target_ms` (a reply within 30 ms beyond the
 *   model's own time). `first_turn_e2e_ms`: the first turn of a fresh process (it starts the
 *   tokenizer worker).
 * - `turns.concurrent`: 100 local users talking at once, each 5 turns back to back after one
 *   warm-up turn; completed turns per second of wall time and the e2e latency under that load.
 * - `turns.tokens`: for 10, 1,000 and 10,000 messages of seeded history (appended directly with
 *   `store.conversation.appendMessage`), the tokens of the turn's model request counted with
 *   gpt-tokenizer o200k (messages JSON + tool schemas JSON, as test/e2e/conversation.test.ts does),
 *   against the 6k plain-turn target and the 16k budget; also the largest rolling-summary request
 *   that turn caused, and the next turn's request (which carries the new rolling summary). The fake answers a summary request with a fixed ~300-word summary.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { performance } from "node:perf_hooks";
import type { PersonId } from "../../core/ids.js";
import { startFakeOpenAI, text, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ChatUser, installModelTimer } from "./chat-client.js";
import { round, sleep, spread } from "./measure.js";

const warmupTurns = 20;
const measuredTurns = 200;
const concurrentUsers = 100;
const concurrentTurnsEach = 5;
const historySizes = [10, 1_000, 10_000];

type Emit = (line: Record<string, unknown>) => void;

/** Tokens of a request as the model sees it: every message and the tool schemas. */
function requestTokens(r: RecordedRequest): number {
  return countTokens(JSON.stringify(r.body.messages)) + countTokens(JSON.stringify(r.body.tools ?? []));
}

const isTurnRequest = (r: RecordedRequest, text: string) => r.lastUserText === text && (r.body.tools ?? []).length > 0;

async function benchOverhead(emit: Emit, modelUrl: string): Promise<void> {
  const timer = installModelTimer(modelUrl);
  let app: TestApp | undefined;
  try {
    app = await startTestApp({ OPENAI_BASE_URL: modelUrl, OPENAI_MODEL: "fake-model" });
    const ana = new ChatUser(app.url, "ana");
    const e2e: number[] = [];
    const overhead: number[] = [];
    const modelMs: number[] = [];
    let modelCalls = 0;
    let firstTurnMs = Number.NaN;
    for (let i = 0; i < warmupTurns + measuredTurns; i++) {
      const { startedAt, readAt } = await ana.turn(`message ${i}: what should I cook tonight with rice and beans?`);
      if (i === 0) firstTurnMs = readAt - startedAt;
      if (i < warmupTurns) continue;
      const model = timer.overlap(startedAt, readAt);
      e2e.push(readAt - startedAt);
      modelMs.push(model.ms);
      overhead.push(readAt - startedAt - model.ms);
      modelCalls += model.count;
    }
    emit({
      bench: "turns.overhead",
      turns: measuredTurns,
      warmup_turns: warmupTurns,
      ...spread(overhead, "_ms", "overhead_"),
      ...spread(e2e, "_ms", "e2e_"),
      ...spread(modelMs, "_ms", "model_"),
      model_calls_per_turn: round(modelCalls / measuredTurns, 2),
      first_turn_e2e_ms: round(firstTurnMs),
      target_ms: 30,
      subtracted: "client-side duration of each model HTTP call inside the turn (fetch call to response body read): the fake server's own time plus the loopback round trip",
      model: "instant fake (echo), in this process",
    });
  } finally {
    timer.restore();
    await app?.close();
  }
}

async function benchConcurrent(emit: Emit, modelUrl: string): Promise<void> {
  const app = await startTestApp({ OPENAI_BASE_URL: modelUrl, OPENAI_MODEL: "fake-model" });
  try {
    const users = Array.from({ length: concurrentUsers }, (_, i) => new ChatUser(app.url, `person${i}`));
    await Promise.all(users.map((u) => u.turn("hello, I am new here", 120_000)));
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      users.map(async (u) => {
        for (let t = 0; t < concurrentTurnsEach; t++) {
          const { startedAt, readAt } = await u.turn(`turn ${t}: remind me what we talked about`, 120_000);
          latencies.push(readAt - startedAt);
        }
      }),
    );
    const wallMs = performance.now() - started;
    const turns = concurrentUsers * concurrentTurnsEach;
    emit({
      bench: "turns.concurrent",
      persons: concurrentUsers,
      turns,
      turns_per_s: round(turns / (wallMs / 1000)),
      wall_ms: round(wallMs),
      ...spread(latencies, "_ms", "e2e_"),
      model: "instant fake (echo), in this process",
    });
  } finally {
    await app.close();
  }
}

const words = "the a we to and of in garden trip dinner budget flight Lisbon meeting Friday doctor invoice groceries daughter school plan book price check tomorrow week idea because maybe remember call".split(" ");

/** A deterministic chat-like message of 12–60 words. */
function filler(seed: number): string {
  let x = (seed * 2654435761) >>> 0;
  const next = () => ((x = (x * 1103515245 + 12345) >>> 0), x);
  const n = 12 + (next() % 49);
  return Array.from({ length: n }, () => words[next() % words.length]).join(" ") + ".";
}

/** One turn; the tokens of its model request and of the summary requests it caused. */
async function measureTurn(app: TestApp, model: FakeOpenAIServer, chat: ChatUser, personId: PersonId, question: string) {
  const before = model.requests.length;
  const { startedAt, readAt } = await chat.turn(question, 120_000);
  // The rolling summary runs after the reply, in the person's queue slot: wait until it is done.
  while (app.familiar.taskLoop.active > 0) await sleep(5);
  const requests = model.requests.slice(before);
  const turn = requests.find((r) => isTurnRequest(r, question));
  if (!turn) throw new Error(`no model request for the turn "${question}"`);
  return {
    tokens: requestTokens(turn),
    toolTokens: countTokens(JSON.stringify(turn.body.tools ?? [])),
    verbatim: (turn.messages).filter((m) => m.role === "user" || m.role === "assistant").length,
    summaries: requests.filter((r) => !isTurnRequest(r, question)).map(requestTokens),
    e2eMs: readAt - startedAt,
  };
}

async function benchTokens(emit: Emit, model: FakeOpenAIServer): Promise<void> {
  const app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_MODEL: "fake-model" });
  try {
    for (const size of historySizes) {
      const user = `history${size}`;
      const person = await app.store.persons.createPerson({ displayName: user });
      await app.store.persons.addIdentity({ personId: person.id, channel: "local", accountId: user, address: user });
      const seedStarted = performance.now();
      await app.store.transaction(async () => {
        for (let i = 0; i < size; i++) {
          await app.store.conversation.appendMessage({ personId: person.id, role: i % 2 === 0 ? "user" : "assistant", channel: "local", text: filler(i), taskId: null });
        }
      });
      const seedMs = performance.now() - seedStarted;
      const chat = new ChatUser(app.url, user);
      const first = await measureTurn(app, model, chat, person.id, `after ${size} messages: what did we decide about the Lisbon flight?`);
      // The first turn folded older messages into the rolling summary; the next turn carries it.
      const second = await measureTurn(app, model, chat, person.id, "and what about the budget?");
      emit({
        bench: "turns.tokens",
        history_messages: size,
        request_tokens: first.tokens,
        request_tokens_next_turn: second.tokens,
        tool_schema_tokens: first.toolTokens,
        verbatim_messages: first.verbatim,
        summary_requests: first.summaries.length,
        max_summary_request_tokens: Math.max(0, ...first.summaries),
        target_tokens: 6_000,
        budget_tokens: 16_000,
        e2e_ms: round(first.e2eMs),
        seed_ms: round(seedMs),
      });
    }
  } finally {
    await app.close();
  }
}

/**
 * The instant fake's answers: a turn (a request with tools) gets an echo; a rolling-summary request
 * (no tools) gets a fixed summary of about 300 words, as long as a real one may be (the prompt asks
 * for at most 350), instead of an echo of its whole prompt, which would grow with every fold.
 */
const fakeSummary = `Summary: ${Array.from({ length: 8 }, (_, i) => filler(10_000 + i)).join(" ")}`;
const instant = (r: RecordedRequest) => text(r.toolNames.length > 0 ? `echo: ${r.lastUserText ?? ""}` : fakeSummary);

/** Runs the conversation benchmarks against an instant fake model; one line per figure. */
export async function bench(emit: Emit): Promise<void> {
  const model = await startFakeOpenAI({ fallback: instant });
  try {
    await benchOverhead(emit, model.url);
    await benchConcurrent(emit, model.url);
    await benchTokens(emit, model);
  } finally {
    await model.close();
  }
}
