/**
 * The long-polling loop (`UpdatePoller`) against the fake Bot API through grammY's real client:
 * at least once (an update is confirmed to Telegram only once the journal holds it, and handled
 * again from the journal after a restart) and no waiting (a held-up update never holds back the
 * next: every getUpdates is a long poll from the newest update, and each update is fetched once).
 * Assertions are on the order and count of calls, never on timings (issue 18 item 3).
 */
import { Api } from "grammy";
import type { Update } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { UpdatePoller, type PollerOptions, type UpdateJournal } from "../../bots/telegram/polling.js";
import { FakeTelegramApi, updates } from "../fakes/telegram-api.js";
import { captureLogger, deferred, memoryJournal } from "../fakes/telegram-sinks.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TIMEOUT_S = 5;

async function setup(handle: (update: Update) => Promise<void>, options: { journal?: UpdateJournal; poller?: PollerOptions } = {}) {
  const fake = await FakeTelegramApi.start();
  const log = captureLogger();
  const memory = memoryJournal();
  const journal = options.journal ?? memory.journal;
  const poller = new UpdatePoller(new Api(fake.token, { apiRoot: fake.apiRoot }), journal, handle, log.logger, { timeoutSeconds: TIMEOUT_S, ...options.poller });
  cleanups.push(() => fake.close());
  cleanups.push(() => poller.stop());
  return { fake, poller, log, memory };
}

const polls = (fake: FakeTelegramApi) => fake.callsOf("getUpdates").map((c) => ({ offset: c.payload.offset as number | undefined, timeout: c.payload.timeout as number }));

describe("UpdatePoller", () => {
  it("fetches a second update at once while the first is still being handled: long polls only, each update fetched once", async () => {
    const held = deferred<void>();
    const handled: number[] = [];
    const { fake, poller, memory } = await setup(async (u) => {
      handled.push(u.update_id);
      if (handled.length === 1) await held.promise;
    });
    poller.start();
    const first = fake.push(updates.text(42, "a message whose handling takes long (files, a slow store)"));
    await fake.waitFor(() => handled.length === 1, 5_000, "the first update to be handed over");
    const second = fake.push(updates.text(7, "someone else writes meanwhile"));
    await fake.waitFor(() => handled.length === 2, 5_000, "the second update to be handed over while the first is held");
    expect(handled).toEqual([first.update_id, second.update_id]);
    await fake.waitFor(() => polls(fake).length >= 3, 5_000, "the poll after the second update");

    // Every call was a long poll, asking from the newest update fetched: the first was confirmed
    // (it is in the journal) while its handling still ran, and nothing was fetched twice.
    const calls = polls(fake);
    expect(calls.every((c) => c.timeout === TIMEOUT_S)).toBe(true);
    expect(calls.slice(0, 3).map((c) => c.offset)).toEqual([undefined, first.update_id + 1, second.update_id + 1]);
    expect(fake.fetchCount.get(first.update_id)).toBe(1);
    expect(fake.fetchCount.get(second.update_id)).toBe(1);
    expect([...memory.held.keys()]).toEqual([first.update_id]);

    held.resolve();
    await fake.waitFor(() => memory.held.size === 0, 5_000, "the first update to be released");
    expect(memory.ops).toEqual([`hold ${first.update_id}`, `hold ${second.update_id}`, `release ${second.update_id}`, `release ${first.update_id}`]);
  });

  it("confirms an update only after the journal holds it, and hands it over only then", async () => {
    const handled: number[] = [];
    const memory = memoryJournal();
    const gate = deferred<void>();
    memory.state.holdGate = gate.promise;
    const { fake, poller } = await setup(async (u) => void handled.push(u.update_id), { journal: memory.journal });
    poller.start();
    const update = fake.push(updates.text(42, "hello"));
    await fake.waitFor(() => fake.fetchCount.get(update.update_id) === 1, 5_000, "the update to be fetched");
    // The journal has not answered: not handed over, and no getUpdates confirmed it.
    expect(handled).toEqual([]);
    expect(polls(fake)).toHaveLength(1);
    gate.resolve();
    memory.state.holdGate = null;
    await fake.waitFor(() => handled.length === 1 && polls(fake).length === 2, 5_000, "the hand-over and the confirming poll");
    expect(polls(fake)[1]).toEqual({ offset: update.update_id + 1, timeout: TIMEOUT_S });
  });

  it("leaves updates unconfirmed when the journal cannot hold them, and asks for them again", async () => {
    const handled: number[] = [];
    const memory = memoryJournal();
    memory.state.failHolds = 1;
    const { fake, poller, log } = await setup(async (u) => void handled.push(u.update_id), { journal: memory.journal });
    poller.start();
    const update = fake.push(updates.text(42, "hello"));
    await fake.waitFor(() => handled.length === 1, 5_000, "the update after the journal recovered");
    expect(handled).toEqual([update.update_id]);
    expect(memory.ops.slice(0, 2)).toEqual([`hold failed ${update.update_id}`, `hold ${update.update_id}`]);
    // The call after the failure asked from the same place: the update was not confirmed.
    expect(polls(fake)[1]!.offset).toBeUndefined();
    expect(fake.fetchCount.get(update.update_id)).toBe(2);
    expect(log.lines.some((l) => l.level === 50 && l.msg.includes("could not be recorded"))).toBe(true);
  });

  it("after a restart, hands over the updates the journal still holds before it polls, and asks from after them", async () => {
    const fake0 = await FakeTelegramApi.start();
    const left = [fake0.build(updates.text(42, "fetched, never handled")), fake0.build(updates.press(42, "ap:x:once"))];
    await fake0.close();
    const memory = memoryJournal(left);
    const handled: number[] = [];
    const { fake, poller } = await setup(async (u) => void handled.push(u.update_id), { journal: memory.journal });
    poller.start();
    await fake.waitFor(() => memory.held.size === 0 && polls(fake).length >= 1, 5_000, "the held updates to be handled");
    expect(handled).toEqual(left.map((u) => u.update_id));
    expect(polls(fake)[0]!.offset).toBe(left[1]!.update_id + 1);
  });

  it("retries a handler that failed, and keeps an update whose every retry failed for the next start", async () => {
    let calls = 0;
    const { fake, poller, memory, log } = await setup(
      async (u) => {
        calls++;
        if ((u.message?.text === "flaky" && calls < 3) || u.message?.text === "broken") throw new Error("store unavailable");
      },
      { poller: { retryDelaysMs: [10, 10] } },
    );
    poller.start();
    const flaky = fake.push(updates.text(42, "flaky"));
    await fake.waitFor(() => memory.ops.includes(`release ${flaky.update_id}`), 5_000, "the flaky update to be handled");
    expect(calls).toBe(3);
    const broken = fake.push(updates.text(42, "broken"));
    await fake.waitFor(() => log.lines.some((l) => l.level === 50 && l.updateId === broken.update_id), 5_000, "the broken update to be given up");
    expect([...memory.held.keys()]).toEqual([broken.update_id]);
  });

  it("stop confirms everything fetched, also an update still being handled (the journal keeps it)", async () => {
    const never = deferred<void>();
    const { fake, poller, memory } = await setup(() => never.promise, { poller: { stopGraceMs: 50 } });
    poller.start();
    const update = fake.push(updates.text(42, "hello"));
    await fake.waitFor(() => memory.held.size === 1, 5_000, "the update to be held");
    await poller.stop();
    expect(fake.confirmedOffset).toBe(update.update_id + 1);
    expect([...memory.held.keys()]).toEqual([update.update_id]);
  });
});
