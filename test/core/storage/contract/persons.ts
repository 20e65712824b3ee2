import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import { type ContractContext, at, expectCode, makePerson, readAllPages } from "./support.js";

/** Persons, identities and pagination of `listPersons`. */
export function personsContract(ctx: ContractContext): void {
  describe("persons", () => {
    it("creates a person with the documented defaults and reads it back unchanged", async () => {
      const store = ctx.store();
      const person = await store.persons.createPerson({ displayName: "Ada" });
      expect(person).toMatchObject({
        displayName: "Ada",
        timeZone: "UTC",
        locale: "en-US",
        proactivity: "normal",
        quietHours: null,
        digestTime: null,
        paused: false,
      });
      expect(person.id).toMatch(/^per_/);
      expect(person.createdAt).toBeInstanceOf(Date);
      expect(person.updatedAt).toBeInstanceOf(Date);
      expect(await store.persons.getPerson(person.id)).toEqual(person);
      expect(await store.persons.getPerson(asId("person", "per_missing"))).toBeNull();
    });

    it("keeps explicit settings given at creation", async () => {
      const store = ctx.store();
      const person = await store.persons.createPerson({
        displayName: "Grace",
        timeZone: "Europe/Berlin",
        locale: "de-DE",
        proactivity: "low",
        quietHours: { from: "22:00", to: "07:30" },
        digestTime: "08:15",
      });
      expect(await store.persons.getPerson(person.id)).toEqual(person);
      expect(person.quietHours).toEqual({ from: "22:00", to: "07:30" });
      expect(person.proactivity).toBe("low");
    });

    it("knows whether the person chose their time zone, and keeps Familiar's one question about it", async () => {
      const store = ctx.store();
      const met = await store.persons.createPerson({ displayName: "Met on a messenger" });
      expect(met).toMatchObject({ timeZone: "UTC", timeZoneConfirmed: false, timeZoneAsk: null });
      const chosen = await store.persons.createPerson({ displayName: "Signed in on the web", timeZone: "Pacific/Auckland" });
      expect(chosen).toMatchObject({ timeZone: "Pacific/Auckland", timeZoneConfirmed: true });
      const asked = await store.persons.updatePerson(met.id, { timeZoneAsk: { at: at(0), pendingSeq: 7 } });
      expect(asked).toMatchObject({ timeZoneConfirmed: false, timeZoneAsk: { at: at(0), pendingSeq: 7 } });
      expect(await store.persons.getPerson(met.id)).toEqual(asked);
      const answered = await store.persons.updatePerson(met.id, { timeZone: "Europe/Berlin", timeZoneAsk: { at: at(0), pendingSeq: null } });
      expect(answered).toMatchObject({ timeZone: "Europe/Berlin", timeZoneConfirmed: true, timeZoneAsk: { at: at(0), pendingSeq: null } });
      // Choosing UTC itself is a choice too.
      expect((await store.persons.updatePerson(chosen.id, { timeZone: "UTC" })).timeZoneConfirmed).toBe(true);
      expect(await store.persons.getPerson(met.id)).toEqual(answered);
    });

    it("updates only the patched settings and refuses unknown persons", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const updated = await store.persons.updatePerson(person.id, {
        paused: true,
        quietHours: { from: "23:00", to: "06:00" },
        proactivity: "off",
      });
      expect(updated).toMatchObject({ paused: true, proactivity: "off", quietHours: { from: "23:00", to: "06:00" } });
      expect(updated.displayName).toBe(person.displayName);
      expect(updated.createdAt).toEqual(person.createdAt);
      expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(person.updatedAt.getTime());
      expect(await store.persons.getPerson(person.id)).toEqual(updated);

      expect((await store.persons.updatePerson(person.id, { digestTime: "07:45" })).digestTime).toBe("07:45");
      const cleared = await store.persons.updatePerson(person.id, { quietHours: null, paused: false, digestTime: null });
      expect(cleared.quietHours).toBeNull();
      expect(cleared.digestTime).toBeNull();
      expect((await store.persons.getPerson(person.id))?.digestTime).toBeNull();
      expect(cleared.paused).toBe(false);

      expect(person).toMatchObject({ personaName: null, personaStyle: null });
      const styled = await store.persons.updatePerson(person.id, { personaName: "Jeeves", personaStyle: "formal, one short paragraph" });
      expect(styled).toMatchObject({ personaName: "Jeeves", personaStyle: "formal, one short paragraph", paused: false });
      expect(await store.persons.getPerson(person.id)).toEqual(styled);
      expect(await store.persons.updatePerson(person.id, { personaName: null })).toMatchObject({ personaName: null, personaStyle: "formal, one short paragraph" });

      await expectCode(store.persons.updatePerson(asId("person", "per_missing"), { paused: true }), "NOT_FOUND");
    });

    it("lists persons in creation order across pages", async () => {
      const store = ctx.store();
      const created = [];
      for (let i = 0; i < 7; i++) created.push(await makePerson(store, `P${i}`));
      const { items, pages } = await readAllPages((page) => store.persons.listPersons(page), 3);
      expect(pages).toBe(3);
      expect(items.map((p) => p.id)).toEqual(created.map((p) => p.id));
      expect(items).toEqual(created);
    });

    it("pages with a default limit of 50", async () => {
      const store = ctx.store();
      for (let i = 0; i < 53; i++) await makePerson(store);
      const first = await store.persons.listPersons();
      expect(first.items).toHaveLength(50);
      expect(first.next).toBeTypeOf("string");
      const second = await store.persons.listPersons({ after: first.next! });
      expect(second.items).toHaveLength(3);
      expect(second.next).toBeUndefined();
      const ids = new Set([...first.items, ...second.items].map((p) => p.id));
      expect(ids.size).toBe(53);
    });

    it("rejects a cursor it did not make", async () => {
      const store = ctx.store();
      await makePerson(store);
      await expectCode(store.persons.listPersons({ after: "not a cursor !!" }), "VALIDATION");
    });
  });

  describe("identities", () => {
    it("links accounts, defaults the address to the account id and finds them again", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const tg = await store.persons.addIdentity({ personId: person.id, channel: "telegram", accountId: "1001" });
      expect(tg).toMatchObject({ personId: person.id, channel: "telegram", accountId: "1001", address: "1001", unreachable: null });
      expect(tg.createdAt).toBeInstanceOf(Date);
      const slack = await store.persons.addIdentity({ personId: person.id, channel: "slack", accountId: "U1", address: "D42" });
      expect(slack.address).toBe("D42");

      expect(await store.persons.findIdentity("telegram", "1001")).toEqual(tg);
      expect(await store.persons.findIdentity("slack", "1001")).toBeNull();
      expect(await store.persons.listIdentities(person.id)).toEqual([tg, slack]);
    });

    it("refuses the same (channel, account) twice, even for another person", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      await store.persons.addIdentity({ personId: a.id, channel: "discord", accountId: "snow" });
      await expectCode(store.persons.addIdentity({ personId: b.id, channel: "discord", accountId: "snow" }), "DUPLICATE");
      await expectCode(store.persons.addIdentity({ personId: a.id, channel: "discord", accountId: "snow" }), "DUPLICATE");
      // The same account id on another channel is a different identity.
      await store.persons.addIdentity({ personId: b.id, channel: "whatsapp", accountId: "snow" });
      expect((await store.persons.findIdentity("discord", "snow"))?.personId).toBe(a.id);
      expect(await store.persons.listIdentities(b.id)).toHaveLength(1);
    });

    it("unlinks only the person's own identity", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      await store.persons.addIdentity({ personId: a.id, channel: "telegram", accountId: "501" });
      const keep = await store.persons.addIdentity({ personId: a.id, channel: "slack", accountId: "U501" });
      expect(await store.persons.removeIdentity(b.id, "telegram", "501")).toBe(false);
      expect(await store.persons.removeIdentity(a.id, "telegram", "501")).toBe(true);
      expect(await store.persons.removeIdentity(a.id, "telegram", "501")).toBe(false);
      expect(await store.persons.findIdentity("telegram", "501")).toBeNull();
      expect(await store.persons.listIdentities(a.id)).toEqual([keep]);
      // The account can be linked again afterwards (to anyone).
      await store.persons.addIdentity({ personId: b.id, channel: "telegram", accountId: "501" });
    });

    it("moves an account to another person: new person and address, unreachable cleared, creation time kept", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      const original = await store.persons.addIdentity({ personId: a.id, channel: "local", accountId: "browser-1" });
      await store.persons.addIdentity({ personId: b.id, channel: "telegram", accountId: "5" });
      await store.persons.setIdentityUnreachable("local", "browser-1", "gone", at(3));
      const moved = await store.persons.moveIdentity({ channel: "local", accountId: "browser-1", toPersonId: b.id, address: "browser-1b" });
      expect(moved).toEqual({ ...original, personId: b.id, address: "browser-1b", unreachable: null });
      expect(await store.persons.findIdentity("local", "browser-1")).toEqual(moved);
      expect(await store.persons.listIdentities(a.id)).toEqual([]);
      expect((await store.persons.listIdentities(b.id)).map((i) => i.channel).sort()).toEqual(["local", "telegram"]);
      await expectCode(store.persons.moveIdentity({ channel: "slack", accountId: "nobody", toPersonId: b.id, address: "x" }), "NOT_FOUND");
    });

    it("marks an identity unreachable and clears it again", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      await store.persons.addIdentity({ personId: person.id, channel: "telegram", accountId: "77" });
      await store.persons.setIdentityUnreachable("telegram", "77", "bot was blocked by the user", at(5));
      expect((await store.persons.findIdentity("telegram", "77"))?.unreachable).toEqual({
        reason: "bot was blocked by the user",
        since: at(5),
      });
      await store.persons.setIdentityUnreachable("telegram", "77", null, at(9));
      expect((await store.persons.findIdentity("telegram", "77"))?.unreachable).toBeNull();
    });

    it("records the chat an account last wrote from and clears its unreachable mark", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      await store.persons.addIdentity({ personId: person.id, channel: "telegram", accountId: "78", address: "first-chat" });
      await store.persons.setIdentityUnreachable("telegram", "78", "bot was blocked by the user", at(5));
      await store.persons.recordIdentitySeen({ channel: "telegram", accountId: "78", address: "second-chat", now: at(9) });
      expect(await store.persons.findIdentity("telegram", "78")).toMatchObject({ address: "second-chat", unreachable: null });
    });
  });
}
