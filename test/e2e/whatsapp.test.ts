import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Poll } from "whatsapp-web.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWhatsAppChannel } from "../../bots/whatsapp/channel.js";
import { FakeWhatsAppLibrary, type FakeWhatsAppClient, type SentRecord } from "../fakes/whatsapp-client.js";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type FakeScriptItem } from "../fakes/openai-server.js";
import { settled, startTestApp, type TestApp } from "../helpers/app.js";
import { isWake, recordingServer, sleep, until, userTexts } from "../helpers/e2e.js";

/**
 * The whole core with the WhatsApp adapter. whatsapp-web.js drives WhatsApp Web in Chromium and
 * cannot run here, so the channel gets the fake client (test/fakes/whatsapp-client.ts) through the
 * composition root's `configure` hook; everything else — settings, ALLOW_FROM, the core, Sentinel,
 * the outbox, the scheduler, the model over HTTP — is the real app.
 */

const ADA = "15550001@c.us";
const ADA_ACCOUNT = "+15550001";

const isPoll = (s: SentRecord): boolean => typeof s.content !== "string";

describe("WhatsApp end to end: the whole core with the WhatsApp adapter on the fake client", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let library: FakeWhatsAppLibrary;
  let page: Awaited<ReturnType<typeof recordingServer>>;

  beforeEach(async () => {
    library = new FakeWhatsAppLibrary();
    page = await recordingServer("<html><body><h1>Cheap flights</h1><p>Lisbon €89 on Friday.</p></body></html>");
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    await model?.close();
    model = null;
    await page.close();
  });

  /** Starts the app with the WhatsApp channel on the fake library and brings the session up (restored LocalAuth). */
  async function start(fallback: FakeScriptItem): Promise<FakeWhatsAppClient> {
    model = await startFakeOpenAI({ fallback });
    const dataDir = mkdtempSync(join(tmpdir(), "familiar-e2e-wa-"));
    app = await startTestApp(
      { DATA_DIR: dataDir, OPENAI_BASE_URL: model.url, ALLOW_FROM: `whatsapp:${ADA_ACCOUNT}`, PRIVATE_HOSTS_ALLOWED: page.hostPort },
      {
        configure: (familiar) =>
          familiar.addChannel(createWhatsAppChannel({ dataDir, chromiumPath: "/usr/bin/chromium", library, logger: familiar.deps.logger.child({ channel: "whatsapp" }) })),
      },
    );
    const client = library.last;
    expect(client.initialized).toBe(true);
    client.pair();
    return client;
  }

  /** Text messages Familiar sent to a chat (not polls), oldest first. */
  const textsTo = (client: FakeWhatsAppClient, chat: string) => client.sent.filter((s) => s.chatId === chat && !isPoll(s)).map((s) => s.content as string);

  it("a whole conversation: an allowed number's messages become one person's conversation, replies are rendered for WhatsApp", async () => {
    const client = await start((r) => {
      if (r.lastUserText?.startsWith("Hi")) return text("#### Hello Ada\n\n**Nice** to meet you. Say hi to ~~Mia~~ Mia!");
      return text("Your daughter is **Mia**.");
    });
    client.receive(ADA, "Hi, I'm Ada. My daughter is Mia.", { pushname: "Ada W." });
    await until(() => textsTo(client, ADA).length === 1, "the first reply");
    // WhatsApp's own markers: *bold*, ~strike~; headings become bold lines.
    expect(textsTo(client, ADA)).toEqual(["*Hello Ada*\n\n*Nice* to meet you. Say hi to ~Mia~ Mia!"]);
    expect(client.typing).toContain(ADA);
    const identity = await app!.store.persons.findIdentity("whatsapp", ADA_ACCOUNT);
    expect(identity).toMatchObject({ channel: "whatsapp", accountId: ADA_ACCOUNT, address: ADA });
    expect((await app!.store.persons.getPerson(identity!.personId))!.displayName).toBe("Ada W.");

    client.receive(ADA, "What's my daughter's name?");
    await until(() => textsTo(client, ADA).length === 2, "the second reply");
    expect(textsTo(client, ADA)[1]).toBe("Your daughter is *Mia*.");
    expect(model!.requests).toHaveLength(2);
    const seen = userTexts(model!.requests[1]!);
    expect(seen).toContain("Hi, I'm Ada. My daughter is Mia.");
    expect(seen.at(-1)).toBe("What's my daughter's name?");
  });

  it("approval round trips: a card as text with numbered replies plus a native poll, answered by a poll vote and then by a numbered reply", async () => {
    const answer = "The deals page says: Lisbon €89 on Friday.";
    const client = await start((r) => {
      const last = r.messages.at(-1);
      if (last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:")) {
        if (/approved/.test(last.content)) return toolCall("http_fetch", { url: `${page.url}/deals` });
        return text("Understood, I did not fetch it.");
      }
      if (last?.role === "tool") {
        const result = String(last.content);
        if (result.includes("approval_required")) return text("I need your OK first.");
        return text(result.includes("Lisbon") ? answer : `unexpected: ${result.slice(0, 80)}`);
      }
      return toolCall("http_fetch", { url: `${page.url}/deals` });
    });

    // 1. Answered by a poll vote.
    client.receive(ADA, "what's on the flight deals page?");
    const poll = await until(() => client.sent.find(isPoll), "the approval poll");
    await until(() => textsTo(client, ADA).includes("I need your OK first."), "the model's message");
    const cardText = client.sent[client.sent.indexOf(poll) - 1]!;
    expect(cardText.content).toContain("Familiar wants to *read*");
    expect(cardText.content).toContain(`${page.url}/deals`);
    expect(cardText.content).toMatch(/Reply 1 for Approve once, 2 for .*Deny\.$/);
    const options = (poll.content as Poll).pollOptions.map((o) => o.name);
    expect(options[0]).toBe("Approve once");
    expect(options.at(-1)).toBe("Deny");
    expect((poll.content as Poll).pollName).toContain("Familiar wants to read");
    expect(page.received).toHaveLength(0);

    client.vote(poll.id, ADA, [0]);
    // WhatsApp has no transient feedback: the notice is a reply quoting the poll.
    await until(() => client.sent.find((s) => s.content === "Approved once."), "the notice");
    expect(client.sent.find((s) => s.content === "Approved once.")).toMatchObject({ chatId: ADA, options: { quotedMessageId: poll.id } });
    // The card's text is edited to show the decision.
    const edit = await until(() => client.edits.find((e) => e.id === cardText.id), "the card edit");
    expect(edit.content).toContain("Approved once via WhatsApp");
    expect(edit.content).not.toContain("Reply 1 for");
    await until(() => textsTo(client, ADA).includes(answer), "the resumed task's reply");
    expect(page.received).toEqual([{ method: "GET", path: "/deals" }]);

    // Voting again on the decided card (un-select, select) is harmless: a notice, no second run.
    const requestsBefore = model!.requests.length;
    client.vote(poll.id, ADA, []);
    client.vote(poll.id, ADA, [0]);
    await until(() => client.sent.find((s) => s.content === "This request was already approved."), "the already-answered notice");
    await sleep(500);
    expect(page.received).toHaveLength(1);
    expect(model!.requests).toHaveLength(requestsBefore);
    expect(textsTo(client, ADA).filter((t) => t === answer)).toHaveLength(1);

    // 2. The once-grant is used up: the next fetch asks again and is answered by a numbered reply.
    client.receive(ADA, "check the deals again");
    const secondPoll = await until(() => client.sent.filter(isPoll)[1], "the second poll");
    const secondCard = client.sent[client.sent.indexOf(secondPoll) - 1]!;
    await until(() => textsTo(client, ADA).filter((t) => t === "I need your OK first.").length === 2, "the second ask");
    expect(page.received).toHaveLength(1);
    client.receive(ADA, "1");
    await until(() => client.edits.find((e) => e.id === secondCard.id), "the second card's edit");
    expect(client.sent.filter((s) => s.content === "Approved once.").at(-1)).toMatchObject({ options: { quotedMessageId: secondPoll.id } });
    await until(() => textsTo(client, ADA).filter((t) => t === answer).length === 2, "the second resumed reply");
    expect(page.received).toEqual([{ method: "GET", path: "/deals" }, { method: "GET", path: "/deals" }]);
    // The "1" was an answer to the card, never a message in the conversation.
    expect(model!.requests.every((r) => !userTexts(r).includes("1"))).toBe(true);
    const identity = (await app!.store.persons.findIdentity("whatsapp", ADA_ACCOUNT))!;
    expect(await app!.store.approvals.listPendingApprovals(identity.personId)).toHaveLength(0);
  }, 40_000);

  it("a proactive message: a reminder arrives in the WhatsApp chat without the person writing again", async () => {
    const client = await start((r) => {
      if (isWake(r, "stretch")) return text("Time to **stretch**!");
      if (r.messages.at(-1)?.role === "tool") return text("Okay — I'll remind you in 3 seconds.");
      return toolCall("schedule_wakeup", { note: "stretch", at: new Date(Date.now() + 3_000).toISOString(), notify: "always" });
    });
    client.receive(ADA, "remind me in 3 seconds to stretch");
    await until(() => textsTo(client, ADA).length === 1, "the confirmation");
    expect(textsTo(client, ADA)).toEqual(["Okay — I'll remind you in 3 seconds."]);
    const before = model!.requests.length;
    await until(() => textsTo(client, ADA).length === 2, "the reminder", 20_000);
    expect(textsTo(client, ADA)[1]).toBe("Time to *stretch*!");
    expect(model!.requests.slice(before).some((r) => isWake(r, "stretch"))).toBe(true);
    expect(client.sent.at(-1)!.options?.quotedMessageId).toBeUndefined(); // a new message, not a reply
    // Nothing more is due or running: a second reminder would have been sent by now.
    await settled(app!);
    expect(textsTo(client, ADA).filter((t) => t.includes("stretch"))).toHaveLength(1);
  }, 30_000);
});
