import { send } from "../helpers/send.js";
import { waitFor } from "../helpers/wait.js";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { Poll } from "whatsapp-web.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  createWhatsAppChannel,
  type WhatsAppChannel,
  type WhatsAppChannelOptions,
} from "../../bots/whatsapp/channel.js";
import { renderWhatsAppMessages } from "../../bots/whatsapp/render.js";
import { realWhatsAppLibrary } from "../../bots/whatsapp/port.js";
import { DeliveryError, type InboundEvent, type InboundSink } from "../../core/channels/port.js";
import { createLogger } from "../../core/log/logger.js";
import { FakeWhatsAppLibrary, OWN_ID } from "../fakes/whatsapp-client.js";

const ADA = "15550001@c.us";
const BOB = "15550002@c.us";
const GROUP = "120363000000000001@g.us";
const buttons = [
  { id: "apr:1:once", label: "Approve once" },
  { id: "apr:1:deny", label: "Deny" },
];

const dirs: string[] = [];
const channels: WhatsAppChannel[] = [];
afterEach(async () => {
  await Promise.all(channels.splice(0).map((c) => c.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "familiar-wa-"));
  dirs.push(dir);
  return dir;
}

const tick = (ms = 10): Promise<void> => new Promise((r) => setTimeout(r, ms));

function setup(overrides: Partial<WhatsAppChannelOptions> & { library?: FakeWhatsAppLibrary } = {}) {
  const lines: string[] = [];
  const { logger } = createLogger({ level: "info", destination: new Writable({ write: (c, _e, cb) => void (lines.push(String(c)), cb()) }) });
  const library = overrides.library ?? new FakeWhatsAppLibrary();
  const qrs: string[] = [];
  const invalid: string[] = [];
  const events: InboundEvent[] = [];
  const sink: InboundSink = async (event) => {
    events.push(event);
    return { status: "accepted" };
  };
  const channel = createWhatsAppChannel({
    dataDir: overrides.dataDir ?? tempDir(),
    chromiumPath: "/usr/bin/chromium",
    logger,
    library,
    onQr: (qr) => qrs.push(qr),
    onSessionInvalid: (reason) => invalid.push(reason),
    backoff: { initialMs: 10, maxMs: 40 },
    ...overrides,
  });
  channels.push(channel);
  return { channel, library, qrs, invalid, events, sink, lines };
}

async function readyChannel(overrides: Parameters<typeof setup>[0] = {}) {
  const s = setup(overrides);
  await s.channel.start(s.sink);
  s.library.last.pair();
  return s;
}

describe("WhatsApp channel: attachments", () => {
  it("sends images as photos and other files as documents (MessageMedia), after the text", async () => {
    const s = await readyChannel();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 7]);
    const receipt = await send(s.channel, 
      { accountId: "15550001111@c.us", address: "15550001111@c.us" },
      {
        text: "Here you go.",
        buttons: [],
        attachments: [
          { id: "art_1" as never, name: "shot.png", mimeType: "image/png", bytes: png },
          { id: "art_2" as never, name: "trip.pdf", mimeType: "application/pdf", bytes: Buffer.from("%PDF-1.4") },
        ],
      },
    );
    const sent = s.library.last.sent;
    expect(sent.map((m) => (typeof m.content === "string" ? m.content : "media"))).toEqual(["Here you go.", "media", "media"]);
    const photo = sent[1]!;
    expect(photo.content).toMatchObject({ mimetype: "image/png", filename: "shot.png", data: png.toString("base64") });
    expect(photo.options).toMatchObject({ sendMediaAsDocument: false });
    expect(sent[2]!.content).toMatchObject({ mimetype: "application/pdf", filename: "trip.pdf" });
    expect(sent[2]!.options).toMatchObject({ sendMediaAsDocument: true });
    expect(receipt.platformIds).toEqual(sent.map((m) => m.id));
  });
});

describe("WhatsApp channel through the client port", () => {
  it("W1: after pairing and a hard kill, a restart reuses the session path and shows no QR", async () => {
    const dataDir = tempDir();
    const first = setup({ dataDir });
    await first.channel.start(first.sink);
    first.library.last.emit("qr", "2@pairing-qr");
    expect(first.channel.currentQr()).toBe("2@pairing-qr");
    expect(first.qrs).toEqual(["2@pairing-qr"]);
    expect(first.lines.join("")).toContain("scan this QR");
    first.library.last.pair();
    expect(first.channel.currentQr()).toBeNull();
    expect(first.channel.state()).toBe("ready");
    // Hard kill: the first process vanishes without stop(); a new process starts on the same DATA_DIR.
    const second = setup({ dataDir });
    await second.channel.start(second.sink);
    const client = second.library.last;
    expect(client.settings.dataPath).toBe(first.library.last.settings.dataPath);
    expect(client.settings.dataPath).toBe(join(dataDir, "whatsapp-session"));
    expect(client.initialized).toBe(true);
    client.pair(); // LocalAuth restored the session: authenticated + ready, no qr event
    expect(second.channel.state()).toBe("ready");
    expect(second.channel.currentQr()).toBeNull();
    expect(second.qrs).toEqual([]);
    expect(second.invalid).toEqual([]);
    client.receive(ADA, "still there?");
    await waitFor(() => second.events.length > 0, "the message to reach the sink");
    expect(second.events).toMatchObject([{ kind: "message", text: "still there?", accountId: "+15550001", address: ADA }]);
  });

  it("W1: a QR although a session existed, then auth_failure, alerts once and never restarts", async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "whatsapp-session", "session"), { recursive: true });
    const s = setup({ dataDir });
    await s.channel.start(s.sink);
    s.library.last.emit("qr", "2@new-qr");
    s.library.last.emit("auth_failure", "session expired");
    s.library.last.emit("qr", "2@newer-qr");
    await waitFor(() => s.invalid.length > 0 && s.channel.currentQr() === "2@newer-qr", "the alert and the newest QR");
    expect(s.invalid).toHaveLength(1);
    expect(s.invalid[0]).toContain("QR");
    expect(s.library.clients).toHaveLength(1);
    expect(s.channel.currentQr()).toBe("2@newer-qr"); // the owner can re-pair from the local page
    await expect(send(s.channel, { accountId: "+15550001", address: ADA }, { text: "hi", buttons: [] })).rejects.toBeInstanceOf(DeliveryError);
  });

  it("restarts with bounded backoff, then gives up with one alert; handlers never throw", async () => {
    const library = new FakeWhatsAppLibrary((c) => void (c.initializeError = new Error("Failed to launch the browser process")));
    const s = setup({ library, maxRestarts: 3 });
    await s.channel.start(s.sink);
    await waitFor(() => s.channel.state() === "gave_up", "the channel to give up");
    expect(library.clients).toHaveLength(4); // first launch + 3 restarts
    expect(s.channel.state()).toBe("gave_up");
    expect(s.invalid).toHaveLength(1);
    expect(s.invalid[0]).toContain("3 restarts");
    // A fixed wait on purpose: it asserts that NO further restart comes after giving up.
    await tick(100);
    expect(library.clients).toHaveLength(4);

    const ok = await readyChannel();
    ok.library.last.emit("disconnected", "CONFLICT");
    await waitFor(() => ok.library.clients.length === 2, "the restart after the disconnect");
    expect(ok.library.clients).toHaveLength(2);
    expect(ok.library.clients[0]!.destroyed).toBe(true);
    ok.library.last.pair();
    expect(ok.channel.state()).toBe("ready");
    const failing = setup({});
    await failing.channel.start(async () => {
      throw new Error("store down");
    });
    failing.library.last.pair();
    expect(() => failing.library.last.receive(ADA, "hello")).not.toThrow();
    await waitFor(() => failing.lines.join("").includes("inbound event not recorded"), "the logged failure");
    expect(failing.lines.join("")).toContain("inbound event not recorded");
  });

  it("a card is text with the numbered fallback plus a native poll; votes count only newly selected options", async () => {
    const { channel, library, events } = await readyChannel();
    const client = library.last;
    const receipt = await send(channel, { accountId: "+15550001", address: ADA }, { text: "**Send** the invoice to _Acme_?", buttons });
    const [text, poll] = client.sent;
    expect(text!.content).toBe("*Send* the invoice to _Acme_?\n\nReply 1 for Approve once, 2 for Deny.");
    expect((poll!.content as Poll).pollName).toBe("Send the invoice to Acme?");
    expect((poll!.content as Poll).pollOptions.map((o) => o.name)).toEqual(["Approve once", "Deny"]);
    expect(receipt.platformIds).toEqual([text!.id, poll!.id]);

    client.vote(poll!.id, ADA, [0], 1000); // select Approve once
    client.vote(poll!.id, ADA, [], 2000); // un-select: nothing
    client.vote(poll!.id, ADA, [1], 3000); // select Deny
    client.vote(poll!.id, ADA, [1], 3000); // the same state again: nothing
    client.vote(poll!.id, OWN_ID, [0], 4000); // our own account: ignored
    client.vote(poll!.id, BOB, [0], 5000); // another voter: attributed to them (the core says "not yours")
    await waitFor(() => events.filter((e) => e.kind === "press").length >= 3, "the three presses");
    const presses = events.filter((e) => e.kind === "press");
    expect(presses.map((p) => p.kind === "press" && [p.buttonId, p.accountId, p.messageRef, p.address])).toEqual([
      ["apr:1:once", "+15550001", poll!.id, ADA],
      ["apr:1:deny", "+15550001", poll!.id, ADA],
      ["apr:1:once", "+15550002", poll!.id, ADA],
    ]);
    expect(new Set(presses.map((p) => p.updateId)).size).toBe(3);
  });

  it("numbered replies press the latest open card's button; after the card's edit they are plain messages", async () => {
    const { channel, library, events } = await readyChannel();
    const client = library.last;
    const target = { accountId: "+15550001", address: ADA };
    const card = await send(channel, target, { text: "Book it?", buttons });
    const pollId = card.platformIds[1]!;
    const replyId = client.receive(ADA, "2");
    client.receive(ADA, "7");
    await waitFor(() => events.length >= 2, "the press and the message");
    expect(events[0]).toMatchObject({ kind: "press", buttonId: "apr:1:deny", messageRef: pollId, updateId: replyId });
    expect(events[1]).toMatchObject({ kind: "message", text: "7" });

    await channel.edit(target, card.platformIds, { text: "Book it? — *Denied*", buttons: [] });
    expect(client.edits).toEqual([{ id: card.platformIds[0], content: "Book it? — _Denied_", options: { linkPreview: false } }]);
    client.receive(ADA, "1");
    await waitFor(() => events.length >= 3, "the plain message");
    expect(events[2]).toMatchObject({ kind: "message", text: "1" });

    client.editable = false; // older than WhatsApp's 15-minute edit window: the outcome comes as a reply
    await channel.edit(target, card.platformIds, { text: "Expired", buttons: [] });
    expect(client.sent.at(-1)).toMatchObject({ chatId: ADA, content: "Expired", options: { quotedMessageId: pollId } });
  });

  it("maps @lid senders to phone numbers, reads groups only when listed and mentioned, types and splits", async () => {
    const { channel, library, events } = await readyChannel({ groups: [GROUP] });
    const client = library.last;
    client.lids.set("987654321@lid", "15550001@c.us");
    client.receive("987654321@lid", "hi from a lid");
    client.receive("120363000000000002@g.us", "@15550009999 not listed", { author: BOB, mentionedIds: [OWN_ID] });
    client.receive(GROUP, "no mention", { author: BOB });
    client.receive(GROUP, "@15550009999 what's next?", { author: BOB, mentionedIds: [OWN_ID] });
    await waitFor(() => events.length >= 2, "the two messages read");
    expect(events).toMatchObject([
      { kind: "message", accountId: "+15550001", address: "987654321@lid", text: "hi from a lid" },
      { kind: "message", accountId: "+15550002", address: BOB, text: "what's next?" },
    ]);

    await channel.typing({ accountId: "+15550001", address: ADA });
    expect(client.typing).toEqual([ADA]);
    const long = Array.from({ length: 300 }, (_, i) => `Item ${i} is **important** enough.`).join("\n\n");
    const receipt = await send(channel, { accountId: "+15550001", address: ADA }, { text: long, buttons: [] });
    const parts = client.sent.filter((s) => receipt.platformIds.includes(s.id)).map((s) => s.content as string);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.every((p) => p.length <= 4000 && (p.match(/\*/g) ?? []).length % 2 === 0)).toBe(true);
    expect(parts.join("\n\n")).toBe(renderWhatsAppMessages(long, 100_000)[0]);

    client.sendError = new Error("Evaluation failed: Error: invalid wid");
    await expect(send(channel, { accountId: "x", address: "bogus" }, { text: "hi", buttons: [] })).rejects.toMatchObject({ outcome: "recipient_gone" });
    client.sendError = new Error("Protocol error (Runtime.callFunctionOn): Target closed");
    await expect(send(channel, { accountId: "x", address: ADA }, { text: "hi", buttons: [] })).rejects.toMatchObject({ outcome: "transient" });
    client.sendError = new Error("Evaluation failed: Error: No LID for user");
    await expect(send(channel, { accountId: "x", address: ADA }, { text: "hi", buttons: [] })).rejects.toMatchObject({ outcome: "transient" });
  });
});

describe("the real whatsapp-web.js behind the port", () => {
  it("loads from ESM and builds a LocalAuth client on DATA_DIR/whatsapp-session without launching Chromium", () => {
    const library = realWhatsAppLibrary();
    const dataPath = join(tempDir(), "whatsapp-session");
    const client = library.createClient({ dataPath, chromiumPath: "/usr/bin/chromium" }) as unknown as {
      options: { authStrategy: { dataPath: string }; puppeteer: { executablePath: string; args: string[] } };
    };
    expect(client.options.authStrategy.dataPath).toBe(dataPath);
    expect(client.options.puppeteer.executablePath).toBe("/usr/bin/chromium");
    expect(client.options.puppeteer.args).toContain("--no-sandbox");
    expect(library.createPoll("Go?", ["Yes", "No"]).pollOptions.map((o) => o.name)).toEqual(["Yes", "No"]);
  });
});

describe("WhatsApp formatting", () => {
  it("uses WhatsApp's markers and adapts headings, links, code and tables", () => {
    const [out] = renderWhatsAppMessages("# Plan\n\n**bold** _it_ ~~gone~~ `x()` [docs](https://d.io)\n\n```\nline\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |");
    expect(out).toBe("*Plan*\n\n*bold* _it_ ~gone~ ```x()``` docs (https://d.io)\n\n```line```\n\n```a | b\n1 | 2```");
  });
});
