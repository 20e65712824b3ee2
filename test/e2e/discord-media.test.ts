import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeDiscord, snowflake, type FakeUser } from "../fakes/discord-api.js";
import { httpError, imageUrls, startFakeOpenAI, text, type FakeOpenAIOptions, type FakeOpenAIServer, type FakeScriptItem } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sleep, until, userTexts } from "../helpers/e2e.js";

/**
 * Discord DMs with files, voice messages and stickers through the whole product: discord.js over
 * the fake gateway and REST, attachments served by the fake's CDN over loopback HTTP.
 */

const ada: FakeUser = { id: snowflake(), username: "ada", global_name: "Ada L." };
const GIF = Buffer.concat([Buffer.from("GIF89a"), Buffer.alloc(30, 9)]);
const OGG = Buffer.concat([Buffer.from("OggS"), Buffer.alloc(50, 5)]);
/** Discord API: MessageFlags.IS_VOICE_MESSAGE. */
const VOICE_MESSAGE = 1 << 13;

describe("Discord files, voice messages and stickers end to end", () => {
  let discord: FakeDiscord;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;

  beforeEach(async () => {
    discord = new FakeDiscord();
    await discord.start();
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
    await discord.close();
  });

  async function start(fallback: FakeScriptItem, options: FakeOpenAIOptions = {}, env: Record<string, string> = {}) {
    model = await startFakeOpenAI({ fallback, ...options });
    app = await startTestApp({ DISCORD_BOT_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl, OPENAI_BASE_URL: model.url, ALLOW_FROM: `discord:${ada.id}`, ...env });
    return { model, app };
  }
  const dm = () => discord.messagesIn(discord.dmChannelOf(ada)).map((m) => m.content);
  async function lastUser() {
    const identity = (await app!.store.persons.findIdentity("discord", ada.id))!;
    const all = await app!.store.conversation.listRecentMessages(identity.personId, 20);
    return { personId: identity.personId, message: all.filter((m) => m.role === "user").at(-1)! };
  }

  it("shows an image attachment to the model (alt text as its caption) and keeps it in the workspace", async () => {
    const { model } = await start((r) => text(imageUrls(r).length === 1 ? "A very happy cat." : "no image"));
    const file = discord.addAttachment(GIF, { filename: "cat.gif", contentType: "image/gif", description: "my cat" });
    discord.sendDm(ada, "look!", snowflake(), { attachments: [file] });
    await until(() => dm().includes("A very happy cat."), "the reply");
    expect(imageUrls(model.requests[0]!)).toEqual([`data:image/gif;base64,${GIF.toString("base64")}`]);
    const seen = userTexts(model.requests[0]!).at(-1)!;
    expect(seen).toMatch(/^\[photo \("cat\.gif", image\/gif, \d+ bytes\); described as "my cat"; saved in the person's workspace as inbox\/[\d-]+\/cat\.gif\]\nlook!$/);
    expect(seen).not.toContain("http"); // the CDN URL is not conversation
    expect(discord.downloads).toHaveLength(1);
    const { personId, message } = await lastUser();
    expect(readFileSync(join(app!.dataDir, "persons", personId, "workspace", message.attachments[0]!.path!))).toEqual(GIF);
  }, 30_000);

  it("transcribes a voice message (IS_VOICE_MESSAGE) and answers what was said", async () => {
    const { model } = await start((r) => text(userTexts(r).at(-1)?.includes('transcript: "buy oat milk"') ? "Added oat milk." : "?"), { transcribe: () => "buy oat milk" });
    const file = discord.addAttachment(OGG, { filename: "voice-message.ogg", contentType: "audio/ogg", durationSecs: 2.1 });
    discord.sendDm(ada, "", snowflake(), { attachments: [file], flags: VOICE_MESSAGE });
    await until(() => dm().includes("Added oat milk."), "the reply");
    expect(model.transcriptions.map((t) => t.bytes)).toEqual([OGG]);
    const { message } = await lastUser();
    expect(message.attachments[0]).toMatchObject({ kind: "voice", transcript: "buy oat milk", durationSeconds: 2.1 });
  }, 30_000);

  it("answers a sticker by what it is, with nothing downloaded", async () => {
    const { model } = await start((r) => text(userTexts(r).at(-1) === "[sticker: Wave]" ? "Hi there!" : "?"));
    discord.sendDm(ada, "", snowflake(), { sticker_items: [{ id: snowflake(), name: "Wave", format_type: 1 }] });
    await until(() => dm().includes("Hi there!"), "the reply");
    expect(discord.downloads).toEqual([]);
    expect(model.requests).toHaveLength(1);
  }, 30_000);

  it("a model without vision: the first image is refused by the endpoint and answered honestly; the next gets the honest line at once", async () => {
    const { model } = await start((r) => (imageUrls(r).length ? httpError(400, { message: "Invalid content type. image_url is only supported by certain models." }) : text("Tell me about it.")));
    discord.sendDm(ada, "what breed?", snowflake(), { attachments: [discord.addAttachment(GIF, { filename: "a.gif", contentType: "image/gif" })] });
    await until(() => dm().some((t) => t.includes("Tell me about it.")), "the first reply");
    expect(dm()[0]).toMatch(/^I can't see images with the model I'm using/);
    discord.sendDm(ada, "", snowflake(), { attachments: [discord.addAttachment(GIF, { filename: "b.gif", contentType: "image/gif" })] });
    await until(() => dm().some((t) => t.startsWith("I can't see images (")), "the honest line");
    await sleep(300);
    expect(model.requests).toHaveLength(2);
  }, 30_000);

  it("keeps the order of a DM: a file still downloading is recorded before the text sent after it", async () => {
    await start((r) => text(`seen ${userTexts(r).length}`));
    const release = discord.stallDownloads();
    discord.sendDm(ada, "", snowflake(), { attachments: [discord.addAttachment(Buffer.from("%PDF-1.7"), { filename: "contract.pdf", contentType: "application/pdf" })] });
    discord.sendDm(ada, "that's the contract");
    const history = async () => {
      const identity = await app!.store.persons.findIdentity("discord", ada.id);
      return identity ? (await app!.store.conversation.listRecentMessages(identity.personId, 10)).filter((m) => m.role === "user") : [];
    };
    await sleep(800);
    // The text waits behind the file's download: nothing is recorded yet.
    expect(await history()).toEqual([]);
    release();
    for (let i = 0; i < 100 && (await history()).length < 2; i++) await sleep(50);
    expect((await history()).map((m) => [m.attachments.length, m.text])).toEqual([
      [1, ""],
      [0, "that's the contract"],
    ]);
  }, 30_000);
});
