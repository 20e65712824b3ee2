import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeDiscord, INTERACTION_DEADLINE_MS, snowflake, type FakeUser } from "../fakes/discord-api.js";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type FakeScriptItem } from "../fakes/openai-server.js";
import { settled, startTestApp, type TestApp } from "../helpers/app.js";
import { isWake, recordingServer, sleep, until, userTexts } from "../helpers/e2e.js";

/**
 * The whole product through the real discord.js over real HTTP and WebSocket against the local fake
 * of Discord (test/fakes/discord-api.ts): settings → composition root → gateway → core → outbox →
 * Discord REST, with a scripted model and local page servers.
 */

const ada: FakeUser = { id: snowflake(), username: "ada", global_name: "Ada L." };
const bob: FakeUser = { id: snowflake(), username: "bob" };
const carol: FakeUser = { id: snowflake(), username: "carol", global_name: "Carol" };

describe("Discord end to end: the whole product through discord.js against the local fake", () => {
  let discord: FakeDiscord;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let page: Awaited<ReturnType<typeof recordingServer>>;

  beforeEach(async () => {
    discord = new FakeDiscord();
    await discord.start();
    page = await recordingServer("<html><body><h1>Cheap flights</h1><p>Lisbon €89 on Friday.</p></body></html>");
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
    await discord.close();
    await page.close();
  });

  async function start(fallback: FakeScriptItem, env: Record<string, string> = {}): Promise<TestApp> {
    model = await startFakeOpenAI({ fallback });
    app = await startTestApp({
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      OPENAI_BASE_URL: model.url,
      ALLOW_FROM: `discord:${ada.id}`,
      PRIVATE_HOSTS_ALLOWED: page.hostPort,
      ...env,
    });
    return app;
  }

  /** Text of the messages the bot posted in a DM, oldest first (edits applied). */
  const dm = (user: FakeUser) => discord.messagesIn(discord.dmChannelOf(user)).map((m) => m.content);

  it("a whole conversation: an allowed user's DMs become one person's conversation, replies are rendered for Discord", async () => {
    await start((r) => {
      if (r.lastUserText?.startsWith("Hi")) return text("#### Hello Ada\n\n__Nice__ to meet you. Say hi to Mia!");
      return text(`Your daughter is **Mia**.`);
    });
    const first = discord.sendDm(ada, "Hi, I'm Ada. My daughter is Mia.");
    await until(() => dm(ada).length === 1, "the first reply in Ada's DM");
    // Discord does not render "####" headings or "__bold__" as bold: the reply is adapted.
    expect(dm(ada)).toEqual(["**Hello Ada**\n\n**Nice** to meet you. Say hi to Mia!"]);
    expect(discord.calls.some((c) => c.method === "POST" && c.path === `/v10/channels/${first.channelId}/typing`)).toBe(true);
    const identity = await app!.store.persons.findIdentity("discord", ada.id);
    expect(identity).toMatchObject({ channel: "discord", accountId: ada.id, address: first.channelId });
    expect((await app!.store.persons.getPerson(identity!.personId))!.displayName).toBe("Ada L.");

    discord.sendDm(ada, "What's my daughter's name?");
    await until(() => dm(ada).length === 2, "the second reply");
    expect(dm(ada)[1]).toBe("Your daughter is **Mia**.");
    expect(model!.requests).toHaveLength(2);
    const seen = userTexts(model!.requests[1]!).join("\n");
    expect(seen).toContain("Hi, I'm Ada. My daughter is Mia.");
    expect(seen).toContain("What's my daughter's name?");
    // Nothing was posted with mentions enabled: model text never pings anyone.
    const posts = discord.calls.filter((c) => c.method === "POST" && c.path.endsWith("/messages"));
    expect(posts.every((c) => JSON.stringify((c.body as { allowed_mentions?: unknown }).allowed_mentions) === JSON.stringify({ parse: [] }))).toBe(true);
  });

  it("D2 approval round trip: native buttons, a press acknowledged within 3 s while the follow-up is slow, the card edited, the task resumed once; a second press is harmless", async () => {
    await start(async (r) => {
      const last = r.messages.at(-1);
      if (last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:")) {
        // Approved: repeat the call that asked — slowly, so the follow-up outlasts Discord's 3 s window (D2).
        await sleep(INTERACTION_DEADLINE_MS + 500);
        if (/approved/.test(last.content)) return toolCall("http_fetch", { url: `${page.url}/deals` });
        return text("Understood, I did not fetch it.");
      }
      if (last?.role === "tool") {
        const result = String(last.content);
        if (result.includes("approval_required")) return text("I need your OK first.");
        return text(result.includes("Lisbon") ? "The deals page says: Lisbon €89 on Friday." : `unexpected: ${result.slice(0, 80)}`);
      }
      return toolCall("http_fetch", { url: `${page.url}/deals` });
    });
    const { channelId } = discord.sendDm(ada, "what's on the flight deals page?");
    const card = await until(() => discord.messagesIn(channelId).find((m) => m.components.length > 0), "the approval card");
    await until(() => dm(ada).includes("I need your OK first."), "the model's message");
    // Rendered for Discord: the sentence in words, the destination verbatim.
    expect(card.content).toContain("Familiar wants to **read**");
    expect(card.content).toContain(`${page.url}/deals`);
    expect(page.received).toHaveLength(0);
    // Native Discord buttons: action rows (type 1) of buttons (type 2) with our opaque custom ids.
    const buttons = (card.components as { type: number; components: { type: number; label: string; custom_id: string }[] }[]).flatMap((row) => {
      expect(row.type).toBe(1);
      return row.components;
    });
    expect(buttons.every((b) => b.type === 2 && b.custom_id.startsWith("ap:"))).toBe(true);
    expect(buttons.map((b) => b.label)).toEqual(expect.arrayContaining(["Approve once", "Deny"]));
    const approve = buttons.find((b) => b.label === "Approve once")!;

    const first = discord.pressButton(ada, card.id, approve.custom_id);
    const ack = await until(() => discord.acknowledgements().find((a) => a.path.includes(first)), "the interaction callback");
    expect(ack.afterMs).toBeLessThan(INTERACTION_DEADLINE_MS);
    expect(discord.calls.find((c) => c.path.includes(`/interactions/${first}/`))!.body).toMatchObject({ type: 6 }); // DEFERRED_UPDATE_MESSAGE
    await until(() => discord.followUps.length === 1, "the ephemeral notice");
    expect(discord.followUps[0]).toMatchObject({ content: "Approved once.", flags: 64 });
    // The card shows the decision and its buttons are gone.
    await until(() => discord.messages.get(card.id)!.edits > 0, "the card edit");
    expect(discord.messages.get(card.id)!.content).toContain("Approved once via Discord");
    expect(discord.messages.get(card.id)!.components).toEqual([]);
    expect(dm(ada)).not.toContain("The deals page says: Lisbon €89 on Friday."); // the follow-up is still running
    // The task resumes: the page is fetched once and the answer arrives in the DM.
    await until(() => dm(ada).includes("The deals page says: Lisbon €89 on Friday."), "the resumed task's reply");
    expect(page.received).toEqual([{ method: "GET", path: "/deals" }]);

    const requestsBefore = model!.requests.length;
    const messagesBefore = discord.messagesIn(channelId).length;
    const second = discord.pressButton(ada, card.id, approve.custom_id);
    await until(() => discord.followUps.length === 2, "the notice for the second press");
    expect(discord.acknowledgements().find((a) => a.path.includes(second))!.afterMs).toBeLessThan(INTERACTION_DEADLINE_MS);
    expect(discord.followUps[1]).toMatchObject({ content: "This request was already approved.", flags: 64 });
    await sleep(700);
    expect(page.received).toHaveLength(1);
    expect(model!.requests).toHaveLength(requestsBefore);
    expect(discord.messagesIn(channelId)).toHaveLength(messagesBefore);
    expect(discord.messages.get(card.id)!.content).toContain("Approved once via Discord");
    expect(discord.messages.get(card.id)!.components).toEqual([]);
  }, 30_000);

  it("a proactive message: a reminder scheduled in a DM arrives in that DM without the user writing again", async () => {
    await start((r) => {
      if (isWake(r, "stretch")) return text("Time to **stretch**!");
      if (r.messages.at(-1)?.role === "tool") return text("Okay — I'll remind you in 3 seconds.");
      return toolCall("schedule_wakeup", { note: "stretch", at: new Date(Date.now() + 3_000).toISOString(), notify: "always" });
    });
    const { channelId } = discord.sendDm(ada, "remind me in 3 seconds to stretch");
    await until(() => dm(ada).length === 1, "the confirmation");
    expect(dm(ada)).toEqual(["Okay — I'll remind you in 3 seconds."]);
    const inboundBefore = model!.requests.length;
    await until(() => dm(ada).length === 2, "the reminder", 20_000);
    expect(dm(ada)[1]).toBe("Time to **stretch**!");
    // It was Familiar's own initiative: a wake-up activation, a new message (not an edit) in the same DM.
    expect(model!.requests.slice(inboundBefore).some((r) => isWake(r, "stretch"))).toBe(true);
    expect(discord.messagesIn(channelId)[1]!.edits).toBe(0);
    // Nothing more is due or running: a second reminder would have been sent by now.
    await settled(app!);
    expect(dm(ada).filter((t) => t.includes("stretch"))).toHaveLength(1);
  }, 30_000);

  it("pairing: a stranger gets a one-time code and nothing reaches the model until the owner sends /pair from the local chat", async () => {
    await start((r) => text(`Hello ${r.lastUserText?.includes("hello again") ? "again" : "?"}`));
    discord.sendDm(bob, "hello? who are you");
    await until(() => dm(bob).length === 1, "the pairing code");
    const code = /pairing code is ([A-Z0-9]{8})/.exec(dm(bob)[0]!)?.[1];
    expect(code, dm(bob)[0]).toBeDefined();
    expect(dm(bob)[0]).toContain(`/pair ${code}`);
    expect(await app!.store.persons.findIdentity("discord", bob.id)).toBeNull();
    discord.sendDm(bob, "please answer");
    await sleep(500);
    expect(model!.requests).toHaveLength(0);
    expect(dm(bob)).toHaveLength(1); // one code per sender, nothing more

    await app!.say("owner", `/pair ${code}`);
    const [paired] = await app!.replies("owner", 1);
    expect(paired!.text).toBe("Paired bob (discord).");
    await until(() => dm(bob).length === 2, "the paired notice");
    expect(dm(bob)[1]).toBe("You're paired — say hello!");

    discord.sendDm(bob, "hello again");
    await until(() => dm(bob).length === 3, "the model's reply to the paired stranger");
    expect(dm(bob)[2]).toBe("Hello again");
    expect(model!.requests).toHaveLength(1);
    expect(userTexts(model!.requests[0]!)).toEqual(["hello again"]);
  });

  it("/link: a code shown in the local chat, sent from Discord, joins that account to the same person and conversation", async () => {
    await start((r) => text(r.lastUserText?.includes("locker") && r.lastUserText.includes("?") ? "It's 4321." : "Noted."));
    await app!.say("ana", "Remember: my locker code is 4321");
    await app!.replies("ana", 1);
    await app!.say("ana", "/link");
    const replies = await app!.replies("ana", 2);
    const code = /: ([A-Z0-9]{6})$/.exec(replies[1]!.text)?.[1];
    expect(code, replies[1]!.text).toBeDefined();

    discord.sendDm(carol, code!);
    await until(() => dm(carol).length === 1, "the linked notice");
    expect(dm(carol)[0]).toBe("Linked! This discord account now shares your conversation with Familiar.");
    const local = (await app!.store.persons.findIdentity("local", "ana"))!;
    expect((await app!.store.persons.findIdentity("discord", carol.id))?.personId).toBe(local.personId);
    expect(model!.requests).toHaveLength(1); // the code itself is not a turn

    discord.sendDm(carol, "what is my locker code?");
    await until(() => dm(carol).length === 2, "the reply on Discord");
    expect(dm(carol)[1]).toBe("It's 4321.");
    const seen = userTexts(model!.requests.at(-1)!);
    expect(seen).toContain("Remember: my locker code is 4321");
    expect(seen.at(-1)).toBe("what is my locker code?");
    expect((await app!.replies("ana", 2)).map((m) => m.text)).toHaveLength(2); // the answer went to Discord, not the local chat
  });

  it("redelivery: the same DM replayed by the gateway to a restarted process is deduped durably by the core (one turn, one reply)", async () => {
    await start((r) => text(`answer to: ${r.lastUserText}`));
    const dataDir = app!.dataDir;
    const original = discord.sendDm(ada, "book the table for Friday", snowflake());
    await until(() => dm(ada).length === 1, "the first reply");
    expect(dm(ada)).toEqual(["answer to: book the table for Friday"]);

    // The process stops; a new one on the same data connects with an empty cache and the gateway
    // replays the same MESSAGE_CREATE (as after a resume that Discord could not complete).
    await app!.stop();
    app = await startTestApp(
      { DISCORD_BOT_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl, OPENAI_BASE_URL: model!.url, ALLOW_FROM: `discord:${ada.id}`, DATA_DIR: dataDir, LOG_LEVEL: "debug" },
    );
    discord.sendDm(ada, "book the table for Friday", original.id);
    await until(() => app!.logs.some((l) => l.includes("duplicate update dropped")), "the core to see the replay");
    discord.sendDm(ada, "thanks");
    await until(() => dm(ada).length === 2, "the reply to the next message");
    await sleep(500);
    expect(dm(ada)).toEqual(["answer to: book the table for Friday", "answer to: thanks"]);
    expect(model!.requests).toHaveLength(2);
    expect(userTexts(model!.requests[1]!).filter((t) => t === "book the table for Friday")).toHaveLength(1);
  }, 30_000);
});
