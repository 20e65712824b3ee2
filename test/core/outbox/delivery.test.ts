import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveryError, type ChannelAdapter, type OutboundPart, type RenderOptions, type ResendMode } from "../../../core/channels/port.js";
import { OutboxDelivery, repeatMark, retryDelayMs, uncertainNotice } from "../../../core/outbox/delivery.js";
import type { Store } from "../../../core/storage/ports.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ChannelName } from "../../../core/channels/index.js";
import type { OutboxMessage } from "../../../core/outbox/index.js";

/** A platform fake: splits text at "|" into parts; `fail` decides per send whether the platform refuses. */
function fakeAdapter(channel: ChannelName, resend: ResendMode) {
  const sent: { address: string; text: string; style: string; key: string }[] = [];
  const edits: { ids: string[]; text: string }[] = [];
  let fail: (text: string, style: string) => DeliveryError | "crash" | null = () => null;
  const adapter: ChannelAdapter & { sent: typeof sent; edits: typeof edits; failWith(f: typeof fail): void } = {
    channel,
    resend,
    sent,
    edits,
    failWith(f) {
      fail = f;
    },
    start: async () => undefined,
    stop: async () => undefined,
    render(content, options: RenderOptions): OutboundPart[] {
      const pieces = options.style === "rich" ? content.text.split("|") : chunk(content.text, options.scale < 1 ? 3 : 1000);
      return pieces.map((p, i) => ({ body: { text: p, style: options.style }, plain: p, buttons: i === pieces.length - 1 && content.buttons.length > 0 }));
    },
    async sendPart(target, part, key) {
      const body = part.body as { text: string; style: string };
      const outcome = fail(body.text, body.style);
      if (outcome === "crash") throw new Error("process killed");
      if (outcome) throw outcome;
      sent.push({ address: target.address, text: body.text, style: body.style, key });
      return `id${sent.length}`;
    },
    async findSent(_target, key) {
      const i = sent.findIndex((s) => s.key === key);
      return i >= 0 ? `id${i + 1}` : null;
    },
    async edit(_target, ids, content) {
      if (content.text.includes("gone")) throw new DeliveryError("message to edit not found", "payload_rejected");
      edits.push({ ids, text: content.text });
    },
  };
  return adapter;
}

function chunk(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe("outbox delivery", () => {
  let dir: string;
  let store: Store;
  let now: Date;
  let telegram: ReturnType<typeof fakeAdapter>;
  let local: ReturnType<typeof fakeAdapter>;
  let delivery: OutboxDelivery;

  const make = (owner: string) =>
    new OutboxDelivery({
      store,
      adapters: () => new Map<ChannelName, ChannelAdapter>([["telegram", telegram], ["local", local]]),
      clock: { now: () => now },
      logger: pino({ level: "silent" }),
      owner,
      leaseMs: 30_000,
    });

  /** Claims and runs rows until nothing is claimable now (what the outbox loop does). */
  async function drain(d = delivery): Promise<void> {
    for (let row = await d.claim(); row; row = await d.claim()) await d.run(row);
  }

  async function personOn(channel: ChannelName, accountId: string) {
    const p = await store.persons.createPerson({ displayName: accountId });
    await store.persons.addIdentity({ personId: p.id, channel, accountId });
    return p;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "familiar-outbox-"));
    now = new Date("2026-11-30T10:00:00Z");
    store = openSqliteStore({ path: join(dir, "db.sqlite"), clock: { now: () => now } });
    telegram = fakeAdapter("telegram", "at-most-once");
    local = fakeAdapter("local", "idempotent");
    delivery = make("W1");
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("T6: a person who blocked the bot is marked unreachable and not retried; the next person still gets theirs", async () => {
    const a = await personOn("telegram", "A");
    const b = await personOn("telegram", "B");
    telegram.failWith((text) => (text === "for A" ? new DeliveryError("Forbidden: bot was blocked by the user", "recipient_gone") : null));
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "a1", text: "for A", channel: "telegram" }, now);
    await store.outbox.enqueueOutbound({ personId: b.id, deliveryKey: "b1", text: "for B", channel: "telegram" }, now);
    await drain();
    expect(telegram.sent.map((c) => c.text)).toEqual(["for B"]);
    expect((await store.persons.findIdentity("telegram", "A"))!.unreachable?.reason).toMatch(/blocked/);
    expect((await store.outbox.listOutbound(a.id)).items[0]!.status).toBe("failed");
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "a2", text: "again A", channel: "telegram" }, now);
    await drain();
    expect(telegram.sent.map((c) => c.text)).toEqual(["for B"]);
    expect(await store.audit.listAudit(a.id)).toMatchObject({ items: expect.arrayContaining([expect.objectContaining({ kind: "outbound.failed" })]) });
  });

  it("a message for wherever the person is goes to their other account when one blocked the bot", async () => {
    const a = await personOn("telegram", "A");
    await store.persons.addIdentity({ personId: a.id, channel: "local", accountId: "a-local" });
    telegram.failWith(() => new DeliveryError("Forbidden: bot was blocked by the user", "recipient_gone"));
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "p1", text: "proactive" }, now);
    await drain();
    expect(local.sent.map((s) => s.text)).toEqual(["proactive"]);
  });

  it("a rejected payload is re-rendered as plain text, then in smaller parts — never a reason to mark the person unreachable", async () => {
    const a = await personOn("telegram", "A");
    telegram.failWith((text, style) => (style === "rich" && text.includes("<b>") ? new DeliveryError("can't parse entities", "payload_rejected") : text.length > 5 && text.startsWith("long") ? new DeliveryError("message is too long", "payload_rejected") : null));
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "r1", text: "ok part|<b>bad|longlonglong", channel: "telegram" }, now);
    await drain();
    expect(telegram.sent.map((s) => `${s.style}:${s.text}`)).toEqual(["rich:ok part", "plain:<b>bad", "plain:lon", "plain:glo", "plain:ngl", "plain:ong"]);
    const row = (await store.outbox.listOutbound(a.id)).items[0]!;
    expect(row.status).toBe("delivered");
    expect(row.delivered?.platformIds).toEqual(["id1", "id2", "id3", "id4", "id5", "id6"]);
    expect((await store.persons.findIdentity("telegram", "A"))!.unreachable).toBeNull();
  });

  it("retries a transient failure with backoff, in order, and a retry after a crash continues with the next part", async () => {
    const a = await personOn("telegram", "A");
    let down = true;
    telegram.failWith((text) => (down && text === "two" ? new DeliveryError("Bad Gateway", "transient") : null));
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "m1", text: "one|two|three", channel: "telegram" }, now);
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "m2", text: "after", channel: "telegram" }, now);
    await drain();
    expect(telegram.sent.map((s) => s.text)).toEqual(["one"]);
    const row = (await store.outbox.listOutbound(a.id)).items[0]!;
    expect(row).toMatchObject({ status: "queued", nextAttemptAt: new Date(now.getTime() + retryDelayMs(1)) });
    expect(row.progress.sent).toEqual({ "0": "id1" });
    // Not due yet: nothing happens, and the later message waits behind it.
    await drain();
    expect(telegram.sent).toHaveLength(1);
    down = false;
    now = new Date(now.getTime() + retryDelayMs(1));
    await drain();
    expect(telegram.sent.map((s) => s.text)).toEqual(["one", "two", "three", "after"]);
  });

  it("a text part cut short by a crash is sent again marked as a possible repeat where the platform cannot be asked", async () => {
    const a = await personOn("telegram", "A");
    telegram.failWith((text) => (text === "two" ? "crash" : null));
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "c1", text: "one|two|three", channel: "telegram" }, now);
    const row = (await delivery.claim())!;
    await expect(delivery.run(row)).rejects.toThrow("process killed");
    telegram.failWith(() => null);
    // The dead process's lease ends; another process picks the row up.
    now = new Date(now.getTime() + 30_000);
    await drain(make("W2"));
    expect(telegram.sent.map((s) => s.text)).toEqual(["one", `${repeatMark}\n\ntwo`, "three"]);
    const done: OutboxMessage = (await store.outbox.listOutbound(a.id)).items[0]!;
    expect(done.progress.uncertain).toEqual([]);
    expect(done.delivered?.platformIds).toHaveLength(3);
  });

  it("a part with buttons cut short by a crash is not sent again where the platform cannot be asked (a repeat would harm), and the person is told", async () => {
    const a = await personOn("telegram", "A");
    telegram.failWith((text) => (text === "pay?" ? "crash" : null));
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "c1b", text: "intro|pay?", buttons: [{ id: "pay", label: "Pay" }], channel: "telegram" }, now);
    await expect(delivery.run((await delivery.claim())!)).rejects.toThrow("process killed");
    telegram.failWith(() => null);
    now = new Date(now.getTime() + 30_000);
    await drain(make("W2"));
    expect(telegram.sent.map((s) => s.text)).toEqual(["intro", uncertainNotice]);
    expect((await store.outbox.listOutbound(a.id)).items.find((m) => m.deliveryKey === "c1b")!.progress.uncertain).toEqual(["1"]);
  });

  it("a part cut short by a crash is sent again with the same key where the platform deduplicates", async () => {
    const a = await personOn("local", "a");
    local.failWith((text) => (text === "two" ? "crash" : null));
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "c2", text: "one|two|three", channel: "local" }, now);
    await expect(delivery.run((await delivery.claim())!)).rejects.toThrow("process killed");
    local.failWith(() => null);
    await store.outbox.expireForeignLeases({ owner: "W2", now });
    await drain(make("W2"));
    expect(local.sent.map((s) => s.text)).toEqual(["one", "two", "three"]);
    expect(local.sent.map((s) => s.key)).toEqual(["c2#0", "c2#1", "c2#2"]);
  });

  it("a part cut short by a crash is looked up where the platform can say whether it arrived", async () => {
    const slackish = fakeAdapter("telegram", "lookup");
    telegram = slackish;
    const a = await personOn("telegram", "A");
    let crashAfterSend = true;
    const original = slackish.sendPart.bind(slackish);
    slackish.sendPart = async (target, part, key) => {
      const id = await original(target, part, key);
      if ((part.body as { text: string }).text === "two" && crashAfterSend) {
        crashAfterSend = false;
        throw new Error("process killed after the platform got it");
      }
      return id;
    };
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "c3", text: "one|two|three", channel: "telegram" }, now);
    await expect(delivery.run((await delivery.claim())!)).rejects.toThrow("process killed");
    await store.outbox.expireForeignLeases({ owner: "W2", now });
    await drain(make("W2"));
    expect(slackish.sent.map((s) => s.text)).toEqual(["one", "two", "three"]);
    expect((await store.outbox.listOutbound(a.id)).items[0]!.delivered?.platformIds).toEqual(["id1", "id2", "id3"]);
  });

  it("edits a card in place, and sends the update as a new message when the original is gone", async () => {
    const a = await personOn("telegram", "A");
    const card = await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "card", text: "Approve?", buttons: [{ id: "b", label: "Yes" }], channel: "telegram" }, now);
    await drain();
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "card:ok", text: "Approved", editOf: card.id, channel: "telegram" }, now);
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "card:gone", text: "gone: expired", editOf: card.id, channel: "telegram" }, now);
    await drain();
    expect(telegram.edits).toEqual([{ ids: ["id1"], text: "Approved" }]);
    expect(telegram.sent.map((s) => s.text)).toEqual(["Approve?", "gone: expired"]);
  });

  it("sends nothing at all for text with nothing visible", async () => {
    const a = await personOn("telegram", "A");
    await store.outbox.enqueueOutbound({ personId: a.id, deliveryKey: "e", text: "", channel: "telegram" }, now);
    telegram.render = () => [];
    await drain();
    expect(telegram.sent).toEqual([]);
    expect((await store.outbox.listOutbound(a.id)).items[0]!.status).toBe("delivered");
  });
});
