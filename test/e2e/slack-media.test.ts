import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FakeSlackApi, type FakeSlackMessage } from "../fakes/slack-api.js";
import { postEvent } from "../fakes/slack-events.js";
import { imageUrls, startFakeOpenAI, text, type FakeOpenAIOptions, type FakeOpenAIServer, type FakeScriptItem } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sleep, until, userTexts } from "../helpers/e2e.js";

/**
 * Files shared in Slack DMs through the whole product: `file_share` events posted (signed) to the
 * app's `/slack/events`, the files served by the fake Slack over loopback HTTP only to the bot
 * token, the real Bolt / WebClient, and the scripted model.
 */

const BOT_TOKEN = "xoxb-1111-2222-mediabotsecret";
const SIGNING_SECRET = "9f3c1a7e5b2d8c4f6a0e1b3d5f7a9c2e";
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from("a chart of Q3 sales")]);
const AUDIO = Buffer.concat([Buffer.from("webm-clip"), Buffer.alloc(40, 3)]);

let tsCounter = 0;
const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++tsCounter).padStart(6, "0")}`;

describe("Slack files end to end", () => {
  let slack: FakeSlackApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;

  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
    await slack?.close();
    slack = null;
  });

  async function start(fallback: FakeScriptItem, options: FakeOpenAIOptions = {}) {
    slack = new FakeSlackApi({ botToken: BOT_TOKEN });
    await slack.listen();
    model = await startFakeOpenAI({ fallback, ...options });
    app = await startTestApp({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.apiUrl, OPENAI_BASE_URL: model.url, ALLOW_FROM: "slack:UADA" });
    const share = async (text: string, files: Record<string, unknown>[]) => {
      const ts = nextTs();
      const event = { type: "message", subtype: "file_share", channel: "DADA", channel_type: "im", user: "UADA", text, ts, event_ts: ts, files };
      const res = await postEvent(`${app!.url}/slack/events`, event, `Ev${ts}`, { signingSecret: SIGNING_SECRET });
      expect(res.status).toBe(200);
    };
    return { slack, model, app, share };
  }

  const posted = (match: (m: FakeSlackMessage) => boolean, what: string) =>
    until(() => slack!.messages.find((m) => m.channel === "DADA" && match(m)), `${what}; have ${JSON.stringify(slack!.messages.map((m) => m.text))}`);
  async function lastUser() {
    const identity = (await app!.store.persons.findIdentity("slack", "UADA"))!;
    const all = await app!.store.conversation.listRecentMessages(identity.personId, 20);
    return { personId: identity.personId, message: all.filter((m) => m.role === "user").at(-1)! };
  }

  it("shows a shared image to the model, downloaded from url_private_download with the bot token, and keeps it in the workspace", async () => {
    const { slack, model, share } = await start((r) => text(imageUrls(r).length === 1 ? "Sales went up in August." : "no image"));
    await share("what does this chart say?", [slack.addFile(PNG, { name: "q3.png", mimetype: "image/png" })]);
    await posted((m) => m.text.includes("Sales went up in August."), "the reply");
    expect(imageUrls(model.requests[0]!)).toEqual([`data:image/png;base64,${PNG.toString("base64")}`]);
    expect(userTexts(model.requests[0]!).at(-1)).toMatch(/\[photo \("q3\.png", image\/png, \d+ bytes\); saved in the person's workspace as inbox\/[\d-]+\/q3\.png\]\nwhat does this chart say\?/);
    expect(slack.downloads).toEqual([{ path: expect.stringMatching(/^\/files-pri\/T1-F\d+\/download\/q3\.png$/), token: BOT_TOKEN }]);
    const { personId, message } = await lastUser();
    expect(readFileSync(join(app!.dataDir, "persons", personId, "workspace", message.attachments[0]!.path!))).toEqual(PNG);
  }, 30_000);

  it("transcribes a voice clip recorded in Slack (slack_audio)", async () => {
    const { slack, model, share } = await start((r) => text(userTexts(r).at(-1)?.includes('transcript: "lunch at noon?"') ? "Noon works." : "?"), { transcribe: () => "lunch at noon?" });
    await share("", [slack.addFile(AUDIO, { name: "audio_message.webm", mimetype: "audio/webm", subtype: "slack_audio", durationMs: 2500 })]);
    await posted((m) => m.text.includes("Noon works."), "the reply to the clip");
    expect(model.transcriptions).toHaveLength(1);
    expect(model.transcriptions[0]!.bytes).toEqual(AUDIO);
    expect(model.transcriptions[0]!.fileName).toMatch(/\.webm$/);
    const { message } = await lastUser();
    expect(message.attachments[0]).toMatchObject({ kind: "voice", transcript: "lunch at noon?", durationSeconds: 2.5 });
  }, 30_000);

  it("keeps a shared document under its name, with its title as a caption", async () => {
    const { slack, model, share } = await start(() => text("Filed."));
    const csv = Buffer.from("month,sales\nJuly,10\nAugust,12\n");
    await share("", [slack.addFile(csv, { name: "sales.csv", mimetype: "text/csv", title: "Sales by month" })]);
    await posted((m) => m.text.includes("Filed."), "the reply");
    expect(userTexts(model.requests[0]!).at(-1)).toMatch(/^\[file \("sales\.csv", text\/csv, \d+ bytes\); described as "Sales by month"; saved in the person's workspace as inbox\/[\d-]+\/sales\.csv\]$/);
    const { personId, message } = await lastUser();
    expect(readFileSync(join(app!.dataDir, "persons", personId, "workspace", message.attachments[0]!.path!))).toEqual(csv);
  }, 30_000);

  it("says honestly when Slack will not hand out a file (sign-in page instead of the file) and asks no model", async () => {
    const { slack, model, share } = await start(() => text("should not be asked"));
    const file = slack.addFile(PNG, { name: "x.png", mimetype: "image/png" });
    await share("", [{ ...file, url_private_download: `${slack.url}/files-pri/T1-FMISSING/download/x.png` }]);
    await posted((m) => m.text.startsWith("I couldn't download your photo from slack"), "the honest line");
    await sleep(300);
    expect(model.requests).toHaveLength(0);
  }, 30_000);

  it("never sends the bot token to a host other than Slack's", async () => {
    const { slack, share } = await start(() => text("ok"));
    let hits = 0;
    const elsewhere = await import("node:http").then(({ createServer }) => createServer((_req, res) => void (hits++, res.end("x"))));
    await new Promise<void>((r) => elsewhere.listen(0, "localhost", r));
    const port = (elsewhere.address() as { port: number }).port;
    try {
      await share("", [{ ...slack.addFile(PNG, { name: "y.png", mimetype: "image/png" }), url_private_download: `http://localhost:${port}/steal` }]);
      await posted((m) => m.text.startsWith("I couldn't download your photo from slack"), "the honest line");
      expect(hits).toBe(0);
    } finally {
      elsewhere.close();
    }
  }, 30_000);
});
