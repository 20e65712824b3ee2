import { describe, expect, it } from "vitest";
import { type ContractContext, at, makePerson } from "./support.js";

/** Model tokens per person and local day (issue 18 item 7: the daily model budget). */
export function usageContract(ctx: ContractContext): void {
  describe("model usage", () => {
    it("adds tokens and calls per person and day, keeps days and persons apart, reads null for a day never counted", async () => {
      const store = ctx.store();
      const ana = await makePerson(store);
      const bo = await makePerson(store);
      expect(await store.usage.getModelUsage(ana.id, "2030-01-15")).toBeNull();

      const first = await store.usage.addModelUsage({ personId: ana.id, day: "2030-01-15", promptTokens: 120, completionTokens: 30, now: at(1) });
      expect(first).toEqual({ personId: ana.id, day: "2030-01-15", promptTokens: 120, completionTokens: 30, calls: 1, updatedAt: at(1) });
      const second = await store.usage.addModelUsage({ personId: ana.id, day: "2030-01-15", promptTokens: 80, completionTokens: 20, now: at(2) });
      expect(second).toEqual({ personId: ana.id, day: "2030-01-15", promptTokens: 200, completionTokens: 50, calls: 2, updatedAt: at(2) });

      await store.usage.addModelUsage({ personId: ana.id, day: "2030-01-16", promptTokens: 5, completionTokens: 1, now: at(3) });
      await store.usage.addModelUsage({ personId: bo.id, day: "2030-01-15", promptTokens: 7, completionTokens: 0, now: at(4) });

      expect(await store.usage.getModelUsage(ana.id, "2030-01-15")).toEqual(second);
      expect(await store.usage.getModelUsage(ana.id, "2030-01-16")).toMatchObject({ promptTokens: 5, completionTokens: 1, calls: 1 });
      expect(await store.usage.getModelUsage(bo.id, "2030-01-15")).toMatchObject({ promptTokens: 7, completionTokens: 0, calls: 1 });
    });

    it("concurrent additions all count", async () => {
      const store = ctx.store();
      const ana = await makePerson(store);
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.usage.addModelUsage({ personId: ana.id, day: "2030-01-15", promptTokens: 10, completionTokens: 1, now: at(i) })));
      expect(await store.usage.getModelUsage(ana.id, "2030-01-15")).toMatchObject({ promptTokens: 200, completionTokens: 20, calls: 20 });
    });
  });
}
