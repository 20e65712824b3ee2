import { pino } from "pino";
import type { ChannelAdapter, ChannelTarget, OutboundContent } from "../../core/channels/port.js";
import { OutboxDelivery } from "../../core/outbox/delivery.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import type { OutboxMessage } from "../../core/outbox/index.js";

/**
 * Delivers `content` to `target` through the real outbox (an in-memory SQLite store, one person with
 * one identity on the adapter's channel): rendering levels, re-rendering after a rejected payload and
 * retries behave as in production. Returns the final outbox row (its `delivered.platformIds`).
 */
export async function deliverThroughOutbox(adapter: ChannelAdapter, target: ChannelTarget, content: OutboundContent): Promise<OutboxMessage> {
  const store = openSqliteStore({ path: ":memory:" });
  try {
    const person = await store.persons.createPerson({ displayName: target.accountId });
    await store.persons.addIdentity({ personId: person.id, channel: adapter.channel, accountId: target.accountId, address: target.address });
    await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: `test:${Date.now()}`, text: content.text, buttons: content.buttons, channel: adapter.channel }, new Date());
    const delivery = new OutboxDelivery({ store, adapters: () => new Map([[adapter.channel, adapter]]), clock: { now: () => new Date() }, logger: pino({ level: "silent" }), owner: "test", leaseMs: 30_000 });
    for (let row = await delivery.claim(); row; row = await delivery.claim()) await delivery.run(row);
    const [row] = (await store.outbox.listOutbound(person.id)).items;
    if (!row) throw new Error("the outbox row disappeared");
    return row;
  } finally {
    await store.close();
  }
}
