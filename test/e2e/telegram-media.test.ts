import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  httpError,
  imageUrls,
  startFakeOpenAI,
  text,
  type FakeOpenAIOptions,
  type FakeOpenAIServer,
  type FakeResponse,
  type RecordedRequest,
} from "../fakes/openai-server.js";
import { chatLogKey } from "../../web/api/chat-log.js";
import { FakeTelegramApi, updates, type FakeMessage } from "../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { freePort, startChild } from "../helpers/child.js";
import { sleep, userTexts } from "../helpers/e2e.js";

/**
 * Photos, voice notes, documents and stickers through the whole product on Telegram: the fake Bot
 * API serves the files over loopback HTTP (getFile + `/file/bot<token>/<path>`), the real grammY
 * client polls it, and the scripted model (with or without vision and transcription) answers.
 */

const ANA = 42;
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from("a small photo of a red bicycle")]);
const THUMB = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
const OGG = Buffer.concat([Buffer.from("OggS"), Buffer.alloc(64, 7)]);
/** Refusal of api.openai.com for a model without vision. */
const NO_VISION = "Invalid content type. image_url is only supported by certain models.";

describe("Telegram photos, voice notes, documents and stickers end to end", () => {
  let fake: FakeTelegramApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;

  afterEach(async () => {
    await app?.close();
    app = null;
    await fake?.close();
    fake = null;
    await model?.close();
    model = null;
  });

  async function start(fallback: (r: RecordedRequest) => FakeResponse | Promise<FakeResponse>, env: Record<string, string> = {}, modelOptions: FakeOpenAIOptions = {}) {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback, ...modelOptions });
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}`, ...env });
    return { fake, model, app };
  }

  const inChat = (): FakeMessage[] => fake!.messages.filter((m) => m.chatId === String(ANA));
  async function messageIn(match: (m: FakeMessage) => boolean, what: string): Promise<FakeMessage> {
    await fake!.waitFor(() => inChat().some(match), 15_000, `${what}; have ${JSON.stringify(inChat().map((m) => m.text))}`);
    return inChat().find(match)!;
  }
  async function lastUserMessage() {
    const identity = (await app!.store.persons.findIdentity("telegram", String(ANA)))!;
    const messages = await app!.store.conversation.listRecentMessages(identity.personId, 20);
    return { personId: identity.personId, message: messages.filter((m) => m.role === "user").at(-1)! };
  }
  const workspaceFile = (personId: string, path: string) => readFileSync(join(app!.dataDir, "persons", personId, "workspace", path));

  it("shows a photo to a model that can see: the largest size as an image part, the caption as text, the file kept in the workspace", async () => {
    const { fake, model } = await start((r) => text(imageUrls(r).length ? "A red bicycle." : "no image?"));
    const small = fake.addFile(THUMB, "thumb.jpg");
    const large = fake.addFile(JPEG, "photo.jpg");
    fake.push(updates.photo(ANA, small, large, "what is this?"));

    await messageIn((m) => m.text === "A red bicycle.", "the reply about the photo");
    expect(model.requests).toHaveLength(1);
    expect(imageUrls(model.requests[0]!)).toEqual([`data:image/jpeg;base64,${JPEG.toString("base64")}`]);
    const seen = userTexts(model.requests[0]!).at(-1)!;
    expect(seen).toContain("what is this?");
    expect(seen).toMatch(/photo \(image\/jpeg, .*saved in the person's workspace as inbox\/\d{4}-\d{2}-\d{2}\/photo-\d{6}\.jpg/);
    expect(fake.downloads).toEqual([large.file_path]); // only the largest size, through getFile + the file URL

    const { personId, message } = await lastUserMessage();
    expect(message.text).toBe("what is this?");
    expect(message.attachments).toEqual([
      expect.objectContaining({ kind: "image", mimeType: "image/jpeg", size: JPEG.length, note: null, path: expect.stringMatching(/^inbox\//) }),
    ]);
    expect(workspaceFile(personId, message.attachments[0]!.path!)).toEqual(JPEG);
    // The web chat's log shows what came in: the photo, then its caption.
    const logged = await app!.store.localMailbox.listLocalMessages(chatLogKey(personId), 0, 10);
    expect(logged.find((m) => m.role === "user")?.text).toBe("[photo]\nwhat is this?");
  }, 30_000);

  it("learns from the endpoint's first refusal of images: that reply says so, and later photos get an honest line without a model call", async () => {
    const { fake, model } = await start((r) => (imageUrls(r).length ? httpError(400, { message: NO_VISION }) : text("Nice colours in the description.")));
    const photo1 = fake.addFile(JPEG, "a.jpg");
    fake.push(updates.photo(ANA, photo1, photo1, "look at this"));
    const first = await messageIn((m) => m.text.includes("Nice colours"), "the reply to the first photo");
    expect(first.text).toMatch(/^I can't see images with the model I'm using/);
    // Asked with the image, refused, asked again without it.
    expect(model.requests.map((r) => imageUrls(r).length)).toEqual([1, 0]);
    expect(JSON.stringify(model.requests[1]!.messages)).toContain("[image not shown: the model in use does not accept images]");

    const photo2 = fake.addFile(JPEG, "b.jpg");
    fake.push(updates.photo(ANA, photo2, photo2));
    const notice = await messageIn((m) => m.text.startsWith("I can't see images (") , "the honest line for the second photo");
    expect(notice.text).toMatch(/^I can't see images \(the model \S+ does not accept images\), so I only saved your photo as inbox\/.+\.jpg\.$/);
    await sleep(400);
    expect(model.requests).toHaveLength(2); // no model call for a photo it cannot see and no words
    const { personId, message } = await lastUserMessage();
    expect(message.attachments[0]).toMatchObject({ kind: "image", note: expect.stringMatching(/^not shown to you/) });
    expect(workspaceFile(personId, message.attachments[0]!.path!)).toEqual(JPEG);
    // The honest line is Familiar's answer in the conversation: the photo does not wait for a turn.
    const history = await app!.store.conversation.listRecentMessages(personId, 10);
    expect(history.at(-1)).toMatchObject({ role: "assistant", text: notice.text });
  }, 30_000);

  it("OPENAI_VISION=off: a photo with a caption gets the honest line and a reply to the words, and the model never receives an image", async () => {
    const { fake, model } = await start(() => text("Sounds like a fine bike."), { OPENAI_VISION: "off" });
    const photo = fake.addFile(JPEG, "bike.jpg");
    fake.push(updates.photo(ANA, photo, photo, "my new bike!"));
    await messageIn((m) => m.text.startsWith("I can't see images (OPENAI_VISION is off)"), "the honest line");
    await messageIn((m) => m.text === "Sounds like a fine bike.", "the reply to the caption");
    expect(model.requests.every((r) => imageUrls(r).length === 0)).toBe(true);
    expect(userTexts(model.requests[0]!).at(-1)).toMatch(/not shown to you: OPENAI_VISION is off[\s\S]*my new bike!/);
    const order = inChat().map((m) => m.text);
    expect(order.findIndex((t) => t.startsWith("I can't see images"))).toBeLessThan(order.indexOf("Sounds like a fine bike."));
  }, 30_000);

  it("transcribes a voice note through /audio/transcriptions and answers what it says", async () => {
    const { fake, model } = await start((r) => text(`You said: ${/transcript: "([^"]*)"/.exec(userTexts(r).at(-1) ?? "")?.[1] ?? "?"}`), {}, { transcribe: () => "remind me to call mum at six" });
    const voice = fake.addFile(OGG, "voice.oga");
    fake.push(updates.voice(ANA, voice, 4));
    await messageIn((m) => m.text === "You said: remind me to call mum at six", "the reply to the voice note");
    expect(model.transcriptions).toHaveLength(1);
    expect(model.transcriptions[0]).toMatchObject({ model: "whisper-1", bytes: OGG });
    expect(model.transcriptions[0]!.fileName).toMatch(/\.ogg$/);
    const { personId, message } = await lastUserMessage();
    expect(message.attachments[0]).toMatchObject({ kind: "voice", transcript: "remind me to call mum at six", durationSeconds: 4, mimeType: "audio/ogg" });
    expect(workspaceFile(personId, message.attachments[0]!.path!)).toEqual(OGG);
  }, 30_000);

  it("answers a voice note honestly when the endpoint has no transcription, keeps the file, and calls no model", async () => {
    const { fake, model } = await start(() => text("should not be asked"));
    const voice = fake.addFile(OGG, "voice.oga");
    fake.push(updates.voice(ANA, voice));
    const notice = await messageIn((m) => m.text.startsWith("I can't listen to voice notes"), "the honest line");
    expect(notice.text).toMatch(/^I can't listen to voice notes \(the model service has no speech-to-text\), so I only saved yours as inbox\/\S+\.$/);
    await sleep(400);
    expect(model.requests).toHaveLength(0);
    const { personId, message } = await lastUserMessage();
    expect(workspaceFile(personId, message.attachments[0]!.path!)).toEqual(OGG);
    // The next voice note is answered the same way without asking the endpoint again.
    fake.push(updates.voice(ANA, fake.addFile(OGG, "v2.oga")));
    await fake.waitFor(() => inChat().filter((m) => m.text.startsWith("I can't listen")).length === 2, 10_000, "the second honest line");
  }, 30_000);

  it("saves a document to the workspace under its own name and tells the model where it is", async () => {
    const { fake, model } = await start(() => text("Got your report."));
    const pdf = Buffer.from("%PDF-1.4 quarterly numbers");
    fake.push(updates.document(ANA, fake.addFile(pdf, "q3.pdf"), "Q3 report.pdf", "application/pdf", "for Monday"));
    await messageIn((m) => m.text === "Got your report.", "the reply");
    const seen = userTexts(model.requests[0]!).at(-1)!;
    expect(seen).toMatch(/\[file \("Q3 report\.pdf", application\/pdf, \d+ bytes\); saved in the person's workspace as inbox\/\d{4}-\d{2}-\d{2}\/Q3 report\.pdf\]\nfor Monday/);
    const { personId, message } = await lastUserMessage();
    expect(message.attachments[0]).toMatchObject({ kind: "document", fileName: "Q3 report.pdf", mimeType: "application/pdf", size: pdf.length });
    expect(workspaceFile(personId, message.attachments[0]!.path!)).toEqual(pdf);
  }, 30_000);

  it("answers a sticker as the emoji it stands for", async () => {
    const { fake, model } = await start((r) => text(userTexts(r).at(-1)?.includes("[sticker: 😂]") ? "Glad that made you laugh!" : "?"));
    fake.push(updates.sticker(ANA, "😂"));
    await messageIn((m) => m.text === "Glad that made you laugh!", "the reply to the sticker");
    expect(fake.downloads).toEqual([]); // a sticker is its emoji; nothing is downloaded
    expect(model.requests).toHaveLength(1);
  }, 30_000);

  it("refuses a file over MAX_ATTACHMENT_BYTES with an honest line, downloads nothing, and still answers the caption", async () => {
    const { fake, model } = await start(() => text("Tell me what's in it instead."), { MAX_ATTACHMENT_BYTES: "1024" });
    fake.push(updates.document(ANA, fake.addFile(Buffer.alloc(3000, 1), "big.bin"), "big.zip", "application/zip", "here are the files"));
    await messageIn((m) => m.text === "Your file is 3 KB; I take files up to 1 KB, so I didn't keep it.", "the size notice");
    await messageIn((m) => m.text === "Tell me what's in it instead.", "the reply to the caption");
    expect(fake.downloads).toEqual([]);
    expect(fake.callsOf("getFile")).toHaveLength(0); // Telegram announced the size: refused before asking for the file
    expect(userTexts(model.requests[0]!).at(-1)).toMatch(/not kept: 3 KB is over the 1 KB limit[\s\S]*here are the files/);
  }, 30_000);
});

describe("a photo whose download is cut by a crash", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  it("is neither lost nor doubled: after SIGKILL mid-download and a restart, one message, one file, one reply", async () => {
    const fake = await FakeTelegramApi.start();
    cleanups.push(() => fake.close());
    const model = await startFakeOpenAI({ fallback: (r) => text(imageUrls(r).length === 1 ? "A red bicycle." : "no image") });
    cleanups.push(() => model.close());
    const dataDir = mkdtempSync(join(tmpdir(), "familiar-media-kill-"));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env = { DATA_DIR: dataDir, PORT: String(await freePort()), TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}` };

    let child = await startChild(env);
    cleanups.push(() => child.kill());
    const release = fake.stallDownloads();
    const photo = fake.addFile(JPEG, "photo.jpg");
    const update = fake.push(updates.photo(ANA, photo, photo, "what is this?"));
    await fake.waitFor(() => fake.fileRequests === 1, 20_000, "the child to start downloading the photo");
    await child.kill();
    // Fetched and held in the journal (so confirmed to Telegram), not recorded: the restart hands it over again.
    {
      const { openSqliteStore } = await import("../../core/storage/sqlite/index.js");
      const store = openSqliteStore({ path: join(dataDir, "familiar.db") });
      expect((await store.inbound.listHeldUpdates("telegram")).map((h) => h.updateId)).toEqual([String(update.update_id)]);
      await store.close();
    }
    release();

    child = await startChild(env);
    await fake.waitFor(() => fake.messages.some((m) => m.text === "A red bicycle."), 20_000, "the reply after the restart");
    await sleep(1_000);
    expect(fake.messages.filter((m) => m.text === "A red bicycle.")).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
    await child.stop();

    const { openSqliteStore } = await import("../../core/storage/sqlite/index.js");
    const store = openSqliteStore({ path: join(dataDir, "familiar.db") });
    try {
      const identity = (await store.persons.findIdentity("telegram", String(ANA)))!;
      const users = (await store.conversation.listRecentMessages(identity.personId, 10)).filter((m) => m.role === "user");
      expect(users).toHaveLength(1);
      const inbox = join(dataDir, "persons", identity.personId, "workspace", users[0]!.attachments[0]!.path!);
      expect(readFileSync(inbox)).toEqual(JPEG);
      expect(readdirSync(dirname(inbox)).filter((f) => !f.endsWith(".tmp"))).toEqual([basename(inbox)]);
    } finally {
      await store.close();
    }
  }, 90_000);
});
