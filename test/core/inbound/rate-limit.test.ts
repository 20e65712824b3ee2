import { describe, expect, it } from "vitest";
import type { PersonId } from "../../../core/ids.js";
import { InboundRateLimit, slowDownText } from "../../../core/inbound/rate-limit.js";

const clock = { now: () => new Date("2026-12-02T10:00:00Z") };
const ana = "per_ana" as PersonId;
const bob = "per_bob" as PersonId;
const dm = (account: string) => ({ channel: "telegram" as const, accountId: account, address: account });
const inGroup = (account: string) => ({ channel: "telegram" as const, accountId: account, address: "-100", groupId: "-100" });

describe("InboundRateLimit (issue 18 item 7)", () => {
  it("limits one sender; the first message over the limit notifies, the later ones of the window do not", async () => {
    const limit = new InboundRateLimit({ perSender: 3, perChat: 100, global: 100, windowSeconds: 60 }, clock);
    const verdicts = [];
    for (let i = 0; i < 6; i++) verdicts.push(await limit.check(dm("1"), ana));
    expect(verdicts.slice(0, 3).every((v) => v.allowed)).toBe(true);
    expect(verdicts.slice(3).map((v) => (v.allowed ? "ok" : v.notify))).toEqual([true, false, false]);
    const over = verdicts[3]!;
    if (over.allowed) throw new Error("expected a refusal");
    expect(over.retryAt.getTime()).toBeGreaterThan(clock.now().getTime());
    expect(over.retryAt.getTime()).toBeLessThanOrEqual(clock.now().getTime() + 60_000);
    // Another sender is not slowed by Ana's flood.
    expect((await limit.check(dm("2"), bob)).allowed).toBe(true);
  });

  it("limits one chat across its members, and everyone together", async () => {
    const chat = new InboundRateLimit({ perSender: 100, perChat: 4, global: 100, windowSeconds: 60 }, clock);
    for (let i = 0; i < 4; i++) expect((await chat.check(inGroup(String(i)), i % 2 ? ana : bob)).allowed).toBe(true);
    expect((await chat.check(inGroup("9"), ana)).allowed).toBe(false);
    expect((await chat.check(dm("9"), ana)).allowed).toBe(true);

    const global = new InboundRateLimit({ perSender: 100, perChat: 100, global: 5, windowSeconds: 60 }, clock);
    for (let i = 0; i < 5; i++) expect((await global.check(dm(String(i)), ana)).allowed).toBe(true);
    expect((await global.check(dm("new"), bob)).allowed).toBe(false);
  });

  it("a sender over their own limit does not use up the chat's or everyone's allowance", async () => {
    const limit = new InboundRateLimit({ perSender: 2, perChat: 3, global: 3, windowSeconds: 60 }, clock);
    for (let i = 0; i < 50; i++) await limit.check(inGroup("flood"), ana);
    expect((await limit.check(inGroup("other"), bob)).allowed).toBe(true);
  });

  it("says plainly when it will answer", () => {
    expect(slowDownText(new Date(clock.now().getTime() + 42_000), clock.now())).toContain("in about 42 seconds");
    expect(slowDownText(new Date(clock.now().getTime() + 600_000), clock.now())).toContain("in about 10 minutes");
  });
});
