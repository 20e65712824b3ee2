import { describe, expect, it } from "vitest";
import { asId } from "../../../../core/ids.js";
import type { OutboxMessage } from "../../../../core/outbox/index.js";
import { type ContractContext, at, expectCode, makePerson, readAllPages } from "./support.js";

/** The durable outbox: idempotent enqueue, per-person order, leases and delivery records. */
export function outboxContract(ctx: ContractContext): void {
  describe("outbox", () => {
    it("enqueues with defaults; the same delivery key returns the first row unchanged", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const first = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "task1:step3", text: "Done ✅" }, at(0));
      expect(first).toMatchObject({
        personId: person.id,
        deliveryKey: "task1:step3",
        channel: null,
        lane: null,
        text: "Done ✅",
        buttons: [],
        editOf: null,
        card: null,
        status: "queued",
        attempts: 0,
        nextAttemptAt: at(0),
        lease: null,
        lastError: null,
        delivered: null,
        createdAt: at(0),
      });
      expect(first.id).toMatch(/^out_/);
      const again = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "task1:step3", text: "different", channel: "slack" }, at(5));
      expect(again).toEqual(first);
      expect(await store.outbox.getOutbound(first.id)).toEqual(first);
      expect(await store.outbox.getOutbound(asId("outbox", "out_missing"))).toBeNull();

      const card = await store.outbox.enqueueOutbound(
        { personId: person.id, deliveryKey: "card", text: "Allow?", channel: "telegram", buttons: [{ id: "a:1", label: "Allow once" }, { id: "d:1", label: "Deny" }], editOf: first.id },
        at(1),
      );
      expect(await store.outbox.getOutbound(card.id)).toMatchObject({ channel: "telegram", editOf: first.id, buttons: [{ id: "a:1", label: "Allow once" }, { id: "d:1", label: "Deny" }] });
      // A structured card is opaque JSON to the store (model-made keys included).
      const view = { v: 1, kind: "approval", fields: [{ label: "Body", value: "x" }], "a.b": { $where: "1" } };
      const structured = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "card-2", text: "Allow?", card: view }, at(2));
      expect(structured.card).toEqual(view);
      expect((await store.outbox.getOutbound(structured.id))?.card).toEqual(view);
    });

    it("delivers each person's messages in order, one at a time, persons in parallel", async () => {
      const store = ctx.store();
      const a = await makePerson(store);
      const b = await makePerson(store);
      const a1 = await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "a1", text: "a1" }, at(0));
      const a2 = await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "a2", text: "a2" }, at(1));
      const b1 = await store.outbox.enqueueOutbound({ personId: b.id, deliveryKey: "b1", text: "b1" }, at(2));

      const c1 = await store.outbox.claimNextOutbound({ owner: "W1", now: at(10), leaseMs: 1000 });
      expect(c1?.id).toBe(a1.id);
      expect(c1).toMatchObject({ status: "sending", attempts: 1, lease: { owner: "W1", until: at(1010) } });
      // a2 waits behind a1; the next claim is b's message.
      const c2 = await store.outbox.claimNextOutbound({ owner: "W2", now: at(10), leaseMs: 1000 });
      expect(c2?.id).toBe(b1.id);
      expect(await store.outbox.claimNextOutbound({ owner: "W2", now: at(10), leaseMs: 1000 })).toBeNull();

      const delivered = await store.outbox.markDelivered({ id: a1.id, owner: "W1", channel: "telegram", address: "1001", platformIds: ["55", "56"], now: at(20) });
      expect(delivered).toMatchObject({ status: "delivered", lease: null, delivered: { channel: "telegram", address: "1001", platformIds: ["55", "56"], at: at(20) } });
      expect(await store.outbox.getOutbound(a1.id)).toEqual(delivered);
      await expectCode(store.outbox.markDelivered({ id: a1.id, owner: "W1", channel: "telegram", address: "1001", platformIds: ["57"], now: at(21) }), "CONFLICT");

      expect((await store.outbox.claimNextOutbound({ owner: "W1", now: at(21), leaseMs: 1000, personId: a.id }))?.id).toBe(a2.id);
    });

    it("retries later, keeps order behind a retrying message, and moves on after a permanent failure", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const m1 = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "m1", text: "m1" }, at(0));
      const m2 = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "m2", text: "m2" }, at(1));
      await store.outbox.claimNextOutbound({ owner: "W", now: at(10), leaseMs: 1000 });
      await expectCode(store.outbox.markDeliveryFailed({ id: m1.id, owner: "other", error: "x", retryAt: at(100), now: at(11) }), "CONFLICT");
      const retrying = await store.outbox.markDeliveryFailed({ id: m1.id, owner: "W", error: "429 Too Many Requests", retryAt: at(5000), now: at(11) });
      expect(retrying).toMatchObject({ status: "queued", nextAttemptAt: at(5000), lastError: "429 Too Many Requests", lease: null, attempts: 1 });

      expect(await store.outbox.claimNextOutbound({ owner: "W", now: at(4999), leaseMs: 1000 })).toBeNull();
      const second = await store.outbox.claimNextOutbound({ owner: "W", now: at(5000), leaseMs: 1000 });
      expect(second).toMatchObject({ id: m1.id, attempts: 2 });
      const failed = await store.outbox.markDeliveryFailed({ id: m1.id, owner: "W", error: "403 Forbidden: bot was blocked", retryAt: null, now: at(5001) });
      expect(failed).toMatchObject({ status: "failed", lastError: "403 Forbidden: bot was blocked", lease: null });
      expect((await store.outbox.claimNextOutbound({ owner: "W", now: at(5002), leaseMs: 1000 }))?.id).toBe(m2.id);
    });

    it("lets another worker reclaim a message whose lease expired; the old owner can no longer mark it", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const m = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "m", text: "m" }, at(0));
      await store.outbox.claimNextOutbound({ owner: "W1", now: at(0), leaseMs: 1000 });
      expect(await store.outbox.claimNextOutbound({ owner: "W2", now: at(999), leaseMs: 1000 })).toBeNull();
      const reclaimed = await store.outbox.claimNextOutbound({ owner: "W2", now: at(1000), leaseMs: 1000 });
      expect(reclaimed).toMatchObject({ id: m.id, status: "sending", attempts: 2, lease: { owner: "W2", until: at(2000) } });
      await expectCode(store.outbox.markDelivered({ id: m.id, owner: "W1", channel: "local", address: "u", platformIds: [], now: at(1001) }), "CONFLICT");
      const done = await store.outbox.markDelivered({ id: m.id, owner: "W2", channel: "local", address: "u", platformIds: ["1"], now: at(1002) });
      expect(done.status).toBe("delivered");
    });

    it("records a delivery whose lease lapsed while nobody reclaimed the message", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const m = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "slow", text: "slow" }, at(0));
      await store.outbox.claimNextOutbound({ owner: "W1", now: at(0), leaseMs: 1000 });
      const done = await store.outbox.markDelivered({ id: m.id, owner: "W1", channel: "slack", address: "D1", platformIds: ["1.2"], now: at(9000) });
      expect(done).toMatchObject({ status: "delivered", attempts: 1 });
      expect(await store.outbox.claimNextOutbound({ owner: "W2", now: at(10_000), leaseMs: 1000 })).toBeNull();
    });

    it("keeps delivery progress under the lease; renews and ends leases; tells when the next message is due", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const m = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "parts", text: "long" }, at(0));
      expect(m.progress).toEqual({ target: null, sent: {}, inflight: null, fallback: {}, uncertain: [] });
      expect(await store.outbox.nextDueAt()).toEqual(at(0));
      await store.outbox.claimNextOutbound({ owner: "W1", now: at(0), leaseMs: 1000 });
      const progress = { target: { channel: "telegram" as const, address: "42", accountId: "42" }, sent: { "0": "11", "1-0": "12" }, inflight: "1-1", fallback: { "1": 2 }, uncertain: ["x"] };
      const saved = await store.outbox.saveProgress({ id: m.id, owner: "W1", progress, now: at(500), leaseMs: 1000 });
      expect(saved.progress).toEqual(progress);
      expect(saved.lease).toEqual({ owner: "W1", until: at(1500) });
      await expectCode(store.outbox.saveProgress({ id: m.id, owner: "W2", progress, now: at(600), leaseMs: 1000 }), "CONFLICT");
      expect(await store.outbox.nextDueAt()).toEqual(at(1500));
      expect(await store.outbox.renewLeases({ owner: "W1", now: at(1400), leaseMs: 1000 })).toBe(1);
      expect(await store.outbox.claimNextOutbound({ owner: "W2", now: at(2000), leaseMs: 1000 })).toBeNull();
      // The process holding it is gone: its lease ends now and the progress survives the reclaim.
      expect(await store.outbox.expireForeignLeases({ owner: "W2", now: at(2100) })).toBe(1);
      const reclaimed = await store.outbox.claimNextOutbound({ owner: "W2", now: at(2100), leaseMs: 1000 });
      expect(reclaimed?.progress).toEqual(progress);
      await store.outbox.markDelivered({ id: m.id, owner: "W2", channel: "telegram", address: "42", platformIds: ["11", "12"], now: at(2200) });
      expect(await store.outbox.nextDueAt()).toBeNull();
    });

    it("keeps order per person and channel: a message retrying on one channel holds up only that channel", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const photo = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "tg-photo", text: "photo", channel: "telegram" }, at(0));
      const tgLater = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "tg-later", text: "later", channel: "telegram" }, at(1));
      const web = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "web", text: "answer", channel: "local" }, at(2));
      expect(photo.lane).toBe("telegram");
      expect((await store.outbox.claimNextOutbound({ owner: "W", now: at(10), leaseMs: 1000 }))?.id).toBe(photo.id);
      await store.outbox.markDeliveryFailed({ id: photo.id, owner: "W", error: "500", retryAt: at(60_000), now: at(11) });
      // The Telegram lane waits for the photo; the web chat's answer goes at once.
      expect((await store.outbox.claimNextOutbound({ owner: "W", now: at(12), leaseMs: 1000 }))?.id).toBe(web.id);
      expect(await store.outbox.claimNextOutbound({ owner: "W", now: at(13), leaseMs: 1000 })).toBeNull();
      await store.outbox.markDelivered({ id: web.id, owner: "W", channel: "local", address: "u", platformIds: ["1"], now: at(14) });
      expect((await store.outbox.claimNextOutbound({ owner: "W", now: at(60_000), leaseMs: 1000 }))?.id).toBe(photo.id);
      expect(tgLater.lane).toBe("telegram");
    });

    it("routes a message for wherever the person is, fails one with nowhere to go, and takes a claimed one off its channel", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const anywhere = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "any", text: "reminder" }, at(0));
      const nowhere = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "none", text: "x" }, at(1));
      expect(anywhere.lane).toBeNull();
      expect((await store.outbox.listUnroutedOutbound(10)).map((m) => m.id)).toEqual([anywhere.id, nowhere.id]);
      expect(await store.outbox.routeOutbound({ id: anywhere.id, lane: "telegram", now: at(2) })).toBe(true);
      expect(await store.outbox.routeOutbound({ id: anywhere.id, lane: "local", now: at(2) })).toBe(false);
      expect(await store.outbox.routeOutbound({ id: nowhere.id, lane: null, error: "no reachable identity", now: at(2) })).toBe(true);
      expect(await store.outbox.getOutbound(nowhere.id)).toMatchObject({ status: "failed", lastError: "no reachable identity" });
      expect(await store.outbox.listUnroutedOutbound(10)).toEqual([]);

      const claimed = await store.outbox.claimNextOutbound({ owner: "W", now: at(3), leaseMs: 1000 });
      expect(claimed).toMatchObject({ id: anywhere.id, lane: "telegram" });
      const progress = { target: null, sent: {}, inflight: null, fallback: {}, uncertain: [] };
      await expectCode(store.outbox.rerouteOutbound({ id: anywhere.id, owner: "other", progress, error: "unlinked", now: at(4) }), "CONFLICT");
      const rerouted = await store.outbox.rerouteOutbound({ id: anywhere.id, owner: "W", progress, error: "unlinked", now: at(4) });
      expect(rerouted).toMatchObject({ status: "queued", lane: null, channel: null, lease: null, lastError: "unlinked", nextAttemptAt: at(4) });
      expect((await store.outbox.listUnroutedOutbound(10)).map((m) => m.id)).toEqual([anywhere.id]);
    });

    it("wakes the queued messages of one channel (a channel was unlinked)", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const m = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "tg", text: "x", channel: "telegram" }, at(0));
      await store.outbox.claimNextOutbound({ owner: "W", now: at(0), leaseMs: 1000 });
      await store.outbox.markDeliveryFailed({ id: m.id, owner: "W", error: "500", retryAt: at(600_000), now: at(1) });
      expect(await store.outbox.wakeLane({ personId: person.id, lane: "local", now: at(2) })).toBe(0);
      expect(await store.outbox.wakeLane({ personId: person.id, lane: "telegram", now: at(2) })).toBe(1);
      expect((await store.outbox.getOutbound(m.id))?.nextAttemptAt).toEqual(at(2));
    });

    it("hands one message to exactly one of two racing workers", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "m", text: "m" }, at(0));
      const claims = await Promise.all([
        store.outbox.claimNextOutbound({ owner: "W1", now: at(1), leaseMs: 1000 }),
        store.outbox.claimNextOutbound({ owner: "W2", now: at(1), leaseMs: 1000 }),
      ]);
      expect(claims.filter((c): c is OutboxMessage => c !== null)).toHaveLength(1);
    });

    it("lists a person's messages oldest first, by status, across pages", async () => {
      const store = ctx.store();
      const person = await makePerson(store);
      const other = await makePerson(store);
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: `k${i}`, text: `t${i}` }, at(i))).id);
      await store.outbox.enqueueOutbound({ personId: other.id, deliveryKey: "o", text: "o" }, at(0));
      await store.outbox.claimNextOutbound({ owner: "W", now: at(10), leaseMs: 1000, personId: person.id });
      await store.outbox.markDelivered({ id: ids[0]!, owner: "W", channel: "local", address: "x", platformIds: [], now: at(11) });

      const { items } = await readAllPages((page) => store.outbox.listOutbound(person.id, page), 2);
      expect(items.map((m) => m.id)).toEqual(ids);
      expect((await store.outbox.listOutbound(person.id, { status: ["queued"] })).items.map((m) => m.id)).toEqual(ids.slice(1));
      expect((await store.outbox.listOutbound(person.id, { status: ["delivered", "failed"] })).items.map((m) => m.id)).toEqual([ids[0]]);
    });
  });
}
