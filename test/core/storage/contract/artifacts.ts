import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import { type ContractContext, at, makePerson } from "./support.js";

/** Artifacts, attachments on outbound and local chat messages, and grants bound to an action digest. */
export function artifactsContract(ctx: ContractContext): void {
  describe("artifacts and attachments", () => {
    it("records artifacts, reads them back unchanged and lists each person's newest first with paging", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const made = [];
      for (let i = 0; i < 3; i++) {
        made.push(
          await store.artifacts.recordArtifact({ personId: person.id, name: `shot-${i}.png`, mimeType: "image/png", size: 100 + i, path: `artifacts/shot-${i}.png`, source: "screenshot of https://shop.example/", createdAt: at(i * 1000) }),
        );
      }
      await store.artifacts.recordArtifact({ personId: other.id, name: "x.pdf", mimeType: "application/pdf", size: 1, path: "downloads/x.pdf", source: "download", createdAt: at(5000) });
      expect(made[0]!.id).toMatch(/^art_/);
      expect(await store.artifacts.getArtifact(made[1]!.id)).toEqual(made[1]);
      expect(await store.artifacts.getArtifact(asId("artifact", "art_missing"))).toBeNull();
      const first = await store.artifacts.listArtifacts(person.id, { limit: 2 });
      expect(first.items.map((a) => a.name)).toEqual(["shot-2.png", "shot-1.png"]);
      const second = await store.artifacts.listArtifacts(person.id, { limit: 2, after: first.next! });
      expect(second.items.map((a) => a.name)).toEqual(["shot-0.png"]);
      expect(second.next).toBeUndefined();
    });

    it("keeps an outbound message's attachments in order, and none by default", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const a = asId("artifact", "art_0000000000010000000000000001");
      const b = asId("artifact", "art_0000000000010000000000000002");
      const with2 = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "k-att", text: "here", attachments: [b, a] }, at(0));
      expect(with2.attachments).toEqual([b, a]);
      expect((await store.outbox.getOutbound(with2.id))?.attachments).toEqual([b, a]);
      const plain = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "k-plain", text: "hi" }, at(0));
      expect(plain.attachments).toEqual([]);
    });

    it("keeps a local chat message's attachments", async () => {
      const store = ctx.store();
      const attachment = { id: asId("artifact", "art_0000000000010000000000000003"), name: "shot.png", mimeType: "image/png", size: 42 };
      const message = await store.localMailbox.putLocalMessage({ id: "m-att", user: "ada", text: "look", buttons: [], attachments: [attachment], at: at(0) });
      expect(message.attachments).toEqual([attachment]);
      expect((await store.localMailbox.getLocalMessage("m-att"))?.attachments).toEqual([attachment]);
      expect((await store.localMailbox.putLocalMessage({ id: "m-plain", user: "ada", text: "x", buttons: [], at: at(0) })).attachments).toEqual([]);
    });

    it("round-trips a grant bound to an action digest", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const digest = "a".repeat(64);
      const grant = await store.grants.recordGrant({ personId: person.id, capability: "browser.purchase", constraints: { destination: "https://shop.example", action: digest }, scope: { kind: "once" }, grantedBy: { channel: "local", accountId: "ada" } });
      expect(grant.constraints).toEqual({ destination: "https://shop.example", action: digest });
      expect((await store.grants.listActiveGrants(person.id, at(0)))[0]?.constraints.action).toBe(digest);
    });
  });
}
