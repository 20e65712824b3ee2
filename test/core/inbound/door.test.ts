/**
 * Door on its own (core/inbound/door.ts), on a SQLite store: who the owner is (OWNER entries; the
 * local chat on this machine, but not a web account named by its person id, nor the local chat when
 * it serves other machines), admins, group membership with audited refusals, and `/admin` and
 * `/group` with their permissions.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../../core/channels/port.js";
import { CommandRegistry } from "../../../core/inbound/commands.js";
import { Door } from "../../../core/inbound/door.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ChannelName } from "../../../core/channels/index.js";
import type { Person } from "../../../core/persons/index.js";

describe("Door", () => {
  let dir: string;
  let store: SqliteStore;
  const now = new Date("2026-12-01T09:00:00Z");
  const clock = { now: () => now };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "familiar-door-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function personWith(channel: ChannelName, accountId: string, displayName = accountId): Promise<Person> {
    const person = await store.persons.createPerson({ displayName });
    await store.persons.addIdentity({ personId: person.id, channel, accountId });
    return person;
  }
  const inGroup = (accountId: string, groupId?: string): InboundMessage => ({
    kind: "message",
    channel: "telegram",
    updateId: `u-${accountId}`,
    accountId,
    address: "chat",
    text: "hi",
    at: now,
    ...(groupId !== undefined && { groupId }),
  });

  it("knows the owner by OWNER entries and the local chat on this machine, not by a web account named by a person id", async () => {
    const door = new Door({ store, clock, owners: ["telegram:100"], localIsOwner: true });
    const owner = await personWith("telegram", "100");
    const stranger = await personWith("telegram", "200");
    const local = await personWith("local", "me");
    const webAccount = await personWith("local", "per_0abc");
    expect(await door.isOwner(owner.id)).toBe(true);
    expect(await door.isOwner(stranger.id)).toBe(false);
    expect(await door.isOwner(local.id)).toBe(true);
    expect(await door.isOwner(webAccount.id)).toBe(false);
    const remote = new Door({ store, clock, owners: ["telegram:100"], localIsOwner: false });
    expect(await remote.isOwner(local.id)).toBe(false);
  });

  it("serves everyone it admits outside groups; in a group the owner and the group's members only, auditing refusals", async () => {
    const door = new Door({ store, clock, owners: ["telegram:100"], localIsOwner: false });
    const owner = await personWith("telegram", "100");
    const member = await personWith("telegram", "300");
    const outsider = await personWith("telegram", "400");
    await store.access.addGroupMember({ channel: "telegram", groupId: "-55" }, member.id, now);
    expect(await door.admits(inGroup("400"), outsider)).toBe(true);
    expect(await door.admits(inGroup("100", "-55"), owner)).toBe(true);
    expect(await door.admits(inGroup("300", "-55"), member)).toBe(true);
    expect(await door.admits(inGroup("300", "-66"), member)).toBe(false);
    expect(await door.admits(inGroup("400", "-55"), outsider)).toBe(false);
    const refusals = (await store.audit.listAudit(outsider.id)).items.filter((a) => a.kind === "inbound.refused");
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.data).toMatchObject({ refusal: "not_group_member", groupId: "-55" });
  });

  it("lets only the owner name admins, and the owner or an admin change a group's members", async () => {
    const door = new Door({ store, clock, owners: ["telegram:100"], localIsOwner: false });
    const commands = new CommandRegistry();
    door.registerCommands(commands);
    const owner = await personWith("telegram", "100");
    const helper = await personWith("telegram", "500");
    const friend = await personWith("telegram", "600");
    const run = (name: string, person: Person, args: string) => commands.run(name, { person, args, channel: "telegram", accountId: "x" });

    expect((await run("admin", helper, "add telegram:600")).text).toBe("Only the owner can name admins.");
    expect((await run("group", helper, "add telegram:-55 telegram:600")).text).toMatch(/^Only the owner or an admin/);
    expect((await run("admin", owner, "add telegram:999")).text).toMatch(/don't know telegram:999/);
    expect((await run("admin", owner, "add telegram:500")).text).toBe("telegram:500 is now an admin.");
    expect(await door.isOwnerOrAdmin(helper.id)).toBe(true);
    expect(await door.isOwnerOrAdmin(friend.id)).toBe(false);

    expect((await run("group", helper, "add telegram:-55 telegram:600")).text).toMatch(/^Done: telegram:600 is now served/);
    expect(await door.admits(inGroup("600", "-55"), friend)).toBe(true);
    expect((await run("group", owner, "telegram:-55")).text).toContain(friend.id);
    expect((await run("group", owner, "remove telegram:-55 telegram:600")).text).toMatch(/is no longer served/);
    expect(await door.admits(inGroup("600", "-55"), friend)).toBe(false);
    expect((await run("admin", owner, "remove telegram:500")).text).toBe("telegram:500 is no longer an admin.");
    expect(await door.isOwnerOrAdmin(helper.id)).toBe(false);
  });
});
