import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWhatsAppChannel } from "../../bots/whatsapp/channel.js";
import { FakeWhatsAppLibrary, type FakeWhatsAppClient } from "../fakes/whatsapp-client.js";
import { imageUrls, startFakeOpenAI, text, type FakeOpenAIOptions, type FakeOpenAIServer, type FakeScriptItem } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sleep, until, userTexts } from "../helpers/e2e.js";

/**
 * WhatsApp photos, voice notes, documents and stickers through the whole core: the WhatsApp channel
 * on the fake client behind its port (whatsapp-web.js cannot run here), media downloaded with
 * `downloadMedia` from the fake's loopback server, the scripted model over HTTP.
 */

const ADA = "15550001@c.us";
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.from("a receipt")]);
const OPUS = Buffer.concat([Buffer.from("OggS"), Buffer.alloc(30, 2)]);

describe("WhatsApp media end to end", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let library: FakeWhatsAppLibrary;

  beforeEach(() => {
    library = new FakeWhatsAppLibrary();
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
  });

  async function start(fallback: FakeScriptItem, options: FakeOpenAIOptions = {}, env: Record<string, string> = {}): Promise<FakeWhatsAppClient> {
    model = await startFakeOpenAI({ fallback, ...options });
    const dataDir = mkdtempSync(join(tmpdir(), "familiar-e2e-wa-media-"));
    app = await startTestApp(
      { DATA_DIR: dataDir, OPENAI_BASE_URL: model.url, ALLOW_FROM: "whatsapp:+15550001", ...env },
      { configure: (familiar) => familiar.addChannel(createWhatsAppChannel({ dataDir, chromiumPath: "/usr/bin/chromium", library, logger: familiar.deps.logger.child({ channel: "whatsapp" }) })) },
    );
    const client = library.last;
    client.pair();
    return client;
  }
  const textsTo = (client: FakeWhatsAppClient) => client.sent.filter((s) => s.chatId === ADA && typeof s.content === "string").map((s) => s.content as string);
  async function lastUser() {
    const identity = (await app!.store.persons.findIdentity("whatsapp", "+15550001"))!;
    const all = await app!.store.conversation.listRecentMessages(identity.personId, 20);
    return { personId: identity.personId, message: all.filter((m) => m.role === "user").at(-1)! };
  }

  it("shows a photo to the model with its caption and keeps it in the workspace", async () => {
    const client = await start((r) => text(imageUrls(r).length === 1 ? "That receipt totals €12." : "no image"));
    await client.receiveMedia(ADA, { type: "image", mimetype: "image/jpeg", bytes: JPEG, caption: "how much was it?" });
    await until(() => textsTo(client).includes("That receipt totals €12."), "the reply");
    expect(imageUrls(model!.requests[0]!)).toEqual([`data:image/jpeg;base64,${JPEG.toString("base64")}`]);
    expect(userTexts(model!.requests[0]!).at(-1)).toMatch(/^\[photo \(image\/jpeg, \d+ bytes\); saved in the person's workspace as inbox\/[\d-]+\/photo-\d{6}\.jpg\]\nhow much was it\?$/);
    const { personId, message } = await lastUser();
    expect(readFileSync(join(app!.dataDir, "persons", personId, "workspace", message.attachments[0]!.path!))).toEqual(JPEG);
  }, 30_000);

  it("transcribes a voice note (ptt)", async () => {
    const client = await start((r) => text(userTexts(r).at(-1)?.includes('transcript: "running late"') ? "No worries." : "?"), { transcribe: () => "running late" });
    await client.receiveMedia(ADA, { type: "ptt", mimetype: "audio/ogg; codecs=opus", bytes: OPUS, duration: 3 });
    await until(() => textsTo(client).includes("No worries."), "the reply");
    expect(model!.transcriptions).toHaveLength(1);
    expect(model!.transcriptions[0]!.bytes).toEqual(OPUS);
    const { message } = await lastUser();
    expect(message.attachments[0]).toMatchObject({ kind: "voice", mimeType: "audio/ogg", transcript: "running late", durationSeconds: 3 });
  }, 30_000);

  it("answers a sticker as a sticker (WhatsApp gives no emoji) and a document by its name", async () => {
    const client = await start((r) => {
      const last = userTexts(r).at(-1) ?? "";
      return text(last.startsWith("[sticker") ? "Cute sticker!" : last.includes('"lease.pdf"') ? "Lease saved." : "?");
    });
    await client.receiveMedia(ADA, { type: "sticker", mimetype: "image/webp", bytes: Buffer.from("RIFFwebp") });
    await until(() => textsTo(client).includes("Cute sticker!"), "the sticker reply");
    await client.receiveMedia(ADA, { type: "document", mimetype: "application/pdf", bytes: Buffer.from("%PDF lease"), filename: "lease.pdf" });
    await until(() => textsTo(client).includes("Lease saved."), "the document reply");
    expect(client.mediaDownloads).toHaveLength(1); // the document; a sticker is not downloaded
  }, 30_000);

  it("refuses media over the limit before downloading, and says so when the phone no longer has it", async () => {
    const client = await start(() => text("should not be asked"), {}, { MAX_ATTACHMENT_BYTES: "2048" });
    await client.receiveMedia(ADA, { type: "video", mimetype: "video/mp4", bytes: Buffer.alloc(10), rawSize: 50 * 1024 * 1024 });
    await until(() => textsTo(client).some((t) => t === "Your video is 50 MB; I take files up to 2 KB, so I didn't keep it."), "the size notice");
    expect(client.mediaDownloads).toEqual([]);

    await client.receiveMedia(ADA, { type: "image", mimetype: "image/jpeg", bytes: JPEG, expired: true });
    await until(() => textsTo(client).some((t) => t.startsWith("I couldn't download your photo from whatsapp")), "the honest line for expired media");
    await sleep(300);
    expect(model!.requests).toHaveLength(0);
  }, 30_000);
});
