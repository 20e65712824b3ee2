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

    it("keeps versions: an update adds the latest, lists show each artifact once, older versions stay until deleted", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const base = { personId: person.id, mimeType: "text/markdown", size: 10, source: "made by Familiar" } as const;
      const first = await store.artifacts.recordArtifact({ ...base, name: "plan.md", path: "artifacts/v1-plan.md", createdAt: at(0), kind: "document", title: "Packing list", taint: { source: "https://shop.example/" } });
      expect(first).toMatchObject({ seriesId: first.id, version: 1, latest: true, kind: "document", title: "Packing list", taskId: null, goalId: null, taint: { source: "https://shop.example/" } });
      const lone = await store.artifacts.recordArtifact({ ...base, name: "x.png", mimeType: "image/png", path: "artifacts/x.png", createdAt: at(500) });
      expect(lone).toMatchObject({ kind: "image", title: "x.png", version: 1, latest: true, taint: null });
      const second = await store.artifacts.recordArtifact({ ...base, name: "plan.md", path: "artifacts/v2-plan.md", size: 20, createdAt: at(1000), versionOf: first.id });
      expect(second).toMatchObject({ seriesId: first.id, version: 2, latest: true, kind: "document", title: "Packing list", taint: null });
      const third = await store.artifacts.recordArtifact({ ...base, name: "plan.md", path: "artifacts/v3-plan.md", createdAt: at(2000), versionOf: first.id, title: "Packing list (final)" });
      expect(third).toMatchObject({ version: 3, title: "Packing list (final)" });
      expect((await store.artifacts.getArtifact(first.id))?.latest).toBe(false);
      expect((await store.artifacts.listArtifacts(person.id)).items.map((a) => [a.title, a.version])).toEqual([["Packing list (final)", 3], ["x.png", 1]]);
      expect((await store.artifacts.listArtifactVersions(second.id)).map((a) => a.version)).toEqual([1, 2, 3]);
      await expect(store.artifacts.recordArtifact({ ...base, personId: other.id, name: "y.md", path: "artifacts/y.md", createdAt: at(3000), versionOf: first.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
      // Deleting the latest version makes the one before it the latest; another person deletes nothing.
      expect(await store.artifacts.deleteArtifact(other.id, third.id, "version")).toEqual([]);
      expect((await store.artifacts.deleteArtifact(person.id, third.id, "version")).map((a) => a.version)).toEqual([3]);
      expect((await store.artifacts.listArtifacts(person.id)).items.map((a) => [a.id, a.version])).toEqual([[second.id, 2], [lone.id, 1]]);
      expect((await store.artifacts.getArtifact(second.id))?.latest).toBe(true);
      const gone = await store.artifacts.deleteArtifact(person.id, first.id, "artifact");
      expect(gone.map((a) => a.path)).toEqual(["artifacts/v1-plan.md", "artifacts/v2-plan.md"]);
      expect(await store.artifacts.listArtifactVersions(first.id)).toEqual([]);
      expect((await store.artifacts.listArtifacts(person.id)).items.map((a) => a.id)).toEqual([lone.id]);
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
