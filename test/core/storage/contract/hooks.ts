import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import { type ContractContext, at, makePerson } from "./support.js";

const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

/** Inbound webhooks (event triggers). */
export function hooksContract(ctx: ContractContext): void {
  describe("hooks", () => {
    it("creates, lists oldest first, touches and deletes only the person's own hooks", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const first = await store.hooks.createHook({ personId: person.id, description: "parcel shipped", secretHash: hash });
      expect(first).toMatchObject({ personId: person.id, description: "parcel shipped", secretHash: hash, lastEventAt: null });
      expect(first.id).toMatch(/^hook_/);
      expect(first.createdAt).toBeInstanceOf(Date);
      expect(await store.hooks.getHook(first.id)).toEqual(first);
      const second = await store.hooks.createHook({ personId: person.id, description: "invoice paid", secretHash: hash });
      await store.hooks.createHook({ personId: other.id, description: "not mine", secretHash: hash });
      expect((await store.hooks.listHooks(person.id)).map((h) => h.id)).toEqual([first.id, second.id]);

      await store.hooks.touchHook(first.id, at(42));
      expect((await store.hooks.getHook(first.id))?.lastEventAt).toEqual(at(42));
      expect((await store.hooks.getHook(second.id))?.lastEventAt).toBeNull();

      expect(await store.hooks.deleteHook(other.id, first.id)).toBe(false);
      expect(await store.hooks.deleteHook(person.id, first.id)).toBe(true);
      expect(await store.hooks.deleteHook(person.id, first.id)).toBe(false);
      expect(await store.hooks.getHook(first.id)).toBeNull();
      expect(await store.hooks.getHook(asId("hook", "hook_missing"))).toBeNull();
      expect((await store.hooks.listHooks(person.id)).map((h) => h.id)).toEqual([second.id]);
    });
  });
}
