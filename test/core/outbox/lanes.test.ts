import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveryError, fileOfPart, sendsAsDocument, type ChannelAdapter, type OutboundAttachment, type OutboundPart } from "../../../core/channels/index.js";
import { asId, type ArtifactId, type PersonId } from "../../../core/ids.js";
import { GIVE_UP_AFTER_MS, OutboxDelivery, WebPresence } from "../../../core/outbox/index.js";
import type { Store } from "../../../core/storage/index.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ChannelName } from "../../../core/channels/index.js";

type Sent = { address: string; text: string | null; file: string | null; asDocument: boolean };

/** A platform fake that records text and files; `refuse` decides per send whether the platform answers with an error. */
function fakeAdapter(channel: ChannelName) {
  const sent: Sent[] = [];
  const attempts: Sent[] = [];
  let refuse: (s: Sent) => DeliveryError | null = () => null;
  const adapter: ChannelAdapter & { sent: Sent[]; attempts: Sent[]; refuseWith(f: typeof refuse): void } = {
    channel,
    resend: channel === "local" ? "idempotent" : "at-most-once",
    sent,
    attempts,
    refuseWith(f) {
      refuse = f;
    },
    start: async () => undefined,
    stop: async () => undefined,
    render(content): OutboundPart[] {
      return content.text ? [{ body: content.text, plain: content.text, buttons: false }] : [];
    },
    async sendPart(target, part) {
      const file = fileOfPart(part);
      const s: Sent = { address: target.address, text: file ? null : (part.body as string), file: file?.name ?? null, asDocument: sendsAsDocument(part) };
      attempts.push(s);
      const error = refuse(s);
      if (error) throw error;
      sent.push(s);
      return `${channel}-${sent.length}`;
    },
  };
  return adapter;
}

const photo: OutboundAttachment = { id: asId("artifact", "art_0000000000000000000000000001"), name: "cat.png", mimeType: "image/png", bytes: Buffer.from("png") };
const http500 = () => new DeliveryError("telegram: sendPhoto failed (500: Internal Server Error)", "transient");

describe("outbox lanes, refused files and giving up", () => {
  let dir: string;
  let store: Store;
  let now: Date;
  let telegram: ReturnType<typeof fakeAdapter>;
  let local: ReturnType<typeof fakeAdapter>;
  let presence: WebPresence;
  let running: ChannelName[];

  const make = (owner: string) =>
    new OutboxDelivery({
      store,
      adapters: () => new Map<ChannelName, ChannelAdapter>(([["telegram", telegram], ["local", local]] as const).filter(([c]) => running.includes(c))),
      clock: { now: () => now },
      logger: pino({ level: "silent" }),
      owner,
      leaseMs: 30_000,
      presence,
      attachments: { loadAttachment: async (_p: PersonId, id: ArtifactId) => (id === photo.id ? photo : null) },
      fileLink: (personId, id) => `https://familiar.example/files/${personId}/${id}`,
    });

  async function drain(d: OutboxDelivery): Promise<void> {
    for (let row = await d.claim(); row; row = await d.claim()) await d.run(row);
  }

  /** Lets time pass in steps of `stepMs`, delivering whatever falls due, up to `totalMs`. */
  async function pass(d: OutboxDelivery, totalMs: number, stepMs = 1_000): Promise<void> {
    const end = now.getTime() + totalMs;
    while (now.getTime() < end) {
      now = new Date(Math.min(end, now.getTime() + stepMs));
      await drain(d);
    }
  }

  async function personOnBoth() {
    const p = await store.persons.createPerson({ displayName: "Zoë" });
    await store.persons.addIdentity({ personId: p.id, channel: "telegram", accountId: "42" });
    await store.persons.addIdentity({ personId: p.id, channel: "local", accountId: "zoe" });
    return p;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "familiar-lanes-"));
    now = new Date("2026-12-01T10:00:00Z");
    store = openSqliteStore({ path: join(dir, "db.sqlite"), clock: { now: () => now } });
    telegram = fakeAdapter("telegram");
    local = fakeAdapter("local");
    presence = new WebPresence({ now: () => now });
    running = ["telegram", "local"];
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers keep flowing on the web chat while Telegram keeps refusing a photo", async () => {
    const p = await personOnBoth();
    const d = make("W1");
    telegram.refuseWith(() => http500());
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "photo", text: "", attachments: [photo.id], channel: "telegram" }, now);
    await drain(d);
    for (let i = 0; i < 3; i++) {
      await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: `web${i}`, text: `answer ${i}`, channel: "local" }, now);
      await pass(d, 5_000);
    }
    expect(local.sent.map((s) => s.text)).toEqual(["answer 0", "answer 1", "answer 2"]);
    expect(telegram.sent).toEqual([]);
  });

  it("a photo Telegram refuses is sent as a document, a refused document as a link", async () => {
    const p = await personOnBoth();
    const d = make("W1");
    telegram.refuseWith((s) => (s.file && !s.asDocument ? http500() : null));
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "photo", text: "Here is your cat", attachments: [photo.id], channel: "telegram" }, now);
    await pass(d, 60_000);
    expect(telegram.sent).toEqual([
      { address: "42", text: "Here is your cat", file: null, asDocument: false },
      { address: "42", text: null, file: "cat.png", asDocument: true },
    ]);
    telegram.refuseWith((s) => (s.file ? http500() : null));
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "photo2", text: "", attachments: [photo.id], channel: "telegram" }, now);
    await pass(d, 120_000);
    expect(telegram.sent.at(-1)?.text).toBe(`📎 cat.png could not be attached here; here is a link to it: https://familiar.example/files/${p.id}/${photo.id}`);
    expect(local.sent).toEqual([]);
  });

  it("gives a message that keeps failing up after the bound and hands it to the web chat; a restart in the middle changes nothing", async () => {
    const p = await personOnBoth();
    telegram.refuseWith(() => http500());
    const row = await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "photo", text: "", attachments: [photo.id], channel: "telegram" }, now);
    const start = now.getTime();
    await pass(make("W1"), GIVE_UP_AFTER_MS / 2, 5_000);
    expect(local.sent).toEqual([]);
    // The process dies; a new one takes over the rest of the timeline.
    await store.outbox.expireForeignLeases({ owner: "W2", now });
    await pass(make("W2"), GIVE_UP_AFTER_MS / 2 + 5_000, 5_000);
    expect(local.sent).toEqual([{ address: "zoe", text: "I couldn't send you the photo on Telegram — here it is.", file: null, asDocument: false }, { address: "zoe", text: null, file: "cat.png", asDocument: false }]);
    const failed = await store.outbox.getOutbound(row.id);
    expect(failed?.status).toBe("failed");
    const givenUp = (await store.audit.listAudit(p.id, { kinds: ["outbound.given_up"] })).items;
    expect(givenUp).toHaveLength(1);
    expect(givenUp[0]!.at.getTime() - start).toBeLessThanOrEqual(GIVE_UP_AFTER_MS + 5_000);
    expect(givenUp[0]!.summary).toMatch(/Gave up sending you the photo on Telegram .* and sent it in the web chat instead/);
    // The retries were spread over the bound, not made at once.
    expect(telegram.attempts.length).toBeGreaterThan(4);
    expect(telegram.attempts.length).toBeLessThan(20);
    // Later, nothing more happens: one hand-off.
    await pass(make("W2"), 3_600_000, 60_000);
    expect(local.sent).toHaveLength(2);
  });

  it("a channel that is not running holds up only its own messages, and they are handed on after the bound", async () => {
    const p = await personOnBoth();
    running = ["local"];
    const d = make("W1");
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "tg", text: "for telegram", channel: "telegram" }, now);
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "web", text: "for the web chat", channel: "local" }, now);
    await drain(d);
    expect(local.sent.map((s) => s.text)).toEqual(["for the web chat"]);
    await pass(d, GIVE_UP_AFTER_MS + 5_000, 10_000);
    expect(local.sent.map((s) => s.text)).toEqual(["for the web chat", "I couldn't send you a message on Telegram — here it is.\n\nfor telegram"]);
  });

  it("unlinking a channel re-routes what waits for it", async () => {
    const p = await personOnBoth();
    const d = make("W1");
    telegram.refuseWith(() => http500());
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "tg", text: "waiting", channel: "telegram" }, now);
    await drain(d);
    expect(local.sent).toEqual([]);
    await store.persons.removeIdentity(p.id, "telegram", "42");
    await store.outbox.wakeLane({ personId: p.id, lane: "telegram", now });
    await drain(d);
    expect(local.sent.map((s) => s.text)).toEqual(["waiting"]);
  });

  it("a message for wherever the person is: the web chat while a page is open, else the last used messenger", async () => {
    const p = await personOnBoth();
    const d = make("W1");
    await store.conversation.appendMessage({ personId: p.id, role: "user", channel: "telegram", text: "hi from telegram", taskId: null });
    await store.conversation.appendMessage({ personId: p.id, role: "user", channel: "local", text: "remind me at 9", taskId: null });
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "r1", text: "reminder, tab closed" }, now);
    await drain(d);
    expect(telegram.sent.map((s) => s.text)).toEqual(["reminder, tab closed"]);
    presence.seen(p.id);
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "r2", text: "reminder, tab open" }, now);
    await drain(d);
    expect(local.sent.map((s) => s.text)).toEqual(["reminder, tab open"]);
    now = new Date(now.getTime() + 60_000);
    await store.persons.updatePerson(p.id, { reach: { mode: "all" } });
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "r3", text: "everywhere" }, now);
    await drain(d);
    expect([telegram.sent.at(-1)?.text, local.sent.at(-1)?.text]).toEqual(["everywhere", "everywhere"]);
    await store.persons.updatePerson(p.id, { reach: { mode: "messenger", channel: "local" } });
    await store.outbox.enqueueOutbound({ personId: p.id, deliveryKey: "r4", text: "chosen" }, now);
    await drain(d);
    expect(local.sent.at(-1)?.text).toBe("chosen");
    expect(telegram.sent.at(-1)?.text).toBe("everywhere");
  });
});
