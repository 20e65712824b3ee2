/**
 * Delivers one outbox row through the real Telegram channel in a process of its own, so a test can
 * kill it with SIGKILL mid-send the way a crash would. Environment: OB_API_ROOT, OB_TOKEN, OB_DB
 * (SQLite file), OB_TEXT (the message's markdown), OB_BUTTONS (`1`: the message carries a button).
 * The person (Telegram chat 42) and the row (delivery key `crash-test`) are created once: a
 * restarted child finds them and continues the row. Prints `{"progress":…}` after each saved step
 * and `{"delivered":[platform ids]}` when the row is delivered.
 */
import { pino } from "pino";
import { createTelegramChannel } from "../../bots/telegram/channel.js";
import { storeUpdateJournal } from "../../bots/telegram/journal.js";
import { OutboxDelivery } from "../../core/outbox/delivery.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";

const { OB_API_ROOT, OB_TOKEN, OB_DB, OB_TEXT, OB_BUTTONS } = process.env;
if (!OB_API_ROOT || !OB_TOKEN || !OB_DB || !OB_TEXT) throw new Error("OB_API_ROOT, OB_TOKEN, OB_DB and OB_TEXT are required");
const logger = pino({ level: "silent" });
const store = openSqliteStore({ path: OB_DB });
const channel = createTelegramChannel({ token: OB_TOKEN, apiRoot: OB_API_ROOT, logger, journal: storeUpdateJournal(store.inbound, logger) });
const known = await store.persons.findIdentity("telegram", "42");
const personId = known?.personId ?? (await store.persons.createPerson({ displayName: "Ana" })).id;
if (!known) await store.persons.addIdentity({ personId, channel: "telegram", accountId: "42", address: "42" });
await store.outbox.enqueueOutbound({ personId, deliveryKey: "crash-test", text: OB_TEXT, buttons: OB_BUTTONS === "1" ? [{ id: "pay:1", label: "Pay" }] : [], channel: "telegram" }, new Date());
// A short lease: the restarted child may claim the row the killed one left "sending" a second later.
const delivery = new OutboxDelivery({ store, adapters: () => new Map([["telegram", channel]]), clock: { now: () => new Date() }, logger, owner: `child-${process.pid}`, leaseMs: 1_000 });
const deadline = Date.now() + 20_000;
for (;;) {
  const row = await delivery.claim();
  if (row) {
    process.stdout.write(`${JSON.stringify({ claimed: row.id, progress: row.progress })}\n`);
    await delivery.run(row);
  }
  const [done] = (await store.outbox.listOutbound(personId)).items.filter((m) => m.deliveryKey === "crash-test" && m.delivered);
  if (done) {
    process.stdout.write(`${JSON.stringify({ delivered: done.delivered!.platformIds })}\n`);
    break;
  }
  if (Date.now() > deadline) throw new Error("the row was not delivered in 20 s");
  await new Promise((r) => setTimeout(r, 100));
}
// Deliver whatever followed (the notice of a part given up).
for (let row = await delivery.claim(); row; row = await delivery.claim()) await delivery.run(row);
process.stdout.write(`${JSON.stringify({ idle: true })}\n`);
await store.close();
process.exit(0);
