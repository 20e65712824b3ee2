import { describe, expect, it } from "vitest";
import { type ContractContext, at, makePerson } from "./support.js";

/** Turn tasks bound by the inbound handler, deferred by the inbound rate limit (issue 18 item 7). */
export function turnsContract(ctx: ContractContext): void {
  describe("turns", () => {
    it("a new turn bound with notBefore waits for it; a turn that is extended keeps its due time", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const deferred = await store.tasks.bindTurnMessage({ personId: person.id, seq: 1, now: at(0), notBefore: at(60_000) });
      expect(await store.tasks.claimDueTask({ owner: "A", now: at(59_999), leaseMs: 1000, personId: person.id })).toBeNull();
      expect((await store.tasks.bindTurnMessage({ personId: person.id, seq: 2, now: at(1) })).id).toBe(deferred.id);
      const claimed = await store.tasks.claimDueTask({ owner: "A", now: at(60_000), leaseMs: 1000, personId: person.id });
      expect(claimed?.task).toMatchObject({ id: deferred.id, checkpoint: { fromSeq: 1, toSeq: 2 } });
      const other = await makePerson(store);
      const now = await store.tasks.bindTurnMessage({ personId: other.id, seq: 1, now: at(0) });
      expect(await store.tasks.bindTurnMessage({ personId: other.id, seq: 2, now: at(1), notBefore: at(60_000) })).toMatchObject({ id: now.id });
      expect((await store.tasks.claimDueTask({ owner: "B", now: at(2), leaseMs: 1000, personId: other.id }))?.task.id).toBe(now.id);
    });
  });
}
