import { describe, expect, it } from "vitest";
import { runSoak } from "./soak.js";

/**
 * The crash test with a fixed seed: the soak (test/soak/soak.ts) for 75 s — local-chat and Telegram
 * users, payments, reminders, SIGKILLs at random moments, inbound at least once. The long run is
 * `npm run soak -- --minutes 20`.
 */
describe("crash test: the soak with a fixed seed", () => {
  it("loses no message, duplicates no answer, payment or reminder, and delivers reminders within the bound", async () => {
    const report = await runSoak({
      durationMs: 75_000,
      seed: 4242,
      localUsers: 2,
      telegramUsers: 2,
      messageGapMs: [1_000, 4_000],
      killGapMs: [500, 3_000],
      lateBoundMs: 30_000,
    });
    // Restarts take seconds on a loaded machine; a few kills mid-work are what this run needs.
    expect(report.kills).toBeGreaterThanOrEqual(3);
    expect(report.messages).toBeGreaterThan(40);
    expect(report.lost).toEqual([]);
    expect(report.duplicatedAnswers).toEqual([]);
    expect(report.duplicatedPayments).toEqual([]);
    expect(report.remindersMissing).toEqual([]);
    expect(report.remindersDuplicated).toEqual([]);
    expect(report.remindersLate).toEqual([]);
  }, 400_000);
});
