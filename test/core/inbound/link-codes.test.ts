/**
 * LinkCodes on its own (core/inbound/links.ts), on a SQLite store: codes are random, work once and
 * expire; a claimed code not used goes back; redeeming attaches an unknown account, tells an account
 * already linked so, never takes another person's account without `move`, and with `move` moves it
 * (the person left without an account is paused). Every link is audited.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../../core/channels/port.js";
import { CODE_ALPHABET, LINK_CODE_LENGTH, LINK_TTL_MS, LinkCodes } from "../../../core/inbound/links.js";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { Person } from "../../../core/persons/index.js";

describe("LinkCodes", () => {
  let dir: string;
  let store: SqliteStore;
  let now: Date;
  let codes: LinkCodes;
  let ada: Person;

  const message = (accountId: string, text: string): InboundMessage => ({ kind: "message", channel: "telegram", updateId: `u-${accountId}-${text}`, accountId, address: `chat-${accountId}`, text, at: now });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "familiar-link-codes-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    now = new Date("2026-12-01T09:00:00Z");
    codes = new LinkCodes({ store, clock: { now: () => now }, logger: pino({ level: "silent" }) });
    ada = await store.persons.createPerson({ displayName: "Ada" });
    await store.persons.addIdentity({ personId: ada.id, channel: "local", accountId: "ada-local" });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("issues codes of the unambiguous alphabet that work once, in any of the accepted forms", () => {
    const code = codes.issue(ada.id);
    expect(code).toMatch(new RegExp(`^[${CODE_ALPHABET}]{${LINK_CODE_LENGTH}}$`));
    expect(codes.claim("hello")).toBeNull();
    const claim = codes.claim(`/link@FamiliarBot ${code.toLowerCase()} move`);
    expect(claim).toMatchObject({ code, personId: ada.id, move: true });
    expect(codes.claim(code)).toBeNull();
    const plain = codes.issue(ada.id);
    expect(codes.claim(`  ${plain}  `)).toMatchObject({ code: plain, move: false });
  });

  it("expires codes after the TTL, and puts back a released code only while it is valid", () => {
    const code = codes.issue(ada.id);
    const claim = codes.claim(code)!;
    codes.release(claim);
    expect(codes.claim(code)).not.toBeNull();
    const late = codes.issue(ada.id);
    const lateClaim = codes.claim(late)!;
    now = new Date(now.getTime() + LINK_TTL_MS);
    codes.release(lateClaim);
    expect(codes.claim(late)).toBeNull();
    const stale = codes.issue(ada.id);
    now = new Date(now.getTime() + LINK_TTL_MS);
    expect(codes.claim(stale)).toBeNull();
  });

  it("attaches an account Familiar does not know to the code's person, audited", async () => {
    const claim = codes.claim(codes.issue(ada.id))!;
    const answer = await codes.redeem(message("900", claim.code), claim);
    expect(answer?.person.id).toBe(ada.id);
    expect(answer?.text).toMatch(/^Linked!/);
    expect((await store.persons.findIdentity("telegram", "900"))?.personId).toBe(ada.id);
    expect((await store.audit.listAudit(ada.id)).items.map((a) => a.kind)).toContain("identity.linked");
  });

  it("tells an account already linked to the person so, and gives the code back", async () => {
    await store.persons.addIdentity({ personId: ada.id, channel: "telegram", accountId: "900" });
    const claim = codes.claim(codes.issue(ada.id))!;
    const answer = await codes.redeem(message("900", claim.code), claim);
    expect(answer?.text).toMatch(/already linked to you/);
    expect(codes.claim(claim.code)).not.toBeNull();
  });

  it("never takes another person's account without move; with move it moves it and pauses the person left without one", async () => {
    const bo = await store.persons.createPerson({ displayName: "Bo" });
    await store.persons.addIdentity({ personId: bo.id, channel: "telegram", accountId: "901" });
    const claim = codes.claim(codes.issue(ada.id))!;
    const refused = await codes.redeem(message("901", claim.code), claim);
    expect(refused?.person.id).toBe(bo.id);
    expect(refused?.text).toContain(`/link ${claim.code} move`);
    expect((await store.persons.findIdentity("telegram", "901"))?.personId).toBe(bo.id);

    const moving = codes.claim(`/link ${claim.code} move`)!;
    const moved = await codes.redeem(message("901", `/link ${claim.code} move`), moving);
    expect(moved?.person.id).toBe(ada.id);
    expect((await store.persons.findIdentity("telegram", "901"))?.personId).toBe(ada.id);
    expect((await store.persons.getPerson(bo.id))?.paused).toBe(true);
    expect((await store.audit.listAudit(bo.id)).items.map((a) => a.kind)).toContain("identity.moved");
  });

  it("answers nobody when the code's person is gone and the sender is unknown", async () => {
    const claim = { code: "ABCDEF", personId: "person_gone" as Person["id"], expiresAt: now.getTime() + 1000, move: false };
    expect(await codes.redeem(message("902", "ABCDEF"), claim)).toBeNull();
    expect(await store.persons.findIdentity("telegram", "902")).toBeNull();
  });
});
