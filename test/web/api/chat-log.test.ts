import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ChatLog, recordingAdapter } from "../../../web/api/chat-log.js";
import type {
  ChannelAdapter,
  ChannelTarget,
  InboundEvent,
  InboundSink,
  OutboundContent,
  OutboundPart,
} from "../../../core/channels/port.js";
import { filePart } from "../../../core/channels/port.js";
import { systemClock } from "../../../core/clock.js";
import { asId } from "../../../core/ids.js";
import { chatItemJson } from "../../../web/api/chat-api.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";

/** A messenger adapter that records what it was asked to do; `deliver` plays an inbound update. */
function fakeMessenger() {
  let sink: InboundSink | null = null;
  const sent: { target: ChannelTarget; part: OutboundPart }[] = [];
  const adapter: ChannelAdapter = {
    channel: "telegram",
    resend: "at-most-once",
    start: async (s) => void (sink = s),
    stop: async () => undefined,
    // Long messages come in two parts, as a platform with a small limit would split them.
    render: (content) => (content.text.length > 20 ? [content.text.slice(0, 20), content.text.slice(20)] : [content.text]).map((plain, i, all) => ({ body: plain, plain, buttons: i === all.length - 1 && content.buttons.length > 0 })),
    sendPart: async (target, part) => {
      sent.push({ target, part });
      return `tg-${sent.length}`;
    },
    edit: async () => undefined,
  };
  return { adapter, sent, deliver: (event: InboundEvent) => sink!(event) };
}

/** What the outbox does: render once, send each part with key `<deliveryKey>#<slot>`. */
async function sendThrough(adapter: ChannelAdapter, target: ChannelTarget, content: OutboundContent): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, part] of adapter.render(content, { style: "rich", scale: 1 }).entries()) ids.push(await adapter.sendPart(target, part, `${content.deliveryKey}#${i}`));
  return ids;
}

describe("ChatLog and recordingAdapter", () => {
  let store: SqliteStore;
  afterEach(async () => store?.close());

  it("logs both sides of a Telegram conversation and card edits, once each, for the linked person only", async () => {
    store = openSqliteStore({ path: ":memory:" });
    const person = await store.persons.createPerson({ displayName: "Ana" });
    await store.persons.addIdentity({ personId: person.id, channel: "telegram", accountId: "42" });
    const log = new ChatLog(store, systemClock, pino({ level: "silent" }));
    const tg = fakeMessenger();
    const recorded = recordingAdapter(tg.adapter, log);
    expect(recorded.edit).toBeDefined();
    expect(recorded.typing).toBeUndefined();
    const seen: InboundEvent[] = [];
    await recorded.start(async (event) => (seen.push(event), { status: "accepted" }));

    const hello: InboundEvent = { kind: "message", channel: "telegram", updateId: "u1", accountId: "42", address: "42", text: "hello <from> telegram", at: new Date() };
    await tg.deliver(hello);
    await tg.deliver(hello); // a redelivery is logged once
    const ana = { accountId: "42", address: "42" };
    await sendThrough(recorded, ana, { text: "**Approve** fetching the page?", buttons: [{ id: "b1", label: "Approve once" }], deliveryKey: "approval:1" });
    expect(tg.sent).toHaveLength(2);
    await recorded.edit!(ana, ["tg-1", "tg-2"], { text: "Approved.", buttons: [] });
    // A stranger's message and an answer to them are not anyone's log.
    await tg.deliver({ ...hello, updateId: "u2", accountId: "99", address: "99" });
    await sendThrough(recorded, { accountId: "99", address: "99" }, { text: "Your pairing code…", buttons: [], deliveryKey: "pair:99" });

    expect(seen).toHaveLength(3);
    const items = await log.page(person.id, undefined, 10);
    expect(items.map((m) => [m.role, m.channel, m.text, m.buttons.length])).toEqual([
      ["user", "telegram", "hello <from> telegram", 0],
      ["assistant", "telegram", "Approved.", 0],
    ]);
    // Live readers see the edit after their cursor.
    expect((await log.after(person.id, items[0]!.seq, 10)).map((m) => m.text)).toEqual(["Approved."]);
    expect(await log.get(person.id, items[1]!.id)).not.toBeNull();
    const other = await store.persons.createPerson({ displayName: "Bo" });
    expect(await log.get(other.id, items[1]!.id)).toBeNull();
  });

  it("wakes a long-poll when something is logged", async () => {
    store = openSqliteStore({ path: ":memory:" });
    const person = await store.persons.createPerson({ displayName: "Ana" });
    await store.persons.addIdentity({ personId: person.id, channel: "telegram", accountId: "42" });
    const log = new ChatLog(store, systemClock, pino({ level: "silent" }));
    const wait = log.waitForActivity(person.id);
    let woke = false;
    const noticed = wait.activity.then(() => (woke = true));
    await log.recordOutbound(person.id, "telegram", "tg-1", { text: "hi", buttons: [] });
    await noticed;
    expect(woke).toBe(true);
    wait.cancel();
  });

  it("logs a file Familiar sent on a messenger as its own entry, which the web chat shows with a link to it", async () => {
    store = openSqliteStore({ path: ":memory:" });
    const person = await store.persons.createPerson({ displayName: "Ana" });
    await store.persons.addIdentity({ personId: person.id, channel: "telegram", accountId: "42" });
    const log = new ChatLog(store, systemClock, pino({ level: "silent" }));
    const tg = fakeMessenger();
    const recorded = recordingAdapter(tg.adapter, log);
    const ana = { accountId: "42", address: "42" };
    await sendThrough(recorded, ana, { text: "Here is the page.", buttons: [], deliveryKey: "send:1" });
    const file = { id: asId("artifact", "art_0123456789abcdef0123456789ab"), name: "page.png", mimeType: "image/png", bytes: Buffer.from("PNGDATA") };
    await recorded.sendPart(ana, filePart(file), "send:1#1");
    const items = await log.page(person.id, undefined, 10);
    expect(items.map((m) => [m.role, m.text, m.attachments])).toEqual([
      ["assistant", "Here is the page.", []],
      ["assistant", "", [{ id: file.id, name: "page.png", mimeType: "image/png", size: 7 }]],
    ]);
    expect(chatItemJson(items[1]!).attachments).toEqual([{ id: file.id, name: "page.png", mimeType: "image/png", size: 7, url: `/api/web/chat/files/${items[1]!.id}/${file.id}`, page: `/a/${file.id}` }]);
    expect(chatItemJson(items[0]!)).not.toHaveProperty("attachments");
  });
});
