/**
 * ModelBudget on its own (core/runtime/model-budget.ts), on a SQLite store and against the OpenAI
 * fake through the real client: the person's local day and its end, counting the endpoint's
 * `usage` (or an estimate without it), refusing calls once the day's budget is used, a new day
 * starting at zero, and the one message a day.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ModelError } from "../../../core/errors.js";
import { OpenAIModelClient } from "../../../core/model/openai.js";
import { ModelBudget, localDay } from "../../../core/runtime/model-budget.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Person } from "../../../core/persons/index.js";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../../fakes/openai-server.js";

describe("ModelBudget", () => {
  let dir: string;
  let store: SqliteStore;
  let server: FakeOpenAIServer;
  let now: Date;
  let person: Person;
  const queued: { deliveryKey: string; text: string }[] = [];
  const outbound = {
    queue: async (m: { deliveryKey: string; text: string }) => {
      if (!queued.some((q) => q.deliveryKey === m.deliveryKey)) queued.push(m);
      return m as never;
    },
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "familiar-budget-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    server = await startFakeOpenAI({ fallback: text("ok", { usage: { promptTokens: 400, completionTokens: 100 } }) });
    // 23:30 in Berlin (UTC+1 in December): half an hour before the person's midnight.
    now = new Date("2026-12-01T22:30:00Z");
    person = await store.persons.createPerson({ displayName: "Ada", timeZone: "Europe/Berlin" });
    queued.length = 0;
  });
  afterEach(async () => {
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = () => new OpenAIModelClient({ model: "fake", baseURL: server.url, maxRetries: 0 });
  const ask = (model: { complete: OpenAIModelClient["complete"] }) => model.complete({ messages: [{ role: "user", content: "hi" }] });

  it("the local day is the person's: its date and its end are in their time zone (UTC for an unknown zone)", () => {
    expect(localDay(now, "Europe/Berlin")).toEqual({ day: "2026-12-01", resetsAt: new Date("2026-12-01T23:00:00Z") });
    expect(localDay(now, "Asia/Tokyo")).toEqual({ day: "2026-12-02", resetsAt: new Date("2026-12-02T15:00:00Z") });
    expect(localDay(now, "Not/AZone")).toEqual({ day: "2026-12-01", resetsAt: new Date("2026-12-02T00:00:00Z") });
  });

  it("counts the endpoint's usage per call; at the budget it refuses before the request until the person's midnight", async () => {
    const budget = new ModelBudget({ usage: store.usage, clock: { now: () => now }, tokensPerDay: 1_000, outbound });
    const metered = budget.meter(person, client());
    await ask(metered);
    expect(await budget.state(person)).toMatchObject({ day: "2026-12-01", used: 500, limit: 1_000, exhausted: false });
    await ask(metered);
    expect(await budget.exhaustedUntil(person)).toEqual(new Date("2026-12-01T23:00:00Z"));
    await expect(ask(metered)).rejects.toSatisfy((e) => e instanceof ModelError && e.reason === "budget");
    expect(server.requests).toHaveLength(2);

    await budget.tell(person);
    await budget.tell(person);
    expect(queued).toHaveLength(1);
    expect(queued[0]!.text).toMatch(/today's model budget.*00:00 your time/);

    // Midnight in Berlin: a new day, counted from zero; its message would be a new one.
    now = new Date("2026-12-01T23:00:01Z");
    expect(await budget.exhaustedUntil(person)).toBeNull();
    await ask(metered);
    expect(server.requests).toHaveLength(3);
    expect(await store.usage.getModelUsage(person.id, "2026-12-02")).toMatchObject({ promptTokens: 400, completionTokens: 100, calls: 1 });
  });

  it("without a budget nothing is refused, and use is counted all the same; a server without usage is estimated", async () => {
    await server.close();
    server = await startFakeOpenAI({ fallback: { kind: "raw", status: 200, body: { id: "x", object: "chat.completion", created: 0, model: "fake", choices: [{ index: 0, message: { role: "assistant", content: "a".repeat(400) }, finish_reason: "stop" }] } } });
    const budget = new ModelBudget({ usage: store.usage, clock: { now: () => now }, tokensPerDay: 0 });
    const metered = budget.meter(person, client());
    for (let i = 0; i < 3; i++) await ask(metered);
    const state = await budget.state(person);
    expect(state).toMatchObject({ limit: null, exhausted: false });
    // 400 characters of answer ≈ 100 tokens per call, plus the request's.
    expect(state.used).toBeGreaterThan(300);
    expect(await budget.exhaustedUntil(person)).toBeNull();
  });
});
