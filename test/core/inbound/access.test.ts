import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChannelAdapter, InboundMessage } from "../../../core/channels/port.js";
import { AccessControl } from "../../../core/inbound/pairing.js";
import { CommandRegistry } from "../../../core/inbound/commands.js";
import type { Store } from "../../../core/storage/ports.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ChannelName } from "../../../core/channels/index.js";
import type { Person } from "../../../core/persons/index.js";

describe("who may talk: ALLOW_FROM, pairing codes, /link", () => {
  let dir: string;
  let store: Store;
  let now: Date;
  let sent: { channel: ChannelName; address: string; text: string }[];
  let access: AccessControl;
  let commands: CommandRegistry;

  const adapter = (channel: ChannelName): ChannelAdapter => ({
    channel,
    resend: "idempotent",
    start: async () => undefined,
    stop: async () => undefined,
    render: (content) => [{ body: content.text, plain: content.text, buttons: false }],
    sendPart: async (target, part) => {
      sent.push({ channel, address: target.address, text: part.plain });
      return "1";
    },
  });
  const msg = (channel: ChannelName, accountId: string, text: string): InboundMessage => ({
    kind: "message",
    channel,
    accountId,
    address: `chat-${accountId}`,
    displayName: `user ${accountId}`,
    updateId: `${Math.random()}`,
    text,
    at: now,
  });
  const run = (person: Person, line: string) => {
    const parsed = commands.parse(line)!;
    return commands.run(parsed.name, { person, args: parsed.args, channel: "local", accountId: "owner" });
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "familiar-access-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    now = new Date("2026-11-30T10:00:00Z");
    sent = [];
    access = new AccessControl({ store, clock: { now: () => now }, logger: pino({ level: "silent" }), allowFrom: ["telegram:111", "whatsapp:+15550001"], channel: adapter });
    commands = new CommandRegistry();
    access.registerCommands(commands);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lets ALLOW_FROM identities in as persons on their first message, and nobody else", async () => {
    const person = await access.unknownSender(msg("telegram", "111", "hi"));
    expect(person?.displayName).toBe("user 111");
    expect((await store.persons.findIdentity("telegram", "111"))?.personId).toBe(person!.id);
    expect(await access.unknownSender(msg("telegram", "222", "hi"))).toBeNull();
    expect(await store.persons.findIdentity("telegram", "222")).toBeNull();
  });

  it("gives a stranger one pairing code, at most three pending per messenger, and pairs on /pair", async () => {
    await access.unknownSender(msg("slack", "U1", "hello"));
    await access.unknownSender(msg("slack", "U1", "hello again"));
    expect(sent).toHaveLength(1);
    const code = /pairing code is ([A-Z0-9]{8})/.exec(sent[0]!.text)![1]!;
    await access.unknownSender(msg("slack", "U2", "x"));
    await access.unknownSender(msg("slack", "U3", "x"));
    await access.unknownSender(msg("slack", "U4", "x"));
    expect(sent.filter((s) => s.text.includes("pairing code"))).toHaveLength(3);
    await access.unknownSender(msg("discord", "D1", "x"));
    expect(sent.filter((s) => s.channel === "discord")).toHaveLength(1);

    const owner = await store.persons.createPerson({ displayName: "Owner" });
    expect((await run(owner, "/pair WRONGCODE")).text).toMatch(/No such code/);
    expect((await run(owner, `/pair ${code}`)).text).toMatch(/Paired user U1/);
    const identity = await store.persons.findIdentity("slack", "U1");
    expect(identity).not.toBeNull();
    expect(identity!.personId).not.toBe(owner.id);
    expect(sent.at(-1)).toMatchObject({ channel: "slack", address: "chat-U1", text: expect.stringContaining("paired") });
    expect((await run(owner, `/pair ${code}`)).text).toMatch(/No such code/);
  });

  it("expires pairing codes after an hour", async () => {
    await access.unknownSender(msg("slack", "U1", "hello"));
    const code = /pairing code is ([A-Z0-9]{8})/.exec(sent[0]!.text)![1]!;
    now = new Date(now.getTime() + 61 * 60_000);
    const owner = await store.persons.createPerson({ displayName: "Owner" });
    expect((await run(owner, `/pair ${code}`)).text).toMatch(/No (such code|pairing requests)/);
    expect(await store.persons.findIdentity("slack", "U1")).toBeNull();
  });

  it("joins another messenger's account to the same person with a /link code", async () => {
    const ana = await store.persons.createPerson({ displayName: "Ana" });
    await store.persons.addIdentity({ personId: ana.id, channel: "local", accountId: "ana" });
    const shown = (await run(ana, "/link")).text;
    const code = /([A-Z0-9]{6})\s*$/.exec(shown)![1]!;
    expect(await access.unknownSender(msg("discord", "D9", code))).toBeNull();
    expect((await store.persons.findIdentity("discord", "D9"))?.personId).toBe(ana.id);
    expect(sent.at(-1)?.text).toMatch(/Linked/);
    // A used code sent as a command is not taken for a link: the answer says how to get a new one.
    expect((await run(ana, `/link ${code}`)).text).toMatch(/no pending code .*Send \/link on the account you already use/);
    // A code works once.
    expect(await access.unknownSender(msg("telegram", "777", code))).toBeNull();
    expect(await store.persons.findIdentity("telegram", "777")).toBeNull();
  });
});
