import { afterEach, describe, expect, it } from "vitest";
import { FakeSlackApi, type FakeSlackMessage } from "../fakes/slack-api.js";
import { blockActionsPayload, postEvent, postInteraction, type PostResult } from "../fakes/slack-events.js";
import {
  startFakeOpenAI,
  text,
  toolCall,
  type FakeOpenAIServer,
  type FakeScriptItem,
  type RecordedRequest,
} from "../fakes/openai-server.js";
import { settled, startTestApp, type TestApp } from "../helpers/app.js";
import { isWake, recordingServer as pageServer, sleep } from "../helpers/e2e.js";

/**
 * The whole product through Slack: the real app (`startTestApp`, which wires Slack from the settings
 * through app/messengers.ts), the real Bolt / WebClient over real HTTP against the local fake
 * of the Web API, and events and interactions posted to the app's own `/slack/events`, signed the
 * way Slack signs them. Only the model is scripted.
 */

const BOT_TOKEN = "xoxb-1111-2222-e2ebotsecret";
const SIGNING_SECRET = "e2e-Sg7f3kQ9xZ2mP8vL4rT6wN1yH5";
const GROUP = "CGROUP1";
/** Slack's own deadline for acknowledging an event or an interaction (Events API: 3 seconds). */
const SLACK_ACK_DEADLINE_MS = 3_000;
const signed = { signingSecret: SIGNING_SECRET };

/** Waits until `check` passes (polling), failing with its last error after `ms`. */
async function eventually<T>(check: () => T | Promise<T>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await sleep(50);
    }
  }
}

const sectionTexts = (m: FakeSlackMessage) => (m.blocks ?? []).filter((b) => b.type === "section").map((b) => b.text!.text);
const shown = (m: FakeSlackMessage) => sectionTexts(m).join("\n\n");
const buttonsOf = (m: FakeSlackMessage) => (m.blocks ?? []).filter((b) => b.type === "actions").flatMap((b) => b.elements ?? []);
const userTexts = (r: RecordedRequest) => r.messages.filter((m) => m.role === "user").map((m) => m.content);

/** A DM event from `user` in their DM channel `D<user without U>` (as conversations.open names it in the fake). */
function dm(user: string, text: string, ts: string, extra: Record<string, unknown> = {}) {
  return { type: "message", channel: `D${user.slice(1)}`, channel_type: "im", user, text, ts, event_ts: ts, ...extra };
}

let tsCounter = 0;
/** A fresh Slack `ts` (seconds.micros), unique within this file. */
const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++tsCounter).padStart(6, "0")}`;

describe("Slack end to end: the real app, Bolt and WebClient against the fake Slack", () => {
  let slack: FakeSlackApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
    await slack?.close();
    slack = null;
    for (const c of closers.splice(0)) await c();
  });

  /** Starts the fake Slack, the scripted model and the app wired to both; returns the events URL. */
  async function start(fallback: FakeScriptItem, env: Record<string, string> = {}) {
    slack = new FakeSlackApi({ botToken: BOT_TOKEN });
    await slack.listen();
    model = await startFakeOpenAI({ fallback });
    app = await startTestApp({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      OPENAI_BASE_URL: model.url,
      ALLOW_FROM: "slack:UADA",
      ...env,
    });
    expect(app.logs.join("")).toContain("Slack channel started");
    const events = `${app.url}/slack/events`;
    const say = async (user: string, text: string, eventId = `Ev${++tsCounter}`): Promise<PostResult> => {
      const res = await postEvent(events, dm(user, text, nextTs()), eventId, signed);
      expect(res.status).toBe(200);
      expect(res.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);
      return res;
    };
    return { slack, model, app, events, say };
  }

  /** Messages Familiar posted in `channel` (edits applied), once `predicate` holds. */
  const messagesIn = (channel: string, predicate: (ms: FakeSlackMessage[]) => boolean, ms?: number) =>
    eventually(() => {
      const list = slack!.messages.filter((m) => m.channel === channel);
      if (!predicate(list)) throw new Error(`messages in ${channel}: ${JSON.stringify(list.map((m) => m.text))}`);
      return list;
    }, ms);

  it("carries a whole DM conversation: a person is created, replies are rendered as mrkdwn blocks, the second turn sees both messages", async () => {
    const { say, model, app } = await start((r) =>
      text(r.lastUserText?.includes("banana") ? "Banana bread it is: **3 ripe bananas** & `180°C`." : "Hello *Ada*! Friday plans for <Mia>? See [the recipe](https://ex.com/r?a=1&b=2)."),
    );
    await say("UADA", "plan Friday baking with Mia & me");

    const [first] = await messagesIn("DADA", (ms) => ms.length >= 1);
    // Rendered for Slack: mrkdwn markers, Slack's escapes, a Slack link — inside a section block.
    expect(sectionTexts(first!)).toEqual(["Hello _Ada_! Friday plans for &lt;Mia&gt;? See <https://ex.com/r?a=1&amp;b=2|the recipe>."]);
    expect(first!.text).toContain("Friday plans for <Mia>");
    const identity = await app.store.persons.findIdentity("slack", "UADA");
    expect(identity).toMatchObject({ channel: "slack", accountId: "UADA", address: "DADA" });
    expect(model.requests[0]!.lastUserText).toBe("plan Friday baking with Mia & me");

    await say("UADA", "let's do banana bread");
    const both = await messagesIn("DADA", (ms) => ms.length >= 2);
    expect(sectionTexts(both[1]!)).toEqual(["Banana bread it is: *3 ripe bananas* &amp; `180°C`."]);
    expect(userTexts(model.requests.at(-1)!)).toEqual(["plan Friday baking with Mia & me", "let's do banana bread"]);
    // One person, one conversation: the Slack account did not become a second person.
    const conversation = await app.store.conversation.listRecentMessages(identity!.personId, 10);
    expect(conversation.map((m) => [m.role, m.channel])).toEqual([
      ["user", "slack"],
      ["assistant", "slack"],
      ["user", "slack"],
      ["assistant", "slack"],
    ]);
    expect((await app.store.persons.listPersons({ limit: 10 })).items).toHaveLength(1);
  });

  it("runs an approval round trip with Block Kit buttons: ack within 3 s, ephemeral notice, card edited, task resumed, one GET; later presses change nothing", async () => {
    const page = await pageServer("<html><body><h1>Deals</h1><p>Lisbon for 89 euros.</p></body></html>");
    closers.push(page.close);
    const { say, model, app, events } = await start(
      (r) => {
        const last = r.messages.at(-1);
        if (last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:")) {
          if (/denied|expired/.test(last.content)) return text("Understood, I did not fetch it.");
          return toolCall("http_fetch", { url: `${page.url}/deals` }); // approved: repeat the call
        }
        if (last?.role === "tool") {
          const result = String(last.content);
          if (result.includes("approval_required")) return text("I need your OK first.");
          return text(result.includes("Lisbon") ? "The page says: Lisbon for 89 euros." : `unexpected: ${result.slice(0, 80)}`);
        }
        return toolCall("http_fetch", { url: `${page.url}/deals` });
      },
      { PRIVATE_HOSTS_ALLOWED: page.hostPort },
    );
    await say("UADA", "what's on the deals page?");

    // The card arrives as native Block Kit buttons, and nothing was fetched yet.
    const before = await messagesIn("DADA", (ms) => ms.some((m) => buttonsOf(m).length > 0) && ms.some((m) => shown(m) === "I need your OK first."));
    const card = before.find((m) => buttonsOf(m).length > 0)!;
    expect(shown(card)).toContain("Familiar wants to *read*");
    expect(shown(card)).toContain(`${page.url}/deals`);
    expect(buttonsOf(card).map((b) => b.text.text)).toEqual(expect.arrayContaining(["Approve once", "Allow for this task", "Deny"]));
    expect(page.received).toHaveLength(0);
    const requestsBefore = model.requests.length;

    const approve = buttonsOf(card).find((b) => b.text.text === "Approve once")!;
    const payload = blockActionsPayload({ user: "UADA", channel: "DADA", messageTs: card.ts, actionId: approve.action_id, value: approve.value, actionTs: "1700000200.000001" });
    const press = await postInteraction(events, payload, signed);
    expect(press.status).toBe(200);
    expect(press.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);

    // Slack's transient feedback to the presser, the card shows the decision without buttons, the task resumes.
    await eventually(() => expect(slack!.callsOf("chat.postEphemeral").map((c) => [c.params.channel, c.params.user, c.params.text])).toEqual([["DADA", "UADA", "Approved once."]]));
    await eventually(() => expect(slack!.callsOf("chat.update").map((c) => c.params.ts)).toEqual([card.ts]));
    const edited = slack!.messages.find((m) => m.ts === card.ts)!;
    expect(buttonsOf(edited)).toHaveLength(0);
    expect(shown(edited)).toContain("✅ Approved once via Slack");
    await messagesIn("DADA", (ms) => ms.some((m) => shown(m) === "The page says: Lisbon for 89 euros."));
    expect(page.received).toEqual([{ method: "GET", path: "/deals" }]);
    const requestsAfter = model.requests.length;
    expect(requestsAfter).toBeGreaterThan(requestsBefore);

    // A replay of the same signed press (S4) is acknowledged and does nothing, not even a notice.
    const replay = await postInteraction(events, payload, signed);
    expect(replay.status).toBe(200);
    // A second real click on the card (a new action_ts) is told it was decided and resumes nothing.
    const again = await postInteraction(events, { ...payload, actions: [{ ...(payload.actions as object[])[0], action_ts: "1700000201.000001" }] }, signed);
    expect(again.status).toBe(200);
    await eventually(() => expect(slack!.callsOf("chat.postEphemeral")).toHaveLength(2));
    expect(slack!.callsOf("chat.postEphemeral")[1]!.params).toMatchObject({ channel: "DADA", user: "UADA", text: "This request was already approved." });
    await sleep(1_000);
    expect(slack!.callsOf("chat.postEphemeral")).toHaveLength(2);
    expect(model.requests).toHaveLength(requestsAfter);
    expect(page.received).toHaveLength(1);
    expect(slack!.messages.filter((m) => shown(m) === "The page says: Lisbon for 89 euros.")).toHaveLength(1);
    const identity = (await app.store.persons.findIdentity("slack", "UADA"))!;
    expect(await app.store.approvals.listPendingApprovals(identity.personId)).toHaveLength(0);
  }, 30_000);

  it("sends a reminder first: the wake-up's message arrives in the DM without anything posted by the user", async () => {
    const { say, model } = await start((r) => {
      if (isWake(r, "stretch")) return text("Time to **stretch**!");
      if (r.messages.at(-1)?.role === "tool") return text("Okay, I'll remind you in 3 seconds.");
      if (r.lastUserText?.startsWith("remind me")) {
        return toolCall("schedule_wakeup", { note: "stretch", at: new Date(Date.now() + 3_000).toISOString(), notify: "always" });
      }
      return text("ok");
    });
    await say("UADA", "remind me in 3 seconds to stretch");
    await messagesIn("DADA", (ms) => ms.some((m) => shown(m) === "Okay, I'll remind you in 3 seconds."));

    const all = await messagesIn("DADA", (ms) => ms.some((m) => shown(m) === "Time to *stretch*!"), 20_000);
    expect(all.map(shown)).toEqual(["Okay, I'll remind you in 3 seconds.", "Time to *stretch*!"]);
    // Familiar wrote first: a background activation produced it, with no new message from the person.
    const wake = model.requests.find((r) => isWake(r, "stretch"));
    expect(wake).toBeDefined();
    expect(userTexts(wake!)).toEqual(["remind me in 3 seconds to stretch"]);
    // Nothing more is due or running: a second reminder would have been posted by now.
    await settled(app!);
    expect(slack!.messages.filter((m) => shown(m) === "Time to *stretch*!")).toHaveLength(1);
  }, 30_000);

  it("pairs a stranger: a one-time code through Slack and nothing to the model; after /pair from the local chat they are told and get replies", async () => {
    const { say, model, app } = await start((r) => text(`echo: ${r.lastUserText ?? ""}`));
    await say("UBOB", "hi, who are you?");
    const [offer] = await messagesIn("DBOB", (ms) => ms.length >= 1);
    const code = /pairing code is ([A-Z0-9]{8})/.exec(shown(offer!))?.[1];
    expect(code, shown(offer!)).toBeDefined();
    // A second message while waiting gets no second code; nothing reaches the model.
    await say("UBOB", "hello?");
    await sleep(500);
    expect(slack!.messages.filter((m) => m.channel === "DBOB")).toHaveLength(1);
    expect(model.requests).toHaveLength(0);
    expect(await app.store.persons.findIdentity("slack", "UBOB")).toBeNull();

    await app.say("owner", `/pair ${code}`);
    const [ack] = await app.replies("owner", 1);
    expect(ack!.text).toContain("Paired");
    await messagesIn("DBOB", (ms) => ms.some((m) => shown(m) === "You're paired — say hello!"));
    expect(model.requests).toHaveLength(0); // /pair is a command: the model never saw it

    await say("UBOB", "hello Familiar");
    const bob = await messagesIn("DBOB", (ms) => ms.some((m) => shown(m) === "echo: hello Familiar"));
    expect(bob.map(shown)).toEqual([shown(offer!), "You're paired — say hello!", "echo: hello Familiar"]);
    expect(model.requests.map((r) => r.lastUserText)).toEqual(["hello Familiar"]);
    // Bob's earlier messages were never part of any conversation.
    expect(userTexts(model.requests[0]!)).toEqual(["hello Familiar"]);
  });

  it("/link joins a Slack account to a local-chat person: the next Slack turn carries the earlier local messages", async () => {
    const { say, model, app } = await start((r) => text(`echo: ${r.lastUserText ?? ""}`));
    await app.say("cara", "my sister is called Dana");
    await app.replies("cara", 1);
    await app.say("cara", "/link");
    const replies = await app.replies("cara", 2);
    const code = /: ([A-Z0-9]{6})$/.exec(replies[1]!.text)?.[1];
    expect(code, replies[1]!.text).toBeDefined();

    await say("UCARA", code!);
    await messagesIn("DCARA", (ms) => ms.some((m) => shown(m).startsWith("Linked!")));
    const local = (await app.store.persons.findIdentity("local", "cara"))!;
    expect(await app.store.persons.findIdentity("slack", "UCARA")).toMatchObject({ personId: local.personId, address: "DCARA" });
    expect(model.requests).toHaveLength(1); // the code itself is not a turn

    await say("UCARA", "what is my sister called?");
    await messagesIn("DCARA", (ms) => ms.some((m) => shown(m) === "echo: what is my sister called?"));
    expect(userTexts(model.requests.at(-1)!)).toEqual(["my sister is called Dana", "what is my sister called?"]);
  });

  it("keeps a person first seen through a channel mention private: answers, later DMs and a stranger's pairing code go to DMs, never the channel", async () => {
    const { events, say, app } = await start((r) => text(`echo: ${r.lastUserText ?? ""}`), { ALLOW_GROUPS: `slack:${GROUP}` });
    const mention = (user: string, words: string) => {
      const ts = nextTs();
      return postEvent(events, { type: "app_mention", channel: GROUP, user, text: `<@UBOT> ${words}`, ts, event_ts: ts }, `Ev${ts}`, signed);
    };
    expect((await mention("UADA", "hi there")).status).toBe(200);
    await messagesIn("DADA", (ms) => ms.some((m) => shown(m) === "echo: hi there"));
    expect(await app.store.persons.findIdentity("slack", "UADA")).toMatchObject({ address: "UADA" });

    await say("UADA", "my bank PIN is 4321, keep it between us");
    // The PIN itself is withheld (issue 11); the vault offer goes to the DM too, never the channel.
    await messagesIn("DADA", (ms) => ms.some((m) => shown(m) === "echo: my bank PIN is [secret-looking text withheld], keep it between us") && ms.some((m) => shown(m).includes("one-time link")));
    expect((await mention("UBOB", "who are you?")).status).toBe(200);
    await messagesIn("DBOB", (ms) => ms.some((m) => /pairing code is [A-Z0-9]{8}/.test(shown(m))));
    await sleep(300);
    expect(slack!.messages.filter((m) => m.channel === GROUP)).toEqual([]);
  });

  it("dedupes in the real core (S1, S2): a retried event and a mention delivered twice give one turn and one reply each", async () => {
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => (release = r));
    const { events, model } = await start(
      async (r) => {
        if (r.lastUserText === "book the dentist") await slow; // the handler is slow while Slack retries
        return text(`echo: ${r.lastUserText ?? ""}`);
      },
      { ALLOW_GROUPS: `slack:${GROUP}` },
    );

    // S1: the same event_id again, retry 1 with reason timeout, while the turn still runs.
    const event = dm("UADA", "book the dentist", nextTs());
    const first = await postEvent(events, event, "EvS1", signed);
    await eventually(() => expect(model.requests).toHaveLength(1));
    const retry = await postEvent(events, event, "EvS1", { ...signed, retryNum: 1, retryReason: "timeout" });
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(first.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);
    expect(retry.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);
    release();
    await messagesIn("DADA", (ms) => ms.some((m) => shown(m) === "echo: book the dentist"));

    // S2: a mention in an allowed channel, as `message` and as `app_mention` with the same ts, 80 ms apart.
    const ts = nextTs();
    const mentionText = "<@UBOT> what's on today?";
    const a = postEvent(events, { type: "message", channel: GROUP, channel_type: "channel", user: "UADA", text: mentionText, ts, event_ts: ts }, "EvS2a", signed);
    await sleep(80);
    const b = postEvent(events, { type: "app_mention", channel: GROUP, user: "UADA", text: mentionText, ts, event_ts: ts }, "EvS2b", signed);
    expect([(await a).status, (await b).status]).toEqual([200, 200]);
    await eventually(() => expect(slack!.messages.some((m) => shown(m) === "echo: what's on today?")).toBe(true));

    await sleep(1_000);
    expect(model.requests.map((r) => r.lastUserText)).toEqual(["book the dentist", "what's on today?"]);
    expect(slack!.messages.filter((m) => shown(m) === "echo: book the dentist")).toHaveLength(1);
    // One reply (in the person's DM: see the test on channel mentions below).
    expect(slack!.messages.filter((m) => shown(m) === "echo: what's on today?")).toHaveLength(1);

    // Durable: after a restart on the same data, Slack's next retry of the same event is still ignored.
    const dataDir = app!.dataDir;
    await app!.stop();
    app = await startTestApp({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack!.apiUrl, OPENAI_BASE_URL: model.url, ALLOW_FROM: "slack:UADA", ALLOW_GROUPS: `slack:${GROUP}`, DATA_DIR: dataDir });
    const late = await postEvent(`${app.url}/slack/events`, event, "EvS1", { ...signed, retryNum: 2, retryReason: "timeout" });
    expect(late.status).toBe(200);
    await sleep(1_000);
    expect(model.requests).toHaveLength(2);
    expect(slack!.messages.filter((m) => shown(m) === "echo: book the dentist")).toHaveLength(1);
  }, 30_000);
});
