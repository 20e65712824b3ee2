import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveryError, type ChannelAdapter, type ChannelTarget, type OutboundContent } from "../../../core/channels/port.js";
import type { PersonId } from "../../../core/ids.js";
import { OutboxDelivery, retryDelayMs } from "../../../core/outbox/delivery.js";
import type { Store } from "../../../core/storage/ports.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ChannelName } from "../../../core/storage/types.js";

describe("outbox delivery", () => {
  let dir: string;
  let store: Store;
  let now: Date;
  let calls: { address: string; text: string; edit?: string[] }[];
  let behaviour: (target: ChannelTarget, content: OutboundContent) => void;
  let retries: { personId: PersonId; at: Date }[];
  let delivery: OutboxDelivery;

  const telegram: ChannelAdapter = {
    channel: "telegram",
    start: async () => undefined,
    stop: async () => undefined,
    send: async (target, content) => {
      behaviour(target, content);
      calls.push({ address: target.address, text: content.text });
      return { platformIds: [`m${calls.length}`] };
    },
    edit: async (target, ids, content) => void calls.push({ address: target.address, text: content.text, edit: ids }),
  };

  async function personOn(channel: ChannelName, accountId: string) {
    const p = await store.persons.createPerson({ displayName: accountId });
    await store.persons.addIdentity({ personId: p.id, channel, accountId });
    return p;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "familiar-outbox-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    now = new Date("2026-11-30T10:00:00Z");
    calls = [];
    retries = [];
    behaviour = () => undefined;
    delivery = new OutboxDelivery({
      store,
      adapters: () => new Map([["telegram", telegram]]),
      clock: { now: () => now },
      logger: pino({ level: "silent" }),
      onRetryScheduled: async (personId, at) => void retries.push({ personId, at }),
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("T6: a blocked person is marked unreachable and not retried; the next person still gets theirs", async () => {
    const a = await personOn("telegram", "A");
    const b = await personOn("telegram", "B");
    behaviour = (target) => {
      if (target.address === "A") throw new DeliveryError("Forbidden: bot was blocked by the user", true);
    };
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "a1", text: "for A", channel: "telegram" }, now);
    await store.outbox.enqueueOutbound({ personId: b.id, deliveryKey: "b1", text: "for B", channel: "telegram" }, now);
    await delivery.deliver();
    expect(calls.map((c) => c.text)).toEqual(["for B"]);
    expect((await store.persons.findIdentity("telegram", "A"))!.unreachable?.reason).toMatch(/blocked/);
    expect((await store.outbox.listOutbound(a.id)).items[0]!.status).toBe("failed");
    expect(retries).toEqual([]);
    // Later messages to A are not attempted at all.
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "a2", text: "again A", channel: "telegram" }, now);
    await delivery.deliver(a.id);
    expect(calls.map((c) => c.text)).toEqual(["for B"]);
    expect(await store.audit.listAudit(a.id)).toMatchObject({ items: expect.arrayContaining([expect.objectContaining({ kind: "outbound.failed" })]) });
  });

  it("retries a transient failure with backoff and delivers in order afterwards, exactly once", async () => {
    const a = await personOn("telegram", "A");
    let fail = true;
    behaviour = () => {
      if (fail) throw new DeliveryError("Too Many Requests", false, { retryAfterMs: 30_000 });
    };
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "1", text: "first", channel: "telegram" }, now);
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "2", text: "second", channel: "telegram" }, now);
    await delivery.deliver(a.id);
    expect(calls).toEqual([]);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.at.getTime() - now.getTime()).toBe(Math.max(30_000, retryDelayMs(1)));
    // Not due yet: nothing happens.
    await delivery.deliver(a.id);
    expect(calls).toEqual([]);
    fail = false;
    now = new Date(retries[0]!.at.getTime() + 1);
    await delivery.deliver(a.id);
    await delivery.deliver(a.id);
    expect(calls.map((c) => c.text)).toEqual(["first", "second"]);
    expect((await store.outbox.listOutbound(a.id)).items.map((m) => m.status)).toEqual(["delivered", "delivered"]);
  });

  it("edits a delivered message in place (a card showing its decision)", async () => {
    const a = await personOn("telegram", "A");
    const card = await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "card", text: "Approve?", buttons: [{ id: "b1", label: "Yes" }], channel: "telegram" }, now);
    await delivery.deliver(a.id);
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "card:decided", text: "Approved", editOf: card.id, channel: "telegram" }, now);
    await delivery.deliver(a.id);
    expect(calls).toEqual([
      { address: "A", text: "Approve?" },
      { address: "A", text: "Approved", edit: ["m1"] },
    ]);
  });
});
