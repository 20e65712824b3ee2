import { describe, expect, it } from "vitest";
import { type ContractContext, at, makePerson } from "./support.js";

const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

/** Webhook events kept until their task waits (issue 18). */
export function hookEventsContract(ctx: ContractContext): void {
  describe("kept webhook events", () => {
    it("keeps events per hook, oldest taken first, each once; the newest few are kept; older than notBefore are dropped", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const hook = await store.hooks.createHook({ personId: person.id, description: "parcel", secretHash: hash });
      const other = await store.hooks.createHook({ personId: person.id, description: "invoice", secretHash: hash });
      expect(await store.hookEvents.takeHookEvent({ hookId: hook.id, notBefore: at(0) })).toBeNull();

      for (let i = 1; i <= 4; i++) await store.hookEvents.keepHookEvent({ hookId: hook.id, body: `e${i}`, now: at(i * 1000), maxPerHook: 3 });
      await store.hookEvents.keepHookEvent({ hookId: other.id, body: "x", now: at(1000), maxPerHook: 3 });
      // e1 was dropped (only the newest 3 are kept); e2 is older than notBefore.
      expect(await store.hookEvents.takeHookEvent({ hookId: hook.id, notBefore: at(2500) })).toEqual({ hookId: hook.id, body: "e3", receivedAt: at(3000) });
      expect(await store.hookEvents.takeHookEvent({ hookId: hook.id, notBefore: at(0) })).toMatchObject({ body: "e4" });
      expect(await store.hookEvents.takeHookEvent({ hookId: hook.id, notBefore: at(0) })).toBeNull();
      expect(await store.hookEvents.takeHookEvent({ hookId: other.id, notBefore: at(0) })).toMatchObject({ body: "x" });
    });

    it("concurrent takers get an event each, never the same; deleting the hook drops its events", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const hook = await store.hooks.createHook({ personId: person.id, description: "parcel", secretHash: hash });
      for (let i = 0; i < 3; i++) await store.hookEvents.keepHookEvent({ hookId: hook.id, body: `e${i}`, now: at(i), maxPerHook: 10 });
      const taken = await Promise.all(Array.from({ length: 5 }, () => store.hookEvents.takeHookEvent({ hookId: hook.id, notBefore: at(0) })));
      expect(taken.flatMap((t) => (t ? [t.body] : [])).sort()).toEqual(["e0", "e1", "e2"]);

      await store.hookEvents.keepHookEvent({ hookId: hook.id, body: "late", now: at(10), maxPerHook: 10 });
      expect(await store.hooks.deleteHook(person.id, hook.id)).toBe(true);
      expect(await store.hookEvents.takeHookEvent({ hookId: hook.id, notBefore: at(0) })).toBeNull();
    });
  });
}
