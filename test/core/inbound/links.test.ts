import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundEvent, InboundMessage } from "../../../core/channels/port.js";
import { AccessControl } from "../../../core/inbound/pairing.js";
import { CommandRegistry, registerCoreCommands } from "../../../core/inbound/commands.js";
import { InboundHandler } from "../../../core/inbound/handler.js";
import type { Store } from "../../../core/storage/ports.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import { channelNames, type ChannelName } from "../../../core/channels/index.js";
import { type Person } from "../../../core/persons/index.js";

/**
 * /link in every direction and unknown commands, through the real inbound handler, access control
 * and command registry on a SQLite store. The local chat's users become persons on their first
 * message (as the core wires it); messengers need ALLOW_FROM, pairing or a code.
 */
describe("inbound: /link in every direction, unknown commands", () => {
  let dir: string;
  let store: Store;
  let now: Date;
  let answers: { personId: string; channel: ChannelName; text: string }[];
  let turns: string[];
  let handler: InboundHandler;
  let updates = 0;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "familiar-links-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    now = new Date("2026-11-30T10:00:00Z");
    answers = [];
    turns = [];
    const clock = { now: () => now };
    const logger = pino({ level: "silent" });
    const commands = new CommandRegistry();
    registerCoreCommands(commands, { store, clock });
    const access = new AccessControl({ store, clock, logger, allowFrom: ["telegram:900"], channel: () => undefined });
    access.registerCommands(commands);
    handler = new InboundHandler({
      store,
      clock,
      logger,
      commands,
      unknownSender: async (event) => (event.channel === "local" ? localPerson(event) : access.unknownSender(event)),
      turns: { poke: () => void turns.push("poked") },
      outbound: { queue: async (m) => (answers.push({ personId: m.personId, channel: m.channel ?? "local", text: m.text }), { ...m }) as never, wake: () => undefined },
      pressHandlers: () => [],
      links: access.links,
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function localPerson(event: InboundEvent): Promise<Person> {
    const person = await store.persons.createPerson({ displayName: event.displayName ?? event.accountId });
    await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: event.accountId, address: event.address });
    return person;
  }

  const say = (channel: ChannelName, accountId: string, text: string, updateId = `u${++updates}`): Promise<ReturnType<InboundHandler["handle"]> extends Promise<infer T> ? T : never> => {
    const event: InboundMessage = { kind: "message", channel, accountId, address: `addr-${accountId}`, displayName: `user ${accountId}`, updateId, text, at: now };
    return handler.handle(event);
  };
  const personOf = async (channel: ChannelName, accountId: string) => (await store.persons.findIdentity(channel, accountId))?.personId ?? null;
  /** A person with an account on `channel` (and a message of conversation), made the way the core makes them. */
  async function personOn(channel: ChannelName, accountId: string): Promise<Person> {
    const person = await store.persons.createPerson({ displayName: `owner ${accountId}` });
    await store.persons.addIdentity({ personId: person.id, channel, accountId });
    await store.conversation.appendMessage({ personId: person.id, role: "user", channel, text: "hello", taskId: null });
    return person;
  }
  async function codeFor(channel: ChannelName, accountId: string): Promise<string> {
    await say(channel, accountId, "/link");
    const shown = answers.at(-1)!.text;
    return /([A-Z0-9]{6})\s*$/.exec(shown)![1]!;
  }

  it("a code made on a messenger is used from the local chat: the local account joins that person (no 'already linked')", async () => {
    const tg = await personOn("telegram", "42");
    const code = await codeFor("telegram", "42");
    expect(await say("local", "ana", `/link ${code}`)).toEqual({ status: "handled" });
    expect(await personOf("local", "ana")).toBe(tg.id);
    expect(answers.at(-1)).toMatchObject({ personId: tg.id, channel: "local", text: expect.stringMatching(/^Linked!/) });
    // The code is not conversation: no turn, nothing appended; no extra person was made for the local account.
    expect(turns).toEqual([]);
    expect(await store.conversation.lastSeq(tg.id)).toBe(1);
    expect((await store.persons.listPersons()).items).toHaveLength(1);
    // From now on the local chat talks in the Telegram person's conversation.
    expect(await say("local", "ana", "hi from the browser")).toEqual({ status: "accepted" });
    expect((await store.conversation.listRecentMessages(tg.id, 5)).map((m) => [m.channel, m.text])).toEqual([
      ["telegram", "hello"],
      ["local", "hi from the browser"],
    ]);
  });

  it("works from any channel to any other, as `/link CODE` or the bare code", async () => {
    let n = 0;
    for (const from of channelNames) {
      for (const to of channelNames) {
        if (from === to) continue;
        n++;
        const owner = await personOn(from, `owner-${n}`);
        const code = await codeFor(from, `owner-${n}`);
        const outcome = await say(to, `new-${n}`, n % 2 ? code.toLowerCase() : `/link ${code}`);
        expect(outcome, `${from} → ${to}`).toEqual({ status: "handled" });
        expect(await personOf(to, `new-${n}`), `${from} → ${to}`).toBe(owner.id);
        expect(answers.at(-1)?.text, `${from} → ${to}`).toMatch(/^Linked!/);
      }
    }
    expect(turns).toEqual([]);
  });

  it("an ALLOW_FROM account whose first message is a code joins the code's person instead of becoming a new one", async () => {
    const owner = await personOn("slack", "U1");
    const code = await codeFor("slack", "U1");
    expect(await say("telegram", "900", code)).toEqual({ status: "handled" });
    expect(await personOf("telegram", "900")).toBe(owner.id);
    expect((await store.persons.listPersons()).items).toHaveLength(1);
  });

  it("a code used on an account that belongs to another person explains what to do; `move` then moves it", async () => {
    const ana = await personOn("telegram", "42");
    const bob = await personOn("discord", "77");
    const code = await codeFor("telegram", "42");
    expect(await say("discord", "77", code)).toEqual({ status: "handled" });
    expect(await personOf("discord", "77")).toBe(bob.id); // never taken silently
    const explained = answers.at(-1)!;
    expect(explained.personId).toBe(bob.id);
    expect(explained.text).toMatch(/already has its own conversation/);
    expect(explained.text).toContain(`/link ${code} move`);
    expect(turns).toEqual([]);

    // The code still works; the confirmed move hands the account over and pauses Bob's background work (no account left).
    expect(await say("discord", "77", `/link ${code} move`)).toEqual({ status: "handled" });
    expect(await personOf("discord", "77")).toBe(ana.id);
    expect(answers.at(-1)).toMatchObject({ personId: ana.id, text: expect.stringMatching(/^Linked!/) });
    expect((await store.persons.getPerson(bob.id))!.paused).toBe(true);
    expect((await store.audit.listAudit(bob.id)).items.map((e) => e.kind)).toContain("identity.moved");
    expect((await store.audit.listAudit(ana.id)).items.map((e) => e.kind)).toContain("identity.linked");
    // Used once.
    expect(await say("slack", "U9", code)).toEqual({ status: "ignored" });
    expect(await personOf("slack", "U9")).toBeNull();
  });

  it("a code sent back from the account that made it says so and stays valid", async () => {
    const ana = await personOn("whatsapp", "+1555");
    const code = await codeFor("whatsapp", "+1555");
    await say("whatsapp", "+1555", code);
    expect(answers.at(-1)).toMatchObject({ personId: ana.id, text: expect.stringMatching(/already linked to you/) });
    await say("slack", "U5", code);
    expect(await personOf("slack", "U5")).toBe(ana.id);
  });

  it("a redelivered code message is a duplicate; an expired code is not a link", async () => {
    const ana = await personOn("telegram", "42");
    const code = await codeFor("telegram", "42");
    expect(await say("slack", "U1", code, "same-update")).toEqual({ status: "handled" });
    expect(await say("slack", "U1", code, "same-update")).toEqual({ status: "duplicate" });
    expect(await personOf("slack", "U1")).toBe(ana.id);

    const late = await codeFor("telegram", "42");
    now = new Date(now.getTime() + 11 * 60_000);
    expect(await say("discord", "D1", late)).toEqual({ status: "ignored" }); // a stranger: pairing, not a link
    expect(await personOf("discord", "D1")).toBeNull();
  });

  it("answers unknown /commands with the help text instead of sending them to the model", async () => {
    await personOn("telegram", "42");
    expect(await say("telegram", "42", "/frobnicate now please")).toEqual({ status: "handled" });
    expect(await say("telegram", "42", "/Weather@familiar_bot")).toEqual({ status: "handled" });
    expect(turns).toEqual([]);
    for (const a of answers.slice(-2)) {
      expect(a.text).toMatch(/don't know the command/);
      expect(a.text).toContain("/help");
      expect(a.text).toContain("/memory");
    }
    // Text that only starts with a slash is conversation.
    expect(await say("telegram", "42", "/etc/hosts is broken")).toEqual({ status: "accepted" });
    expect(await say("telegram", "42", "/ shrug")).toEqual({ status: "accepted" });
    expect(turns).toHaveLength(2);
  });
});
