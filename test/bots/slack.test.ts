import { send } from "../helpers/send.js";
import { deliverThroughOutbox } from "../helpers/outbox.js";
import { afterEach, describe, expect, it } from "vitest";
import { HttpServer } from "../../web/http/server.js";
import { createSlackChannel, type SlackChannel } from "../../bots/slack/index.js";
import { DeliveryError, type InboundEvent, type InboundOutcome, type InboundSink } from "../../core/channels/port.js";
import { createLogger } from "../../core/log/logger.js";
import { FakeSlackApi, type FakeSlackMessage } from "../fakes/slack-api.js";
import { blockActionsPayload, postEvent, postInteraction } from "../fakes/slack-events.js";

const { logger } = createLogger({ level: "silent" });
const BOT_TOKEN = "xoxb-1111-2222-secretbotvalue";
const APP_TOKEN = "xapp-1-A1-secretappvalue";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const GROUP = "CGROUP1";

/** Slack's own deadline for acknowledging an event or interaction (Events API: 3 seconds). */
const SLACK_ACK_DEADLINE_MS = 3_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * Emulates the core: remembers update ids (durable dedupe), records what it accepted, and runs a
 * "turn" per accepted message that replies through the adapter once `turnGate` opens. `sinkGate`
 * holds the sink's own answer back (a slow core).
 */
function fakeCore(opts: { notice?: string } = {}) {
  const seen = new Set<string>();
  const calls: { event: InboundEvent; outcome: InboundOutcome }[] = [];
  const accepted: InboundEvent[] = [];
  let openSink: () => void = () => undefined;
  let sinkGate: Promise<void> = Promise.resolve();
  let openTurn: () => void = () => undefined;
  let turnGate: Promise<void> = Promise.resolve();
  const turns: Promise<unknown>[] = [];
  let channel: SlackChannel | null = null;
  const sink: InboundSink = async (event) => {
    // Recorded before anything else, as the core's durable insert is.
    const outcome: InboundOutcome = seen.has(event.updateId) ? { status: "duplicate" } : { status: event.kind === "press" ? "handled" : "accepted" };
    if (outcome.status !== "duplicate" && event.kind === "press" && opts.notice) outcome.notice = opts.notice;
    seen.add(event.updateId);
    calls.push({ event, outcome });
    if (outcome.status === "accepted") {
      accepted.push(event);
      turns.push(turnGate.then(() => send(channel!, { accountId: event.accountId, address: event.address }, { text: `You said: ${(event as { text: string }).text}`, buttons: [] })));
    } else if (outcome.status === "handled") accepted.push(event);
    await sinkGate;
    return outcome;
  };
  return {
    sink,
    calls,
    accepted,
    turns,
    attach: (c: SlackChannel) => void (channel = c),
    holdSink: () => void (sinkGate = new Promise<void>((r) => (openSink = r))),
    releaseSink: () => openSink(),
    holdTurns: () => void (turnGate = new Promise<void>((r) => (openTurn = r))),
    releaseTurns: () => openTurn(),
  };
}

async function startFake(options: { blocksTooLongAt?: number } = {}) {
  const fake = new FakeSlackApi({ botToken: BOT_TOKEN, appToken: APP_TOKEN, ...options });
  await fake.listen();
  cleanups.push(() => fake.close());
  return fake;
}

/** HTTP mode: our express server with the Slack route, the adapter started against the fake. */
async function setupHttp(options: { blocksTooLongAt?: number; notice?: string } = {}) {
  const fake = await startFake(options);
  const http = new HttpServer(logger, []);
  const channel = createSlackChannel({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: fake.apiUrl, allowGroups: [GROUP], http, logger });
  const core = fakeCore(options);
  core.attach(channel);
  await channel.start(core.sink);
  const port = await http.listen("127.0.0.1", 0);
  cleanups.push(async () => {
    await channel.stop();
    await http.close();
  });
  const url = `http://127.0.0.1:${port}/slack/events`;
  return { fake, channel, core, url, signed: { signingSecret: SIGNING_SECRET } };
}

function dm(text: string, ts: string, extra: Record<string, unknown> = {}) {
  return { type: "message", channel: "DADA", channel_type: "im", user: "UADA", text, ts, event_ts: ts, ...extra };
}

/** Waits until `check` passes (polling), failing after `ms`. */
async function eventually(check: () => void, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sectionTexts = (m: FakeSlackMessage) => (m.blocks ?? []).filter((b) => b.type === "section").map((b) => b.text!.text);
const buttonsOf = (m: FakeSlackMessage) => (m.blocks ?? []).filter((b) => b.type === "actions").flatMap((b) => b.elements ?? []);

describe("Slack channel: start", () => {
  it("rejects a bad bot token with an error naming SLACK_BOT_TOKEN, never the token", async () => {
    const fake = await startFake();
    const http = new HttpServer(logger, []);
    const channel = createSlackChannel({ botToken: "xoxb-wrong-secretvalue", signingSecret: SIGNING_SECRET, apiUrl: fake.apiUrl, http, logger });
    const err = await channel.start(fakeCore().sink).then(() => null, (e: unknown) => e as Error);
    expect(err?.message).toContain("SLACK_BOT_TOKEN");
    expect(err?.message).toContain("invalid_auth");
    expect(err?.message).not.toContain("secretvalue");
    expect(fake.callsOf("auth.test")).toHaveLength(1);
  });

  it("answers 503 before start instead of swallowing events", async () => {
    const fake = await startFake();
    const http = new HttpServer(logger, []);
    createSlackChannel({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: fake.apiUrl, http, logger });
    const port = await http.listen("127.0.0.1", 0);
    cleanups.push(() => http.close());
    const res = await postEvent(`http://127.0.0.1:${port}/slack/events`, dm("hi", "1700000000.000001"), "Ev0", { signingSecret: SIGNING_SECRET });
    expect(res.status).toBe(503);
  });
});

describe("Slack channel: HTTP events", () => {
  it("carries a DM conversation round trip: event → sink → formatted reply in the DM", async () => {
    const { fake, core, url, signed, channel } = await setupHttp();
    const res = await postEvent(url, dm("Hello &lt;there&gt; &amp; you", "1700000000.000100", { user_profile: { display_name: "Ada" } }), "Ev1", signed);
    expect(res.status).toBe(200);
    await eventually(() => expect(core.accepted).toHaveLength(1));
    expect(core.accepted[0]).toMatchObject({ kind: "message", channel: "slack", updateId: "msg:DADA:1700000000.000100", accountId: "UADA", address: "DADA", displayName: "Ada", text: "Hello <there> & you" });
    await Promise.all(core.turns);
    const receipt = await send(channel, { accountId: "UADA", address: "DADA" }, { text: "**Done** for <NAME> & co, see [docs](https://ex.com/a?b=1&c=2)", buttons: [{ id: "appr:1", label: "Approve" }] });
    const reply = fake.messages.at(-1)!;
    expect(receipt.platformIds).toEqual([reply.ts]);
    expect(reply.channel).toBe("DADA");
    expect(sectionTexts(reply)).toEqual(["*Done* for &lt;NAME&gt; &amp; co, see <https://ex.com/a?b=1&amp;c=2|docs>"]);
    expect(buttonsOf(reply).map((b) => [b.value, b.text.text])).toEqual([["appr:1", "Approve"]]);
    expect(reply.text).toContain("Done for <NAME>");
  });

  it("ignores bots, its own messages and edits", async () => {
    const { core, url, signed } = await setupHttp();
    expect((await postEvent(url, dm("from a bot", "1700000000.000201", { bot_id: "B9", subtype: "bot_message" }), "Ev2", signed)).status).toBe(200);
    expect((await postEvent(url, dm("self", "1700000000.000202", { user: "UBOT" }), "Ev3", signed)).status).toBe(200);
    expect((await postEvent(url, dm("edited", "1700000000.000203", { subtype: "message_changed" }), "Ev4", signed)).status).toBe(200);
    await postEvent(url, dm("real", "1700000000.000204"), "Ev5", signed);
    await eventually(() => expect(core.calls).toHaveLength(1));
    // A fixed wait on purpose: it asserts that NO further event reaches the core meanwhile.
    await sleep(100);
    expect(core.calls.map((c) => (c.event as { text: string }).text)).toEqual(["real"]);
  });

  it("reads mentions only in ALLOW_GROUPS channels, with the mention stripped", async () => {
    const { core, url, signed } = await setupHttp();
    const mention = (channel: string, ts: string, text = "<@UBOT> plan my week") => ({ type: "app_mention", channel, user: "UADA", text, ts, event_ts: ts });
    await postEvent(url, mention("COTHER", "1700000000.000301"), "Ev6", signed);
    await postEvent(url, { type: "message", channel: GROUP, channel_type: "channel", user: "UADA", text: "no mention here", ts: "1700000000.000302" }, "Ev7", signed);
    await postEvent(url, mention(GROUP, "1700000000.000303"), "Ev8", signed);
    await eventually(() => expect(core.calls).toHaveLength(1));
    // A fixed wait on purpose: it asserts that NO further event reaches the core meanwhile.
    await sleep(100);
    expect(core.calls).toHaveLength(1);
    // The address is the sender (their DM), never the channel: whatever Familiar says to them later stays private.
    expect(core.calls[0]!.event).toMatchObject({ address: "UADA", accountId: "UADA", text: "plan my week", updateId: `msg:${GROUP}:1700000000.000303` });
  });

  it("S1: a retried event (same event_id, retry 1, reason timeout) while the handler is slow: acked within 3 s, one turn, one reply", async () => {
    const { fake, core, url, signed } = await setupHttp();
    core.holdSink(); // the core takes long to answer (the slow handler of the case)
    core.holdTurns();
    const event = dm("book the dentist", "1700000000.000400");
    const first = await postEvent(url, event, "EvS1", signed);
    // A fixed wait on purpose: it models Slack's timing (the retry comes after its 3 s ack window), not a wait for Familiar.
    await sleep(4_000); // Slack retries 4 s later
    const retry = await postEvent(url, event, "EvS1", { ...signed, retryNum: 1, retryReason: "timeout" });
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(first.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);
    expect(retry.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);
    core.releaseSink();
    core.releaseTurns();
    await eventually(() => expect(core.calls).toHaveLength(2));
    expect(core.calls.map((c) => c.outcome.status)).toEqual(["accepted", "duplicate"]);
    await Promise.all(core.turns);
    expect(core.turns).toHaveLength(1);
    expect(fake.messages.map((m) => [m.channel, sectionTexts(m)])).toEqual([["DADA", ["You said: book the dentist"]]]);
  });

  it("S2: a mention delivered as message and app_mention 80 ms apart gives one turn, one reply", async () => {
    const { fake, core, url, signed } = await setupHttp();
    const ts = "1700000000.000500";
    const text = "<@UBOT> what's on today?";
    const a = postEvent(url, { type: "message", channel: GROUP, channel_type: "channel", user: "UADA", text, ts, event_ts: ts }, "EvS2a", signed);
    // A fixed wait on purpose: it models the platform's timing (the two deliveries come 80 ms apart).
    await sleep(80);
    const b = postEvent(url, { type: "app_mention", channel: GROUP, user: "UADA", text, ts, event_ts: ts }, "EvS2b", signed);
    expect((await a).status).toBe(200);
    expect((await b).status).toBe(200);
    await eventually(() => expect(core.calls).toHaveLength(2));
    expect(core.calls.map((c) => c.outcome.status)).toEqual(["accepted", "duplicate"]);
    await Promise.all(core.turns);
    expect(fake.messages.map((m) => [m.channel, sectionTexts(m)])).toEqual([["DADA", ["You said: what's on today?"]]]);
  });

  it("rejects a wrong signature and a stale timestamp with 401, and the sink sees nothing", async () => {
    const { core, url, signed } = await setupHttp();
    const wrong = await postEvent(url, dm("forged", "1700000000.000601"), "EvF1", { ...signed, signWith: "not-the-secret-at-all" });
    const stale = await postEvent(url, dm("old", "1700000000.000602"), "EvF2", { ...signed, timestampSec: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(wrong.status).toBe(401);
    expect(stale.status).toBe(401);
    // A fixed wait on purpose: it asserts that NO further event reaches the core meanwhile.
    await sleep(100);
    expect(core.calls).toHaveLength(0);
  });
});

describe("Slack channel: button presses", () => {
  it("S4: a replayed signed press is acknowledged but recognised as a replay and changes nothing", async () => {
    const { fake, core, url, signed, channel } = await setupHttp({ notice: "Approved once" });
    const card = await send(channel, { accountId: "UADA", address: "DADA" }, { text: "Send the email to Bob?", buttons: [{ id: "ap:42:once", label: "Approve" }, { id: "ap:42:deny", label: "Deny" }] });
    const button = buttonsOf(fake.messages[0]!)[0]!;
    const payload = blockActionsPayload({ user: "UADA", channel: "DADA", messageTs: card.platformIds[0]!, actionId: button.action_id, value: button.value, actionTs: "1700000200.123456" });
    const ts = Math.floor(Date.now() / 1000);
    const first = await postInteraction(url, payload, { ...signed, timestampSec: ts });
    const replay = await postInteraction(url, payload, { ...signed, timestampSec: ts });
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(first.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);
    await eventually(() => expect(core.calls).toHaveLength(2));
    const [a, b] = core.calls;
    expect(a!.event).toMatchObject({ kind: "press", buttonId: "ap:42:once", messageRef: card.platformIds[0], accountId: "UADA", address: "DADA" });
    expect(b!.event.updateId).toBe(a!.event.updateId);
    expect(core.calls.map((c) => c.outcome.status)).toEqual(["handled", "duplicate"]);
    await eventually(() => expect(fake.callsOf("chat.postEphemeral")).toHaveLength(1));
    // A fixed wait on purpose: it asserts that NO second notice is posted meanwhile.
    await sleep(150);
    expect(fake.callsOf("chat.postEphemeral").map((c) => [c.params.channel, c.params.user, c.params.text])).toEqual([["DADA", "UADA", "Approved once"]]);
    // A second real click (new action_ts) is a new press, not a replay.
    await postInteraction(url, { ...payload, actions: [{ ...(payload.actions as object[])[0], action_ts: "1700000201.000001" }] }, signed);
    await eventually(() => expect(core.calls).toHaveLength(3));
    expect(core.calls[2]!.outcome.status).toBe("handled");
  });

  it("acknowledges a press within 3 s even when the core is slow", async () => {
    const { core, url, signed } = await setupHttp();
    core.holdSink();
    const payload = blockActionsPayload({ user: "UADA", channel: "DADA", messageTs: "1700000100.000001", actionId: "familiar:0", value: "x", actionTs: "1700000300.1" });
    const res = await postInteraction(url, payload, signed);
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(SLACK_ACK_DEADLINE_MS);
    core.releaseSink();
  });
});

describe("Slack channel: sending", () => {
  const longAnswer = () => {
    const paras: string[] = [];
    for (let i = 0; paras.join("\n\n").length < 13_000; i++) {
      paras.push(`Paragraph ${i}: **step ${i}** is to check the <logs> & notes for item ${i}, then write it up carefully with details.`.repeat(3));
      if (i % 5 === 0) paras.push(`- point ${i}a\n- point ${i}b with \`code ${i}\``);
    }
    const text = paras.join("\n\n");
    return text + "\n\nEND-OF-ANSWER " + "x".repeat(Math.max(0, 14_000 - text.length - 16));
  };
  const words = (s: string) => s.replace(/[*_`•\-]|&lt;|&gt;|&amp;|<|>|&/g, " ").split(/\s+/).filter(Boolean);

  it("S3: a 14,000-character answer is split under conservative budgets, in order, buttons on the last", async () => {
    const { fake, channel } = await setupHttp();
    const md = longAnswer();
    expect(md.length).toBe(14_000);
    const receipt = await send(channel, { accountId: "UADA", address: "DADA" }, { text: md, buttons: [{ id: "more", label: "More" }] });
    expect(fake.messages.length).toBeGreaterThanOrEqual(2);
    expect(receipt.platformIds).toEqual(fake.messages.map((m) => m.ts));
    for (const m of fake.messages) {
      expect(m.blocks!.length).toBeLessThanOrEqual(50);
      for (const s of sectionTexts(m)) expect(s.length).toBeLessThanOrEqual(3_000);
      expect(sectionTexts(m).join("").length).toBeLessThanOrEqual(12_000);
    }
    expect(fake.messages.map((m) => buttonsOf(m).length)).toEqual([...fake.messages.slice(1).map(() => 0), 1]);
    expect(words(fake.messages.flatMap(sectionTexts).join(" "))).toEqual(words(md));
  });

  it("S3: when Slack rejects the blocks (msg_blocks_too_long) the answer still arrives as plain text", async () => {
    const { fake, channel } = await setupHttp({ blocksTooLongAt: 5_000 });
    const md = longAnswer();
    const row = await deliverThroughOutbox(channel, { accountId: "UADA", address: "DADA" }, { text: md, buttons: [{ id: "more", label: "More" }] });
    expect(row.status).toBe("delivered");
    expect(fake.callsOf("chat.postMessage").length).toBeGreaterThan(fake.messages.length); // rejections happened
    expect(row.delivered?.platformIds).toEqual(fake.messages.map((m) => m.ts));
    const shown = fake.messages.map((m) => (m.blocks ? sectionTexts(m).join("\n\n") : m.text));
    expect(words(shown.join(" "))).toEqual(words(md));
    expect(buttonsOf(fake.messages.at(-1)!).map((b) => b.value)).toEqual(["more"]);
    for (const m of fake.messages.slice(0, -1)) expect(buttonsOf(m)).toHaveLength(0);
  });

  it("maps refusals: a gone channel is recipient_gone; rate limits that outlast the WebClient's waits are retryable with Retry-After", async () => {
    const { fake, channel } = await setupHttp();
    fake.goneChannels.add("CGONE");
    const gone = await send(channel, { accountId: "UADA", address: "CGONE" }, { text: "hi", buttons: [] }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(DeliveryError);
    expect((gone as DeliveryError).outcome).toBe("recipient_gone");
    expect(fake.callsOf("chat.postMessage").filter((c) => c.params.channel === "CGONE")).toHaveLength(1); // never resent

    fake.failNext("chat.postMessage", { status: 429, retryAfterSec: 1 }, 3);
    const limited = await send(channel, { accountId: "UADA", address: "DADA" }, { text: "hi", buttons: [] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(DeliveryError);
    expect((limited as DeliveryError).outcome).toBe("rate_limited");
    expect((limited as DeliveryError).retryAfterMs).toBe(1_000);

    fake.failNext("chat.postMessage", { error: "msg_too_long" });
    const tooLong = await send(channel, { accountId: "UADA", address: "DADA" }, { text: "hi", buttons: [] }).catch((e: unknown) => e);
    expect((tooLong as DeliveryError).outcome).toBe("payload_rejected");
  });

  it("opens a DM for a user-id address, and edits a card to show its outcome", async () => {
    const { fake, channel } = await setupHttp();
    const card = await send(channel, { accountId: "UADA", address: "UADA" }, { text: "Delete 3 files?", buttons: [{ id: "ok", label: "Yes" }] });
    expect(fake.callsOf("conversations.open")[0]!.params.users).toBe("UADA");
    expect(fake.messages[0]!.channel).toBe("DADA");
    await channel.edit({ accountId: "UADA", address: "DADA" }, card.platformIds, { text: "Delete 3 files? — _approved_", buttons: [] });
    expect(fake.messages).toHaveLength(1);
    expect(sectionTexts(fake.messages[0]!)).toEqual(["Delete 3 files? — _approved_"]);
    expect(buttonsOf(fake.messages[0]!)).toHaveLength(0);
  });
});

describe("Slack channel: Socket Mode", () => {
  it("connects with apps.connections.open, acks an event envelope and hands the DM to the sink", async () => {
    const fake = await startFake();
    const channel = createSlackChannel({ botToken: BOT_TOKEN, appToken: APP_TOKEN, apiUrl: fake.apiUrl, logger });
    const core = fakeCore();
    core.attach(channel);
    await channel.start(core.sink);
    cleanups.push(() => channel.stop());
    expect(fake.callsOf("apps.connections.open")[0]!.token).toBe(APP_TOKEN);
    expect(fake.socketCount).toBe(1);
    core.holdSink();
    const ts = "1700000000.000900";
    const sentAt = Date.now();
    const envelopeId = fake.sendEnvelope("events_api", JSON.parse(JSON.stringify({ type: "event_callback", team_id: "T1", api_app_id: "A1", event_id: "EvSock", event: dm("over the socket", ts), authorizations: [{ team_id: "T1", user_id: "UBOT", is_bot: true }] })));
    await eventually(() => expect(fake.acks.map((a) => a.envelope_id)).toContain(envelopeId));
    expect(fake.acks[0]!.at - sentAt).toBeLessThan(SLACK_ACK_DEADLINE_MS);
    await eventually(() => expect(core.calls).toHaveLength(1));
    expect(core.calls[0]!.event).toMatchObject({ updateId: `msg:DADA:${ts}`, text: "over the socket", address: "DADA" });
    core.releaseSink();
    await Promise.all(core.turns);
    expect(sectionTexts(fake.messages[0]!)).toEqual(["You said: over the socket"]);
  });

  it("names SLACK_APP_TOKEN when Slack refuses the app token", async () => {
    const fake = await startFake();
    const channel = createSlackChannel({ botToken: BOT_TOKEN, appToken: "xapp-wrong-secretvalue", apiUrl: fake.apiUrl, logger });
    const err = await channel.start(fakeCore().sink).then(() => null, (e: unknown) => e as Error);
    expect(err?.message).toContain("SLACK_APP_TOKEN");
    expect(err?.message).not.toContain("secretvalue");
  });
});

describe("Slack channel: attachments", () => {
  it("sends a message's files as Slack files in the conversation (external upload flow), after its text", async () => {
    const { fake, channel } = await setupHttp();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const receipt = await send(channel, 
      { accountId: "UADA", address: "DADA" },
      { text: "Here is the page.", buttons: [], attachments: [{ id: "art_1" as never, name: "shot.png", mimeType: "image/png", bytes: png }] },
    );
    expect(fake.messages.at(-1)!.text).toContain("Here is the page.");
    expect(fake.files).toHaveLength(1);
    expect(fake.files[0]).toMatchObject({ channel: "DADA", filename: "shot.png" });
    expect(fake.files[0]!.bytes).toEqual(png);
    expect(receipt.platformIds.at(-1)).toBe(`file:${fake.files[0]!.id}`);
    // A file alone (no text) sends no empty message.
    const before = fake.messages.length;
    await send(channel, { accountId: "UADA", address: "DADA" }, { text: "", buttons: [], attachments: [{ id: "art_2" as never, name: "report.pdf", mimeType: "application/pdf", bytes: Buffer.from("%PDF-1.4") }] });
    expect(fake.messages.length).toBe(before);
    expect(fake.files.map((f) => f.filename)).toEqual(["shot.png", "report.pdf"]);
  });
});
