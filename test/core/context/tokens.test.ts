import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import { createTokenCounter, estimateTokens, type TokenCounter } from "../../../core/context/tokens.js";

describe("token counter", () => {
  let counter: TokenCounter | null = null;
  afterEach(async () => {
    await counter?.close();
    counter = null;
  });

  it("estimates while the table loads (never under the real count for English or CJK), then counts exactly", async () => {
    counter = createTokenCounter();
    const texts = ["Remind me every Friday to plan a baking project with Mia.", "毎週金曜日に娘とお菓子作りの計画を立てるよう思い出させて。", ""];
    const first = await counter.count(texts);
    expect(first).toEqual(texts.map(estimateTokens));
    for (const [i, t] of texts.entries()) expect(first[i]).toBeGreaterThanOrEqual(countTokens(t));
    // Once the worker has loaded the table, counts are exact.
    let exact: number[] = [];
    for (let i = 0; i < 200; i++) {
      exact = await counter.count(texts);
      if (exact[0] === countTokens(texts[0]!)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(exact).toEqual(texts.map((t) => countTokens(t)));
  });

  it("caches exact counts only", async () => {
    counter = createTokenCounter();
    const text = "Lisbon return now €89 (was €140).";
    expect(await counter.countCached("m1", text)).toBe(estimateTokens(text));
    for (let i = 0; i < 200 && (await counter.countCached("m1", text)) !== countTokens(text); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await counter.countCached("m1", text)).toBe(countTokens(text));
    // Cached under its key: a different text under the same key keeps the first count.
    expect(await counter.countCached("m1", "something else entirely, much longer than before")).toBe(countTokens(text));
  });
});
