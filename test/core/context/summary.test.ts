import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { updateRollingSummary } from "../../../core/context/summary.js";
import { createTokenCounter } from "../../../core/context/tokens.js";
import { OpenAIModelClient } from "../../../core/model/openai.js";
import type { Store } from "../../../core/storage/ports.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Person } from "../../../core/persons/index.js";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../../fakes/openai-server.js";

describe("rolling summary", () => {
  let dir: string;
  let store: Store;
  let person: Person;
  let fake: FakeOpenAIServer;
  const tokens = createTokenCounter();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "familiar-summary-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    person = await store.persons.createPerson({ displayName: "Ana" });
    fake = await startFakeOpenAI({ fallback: (r) => text(`summary after: ${/message (\d+)\D*$/.exec(r.lastUserText ?? "")?.[1] ?? "?"}`) });
  });
  afterAll(async () => {
    await fake.close();
    await tokens.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const model = () => new OpenAIModelClient({ model: "fake", baseURL: fake.url });
  const add = async (from: number, to: number) => {
    for (let i = from; i <= to; i++) {
      await store.conversation.appendMessage({ personId: person.id, role: i % 2 ? "user" : "assistant", channel: "local", text: `message ${i}`, taskId: null });
    }
  };

  it("does nothing while few messages are outside the verbatim window", async () => {
    await add(1, 10);
    expect(await updateRollingSummary({ store, model: model(), tokens, person, keepFromSeq: 8 })).toBe(0);
    expect(fake.requests).toHaveLength(0);
    expect(await store.conversation.getSummary(person.id)).toBeNull();
  });

  it("folds the older messages in, stores the summary and its coverage", async () => {
    await add(11, 60);
    const covered = await updateRollingSummary({ store, model: model(), tokens, person, keepFromSeq: 51 });
    expect(covered).toBe(50);
    const summary = (await store.conversation.getSummary(person.id))!;
    expect(summary.upToSeq).toBe(50);
    expect(summary.text).toBe("summary after: 50");
    expect(fake.requests.at(-1)!.lastUserText).toContain("message 1\n");
  });

  it("updates incrementally: only messages after the stored summary are sent, with the old summary", async () => {
    await add(61, 90);
    const before = fake.requests.length;
    expect(await updateRollingSummary({ store, model: model(), tokens, person, keepFromSeq: 81 })).toBe(80);
    const request = fake.requests[before]!;
    expect(request.lastUserText).toContain("Summary so far:\nsummary after: 50");
    expect(request.lastUserText).toContain("message 51");
    expect(request.lastUserText).not.toMatch(/message 50\b/);
    expect((await store.conversation.getSummary(person.id))!.upToSeq).toBe(80);
  });

  it("keeps the stored summary when the model fails", async () => {
    await add(91, 120);
    fake.push(text(""));
    expect(await updateRollingSummary({ store, model: model(), tokens, person, keepFromSeq: 111 })).toBe(80);
    expect((await store.conversation.getSummary(person.id))!.text).toBe("summary after: 80");
  });
});
