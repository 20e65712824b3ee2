import { send } from "../helpers/send.js";
import { afterEach, describe, expect, it } from "vitest";
import { createDiscordChannel, type DiscordChannel } from "../../bots/discord/channel.js";
import { renderDiscordMessages } from "../../bots/discord/render.js";
import { DeliveryError, type InboundEvent, type InboundOutcome, type InboundSink } from "../../core/channels/port.js";
import { createLogger } from "../../core/log/logger.js";
import { FakeDiscord, INTERACTION_DEADLINE_MS, snowflake, type FakeUser } from "../fakes/discord-api.js";

const { logger } = createLogger({ level: "silent" });

const ada: FakeUser = { id: snowflake(), username: "ada", global_name: "Ada L." };
const bob: FakeUser = { id: snowflake(), username: "bob" };

/** A sink that records events and answers like the core: dedupe on update id, first press wins. */
function coreLikeSink(options: { pressDelayMs?: number } = {}) {
  const events: InboundEvent[] = [];
  const resolved: string[] = [];
  const seen = new Set<string>();
  const decided = new Set<string>();
  const sink: InboundSink = async (event): Promise<InboundOutcome> => {
    events.push(event);
    if (seen.has(event.updateId)) return { status: "duplicate" };
    seen.add(event.updateId);
    if (event.kind === "message") return { status: "accepted" };
    // The fake core's own slowness (options.pressDelayMs), not a wait of the test.
    if (options.pressDelayMs) await new Promise((r) => setTimeout(r, options.pressDelayMs));
    const card = event.messageRef ?? "";
    resolved.push(event.updateId);
    if (decided.has(card)) return { status: "handled", notice: "This request was already answered." };
    decided.add(card);
    return { status: "handled" };
  };
  return { sink, events, resolved };
}

async function until<T>(probe: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const open: { fake: FakeDiscord; channel: DiscordChannel }[] = [];
afterEach(async () => {
  for (const { fake, channel } of open.splice(0)) {
    await channel.stop();
    await fake.close();
  }
});

async function setup(options: { groups?: (fake: FakeDiscord) => string[]; sink?: InboundSink; token?: string } = {}) {
  const fake = new FakeDiscord();
  await fake.start();
  const groups = options.groups?.(fake) ?? [];
  const channel = createDiscordChannel({ token: options.token ?? fake.token, apiUrl: fake.apiUrl, groups, logger, restRetries: 0 });
  open.push({ fake, channel });
  const recorder = coreLikeSink();
  await channel.start(options.sink ?? recorder.sink);
  return { fake, channel, ...recorder };
}

describe("Discord channel over the real discord.js against a local fake", () => {
  it("logs in with DM intents over JSON without compression; a bad token names the setting, not the value", async () => {
    const { fake } = await setup();
    expect(fake.gatewayQueries[0]).toContain("encoding=json");
    expect(fake.gatewayQueries[0]).not.toContain("compress");
    const intents = fake.identifies[0]!.intents;
    expect(intents & (1 << 12)).not.toBe(0); // DIRECT_MESSAGES
    expect(intents & (1 << 15)).not.toBe(0); // MESSAGE_CONTENT

    const other = new FakeDiscord();
    await other.start();
    const wrong = "wrong.token.value-that-must-not-leak";
    const bad = createDiscordChannel({ token: wrong, apiUrl: other.apiUrl, logger });
    const failure = await bad.start(async () => ({ status: "accepted" })).catch((e: unknown) => e as Error);
    await other.close();
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain("DISCORD_BOT_TOKEN");
    expect((failure as Error).message).not.toContain(wrong);
  });

  it("D1: a fresh process receives a first DM from a stranger and the reply lands in that DM", async () => {
    const { fake, channel, events } = await setup();
    const { id, channelId } = fake.sendDm(ada, "hello, are you there?");
    const event = await until(() => events.find((e) => e.updateId === id));
    expect(event).toMatchObject({ channel: "discord", kind: "message", accountId: ada.id, address: channelId, displayName: "Ada L.", text: "hello, are you there?" });

    const receipt = await send(channel, { accountId: ada.id, address: event.address }, { text: "Yes — **here**.", buttons: [] });
    expect(receipt.platformIds).toHaveLength(1);
    expect(fake.messagesIn(channelId).map((m) => m.content)).toEqual(["Yes — **here**."]);

    await channel.typing({ accountId: ada.id, address: channelId });
    expect(fake.calls.some((c) => c.method === "POST" && c.path === `/v10/channels/${channelId}/typing`)).toBe(true);
  });

  it("sends a message's files as Discord attachments after its text; files alone send no empty message", async () => {
    const { fake, channel, events } = await setup();
    const { channelId } = fake.sendDm(ada, "send me the screenshot");
    const event = await until(() => events[0]);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 9, 9]);
    const receipt = await send(channel, 
      { accountId: ada.id, address: event.address },
      { text: "Here it is.", buttons: [], attachments: [{ id: "art_1" as never, name: "shot.png", mimeType: "image/png", bytes: png }] },
    );
    const sent = fake.messagesIn(channelId);
    expect(sent.map((m) => m.content)).toEqual(["Here it is.", ""]);
    expect(sent[1]!.attachments).toEqual([{ filename: "shot.png", bytes: png }]);
    expect(receipt.platformIds).toEqual(sent.map((m) => m.id));
    await send(channel, { accountId: ada.id, address: event.address }, { text: "", buttons: [], attachments: [{ id: "art_2" as never, name: "a.pdf", mimeType: "application/pdf", bytes: Buffer.from("%PDF") }] });
    expect(fake.messagesIn(channelId)).toHaveLength(3);
    expect(fake.messagesIn(channelId)[2]!.attachments.map((a) => a.filename)).toEqual(["a.pdf"]);
  });

  it("DM round trip: a long markdown reply is split ≤ 2,000 characters, in order, buttons only on the last part", async () => {
    const { fake, channel, events } = await setup();
    const { channelId } = fake.sendDm(ada, "write me a lot");
    await until(() => events.length === 1);
    const code = Array.from({ length: 120 }, (_, i) => `console.log("line ${i}");`).join("\n");
    const prose = Array.from({ length: 60 }, (_, i) => `Paragraph ${i} has **bold words** and a [link](https://example.com/${i}).`).join("\n\n");
    const text = `${prose}\n\n\`\`\`js\n${code}\n\`\`\`\n\nDone.`;
    const buttons = [{ id: "apr:1:once", label: "Approve once" }, { id: "apr:1:deny", label: "Deny" }];
    const receipt = await send(channel, { accountId: ada.id, address: channelId }, { text, buttons });

    const sent = fake.messagesIn(channelId);
    expect(sent.length).toBeGreaterThan(2);
    expect(receipt.platformIds).toEqual(sent.map((m) => m.id));
    for (const m of sent) {
      expect(m.content.length).toBeLessThanOrEqual(2000);
      expect((m.content.match(/```/g) ?? []).length % 2).toBe(0); // every code block closed in its part
      expect((m.content.match(/\*\*/g) ?? []).length % 2).toBe(0); // no bold run cut in half
    }
    expect(sent.slice(0, -1).every((m) => m.components.length === 0)).toBe(true);
    expect(sent.at(-1)!.components).toEqual([{ type: 1, components: [expect.objectContaining({ custom_id: "apr:1:once", label: "Approve once" }), expect.objectContaining({ custom_id: "apr:1:deny" })] }]);
    const joined = sent.map((m) => m.content).join("\n");
    expect(joined.indexOf("Paragraph 0 ")).toBeLessThan(joined.indexOf("Paragraph 59 "));
    expect(joined.indexOf("line 119")).toBeLessThan(joined.indexOf("Done."));
  });

  it("D2: a press whose handling takes 8 s is acknowledged within 3 s, the card is edited, a second press is harmless", async () => {
    const slow = coreLikeSink({ pressDelayMs: 8000 });
    const { fake, channel } = await setup({ sink: slow.sink });
    const { channelId } = fake.sendDm(ada, "book it");
    await until(() => slow.events.length === 1);
    const target = { accountId: ada.id, address: channelId };
    const card = await send(channel, target, { text: "Book the table for Friday?", buttons: [{ id: "apr:7:once", label: "Approve" }, { id: "apr:7:deny", label: "Deny" }] });
    const cardId = card.platformIds[0]!;

    const first = fake.pressButton(ada, cardId, "apr:7:once");
    const acks = await until(() => fake.acknowledgements().find((a) => a.path.includes(first)));
    expect(acks.afterMs).toBeLessThan(INTERACTION_DEADLINE_MS - 1000);
    expect(fake.calls.find((c) => c.path.includes(first))!.body).toMatchObject({ type: 6 }); // DEFERRED_UPDATE_MESSAGE

    // The core decides after 8 s and edits the card to show the outcome.
    await until(() => slow.events.find((e) => e.updateId === first), 2000);
    await until(() => slow.resolved.includes(first), 10_000);
    await channel.edit(target, card.platformIds, { text: "Book the table for Friday? — **Approved once**", buttons: [] });
    expect(fake.messages.get(cardId)).toMatchObject({ content: "Book the table for Friday? — **Approved once**", components: [] });
    // Link previews stay off on the card when it is sent and when it is edited (SuppressEmbeds = 1 << 2).
    expect(fake.messages.get(cardId)!.flags & 4).toBe(4);

    const second = fake.pressButton(ada, cardId, "apr:7:once");
    await until(() => fake.followUps.length === 1, 12_000);
    expect(fake.acknowledgements().find((a) => a.path.includes(second))!.afterMs).toBeLessThan(INTERACTION_DEADLINE_MS - 1000);
    expect(fake.followUps[0]).toMatchObject({ content: "This request was already answered.", flags: 64 }); // EPHEMERAL
    expect(fake.messages.get(cardId)!.edits).toBe(1);
    const presses = slow.events.filter((e) => e.kind === "press");
    expect(presses.map((p) => p.kind === "press" && [p.updateId, p.buttonId, p.messageRef, p.accountId])).toEqual([
      [first, "apr:7:once", cardId, ada.id],
      [second, "apr:7:once", cardId, ada.id],
    ]);
  }, 30_000);

  it("a press answered after Discord's 3 s window (10062) is logged, never thrown, and still reaches the core", async () => {
    const { fake, channel, events } = await setup();
    const { channelId } = fake.sendDm(ada, "hi");
    await until(() => events.length === 1);
    const card = await send(channel, { accountId: ada.id, address: channelId }, { text: "Go?", buttons: [{ id: "b1", label: "Go" }] });
    // Emulate a stalled event loop: the interaction is dispatched but its window has already passed.
    const realNow = Date.now;
    Date.now = () => realNow() - INTERACTION_DEADLINE_MS - 500;
    const id = fake.pressButton(ada, card.platformIds[0]!, "b1");
    Date.now = realNow;
    await until(() => events.find((e) => e.updateId === id));
    expect(fake.calls.filter((c) => c.path.includes(`/interactions/${id}/`))).toHaveLength(1);
    expect(fake.followUps).toHaveLength(0);
  });

  it("T6-like refusals say the recipient is gone, bad payloads are rejected, and the process keeps serving others", async () => {
    const { fake, channel, events } = await setup();
    const a = fake.sendDm(ada, "hi");
    const b = fake.sendDm(bob, "hey");
    await until(() => events.length === 2);
    fake.block(ada.id);
    const blocked = await send(channel, { accountId: ada.id, address: a.channelId }, { text: "Proactive note", buttons: [] }).catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(DeliveryError);
    expect(blocked).toMatchObject({ outcome: "recipient_gone" });
    expect((blocked as Error).message).toContain("50007");

    const gone = await send(channel, { accountId: "x", address: snowflake() }, { text: "hello", buttons: [] }).catch((e: unknown) => e);
    expect(gone).toMatchObject({ outcome: "recipient_gone" });
    expect((gone as Error).message).toContain("10003");

    const tooMany = await send(channel, { accountId: bob.id, address: b.channelId }, { text: "pick", buttons: Array.from({ length: 26 }, (_, i) => ({ id: `o${i}`, label: `${i}` })) }).catch((e: unknown) => e);
    expect(tooMany).toMatchObject({ outcome: "payload_rejected" });
    const badId = await send(channel, { accountId: bob.id, address: b.channelId }, { text: "pick", buttons: [{ id: "x".repeat(101), label: "x" }] }).catch((e: unknown) => e);
    expect(badId).toMatchObject({ outcome: "payload_rejected" });

    const ok = await send(channel, { accountId: bob.id, address: b.channelId }, { text: "Your reminder", buttons: [] });
    expect(fake.messages.get(ok.platformIds[0]!)?.content).toBe("Your reminder");
    expect(fake.messagesIn(a.channelId)).toHaveLength(0);
  });

  it("a Discord 50035 refusal (e.g. an over-long edit) maps to a rejected payload; a sent payload never exceeds the limit", async () => {
    const { fake, channel, events } = await setup();
    const { channelId } = fake.sendDm(ada, "hi");
    await until(() => events.length === 1);
    const sent = await send(channel, { accountId: ada.id, address: channelId }, { text: "short", buttons: [] });
    const edited = await channel.edit({ accountId: ada.id, address: channelId }, sent.platformIds, { text: "y ".repeat(1500), buttons: [] }).catch((e: unknown) => e);
    expect(edited).toMatchObject({ outcome: "payload_rejected" });
    const unknown = await channel.edit({ accountId: ada.id, address: channelId }, [snowflake()], { text: "z", buttons: [] }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ outcome: "payload_rejected" });
    expect((unknown as Error).message).toContain("10008");
    expect(fake.calls.filter((c) => c.method === "POST" && c.path.endsWith("/messages")).every((c) => ((c.body as { content?: string }).content ?? "").length <= 2000)).toBe(true);
  });

  it("guild messages reach the core only from ALLOW_GROUPS channels and only when the bot is mentioned (mention stripped)", async () => {
    let allowed = "";
    let other = "";
    const { fake, events } = await setup({
      groups: (f) => {
        allowed = snowflake();
        other = snowflake();
        f.addGuild([allowed, other]);
        return [allowed];
      },
    });
    fake.sendGuildMessage(allowed, bob, "chatter without mention", false);
    fake.sendGuildMessage(other, bob, "mention in a channel not listed", true);
    const id = fake.sendGuildMessage(allowed, bob, "what's on today?", true);
    const event = await until(() => events.find((e) => e.updateId === id));
    expect(event).toMatchObject({ accountId: bob.id, address: bob.id, text: "what's on today?" });
    // A fixed wait on purpose: it asserts that NO other message reaches the sink meanwhile.
    await new Promise((r) => setTimeout(r, 200));
    expect(events).toHaveLength(1);
  });
});

describe("Discord markdown rendering", () => {
  it("adapts what Discord does not render and escapes literal markdown", () => {
    const [out] = renderDiscordMessages("#### Small\n\n__bold__ a_b*c\n\n| k | v |\n|---|---|\n| a | 1 |\n\n![chart](https://x.io/c.png)");
    expect(out).toContain("**Small**");
    expect(out).toContain("**bold** a\\_b\\*c");
    expect(out).toContain("```\nk | v\n");
    expect(out).toContain("[chart](https://x.io/c.png)");
  });
});
