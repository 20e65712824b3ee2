/**
 * Telegram inbound under load (issue 18 item 3). The real app runs as a child process (`spawnApp`,
 * embedded SQLite in a temp dir) with long polling against the fake Bot API and an instant fake
 * model, both in this process (so the app's event loop is its own, as in production). Called by
 * test/bench/run.ts.
 *
 * Emits `telegram.users`: 20 people write at once, each its next message as soon as it has the
 * answer to the previous one, 5 messages each (100 updates, 100 replies). Figures:
 * - `replies_per_s`: replies sent (sendMessage) per second of wall time;
 * - `fetch_*_ms`: update-to-fetch latency — from the update being queued in the fake
 *   (`push`) to the first getUpdates answer that carried it;
 * - `e2e_*_ms`: from `push` to the reply's sendMessage arriving at the fake;
 * - `get_updates_calls`: getUpdates calls during the run (refetching the same updates costs calls);
 * - `round2_*`: the figures round 2 measured from outside on the same kind of fake, for comparison.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startFakeOpenAI, text } from "../fakes/openai-server.js";
import { FakeTelegramApi, updates } from "../fakes/telegram-api.js";
import { freePort } from "../helpers/child.js";
import { round, sleep, spawnApp, spread } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

const users = 20;
const messagesEach = 5;
const firstUser = 5_000;

/** Waits until `done()` holds (polled every 2 ms); throws after `ms`. */
async function until(done: () => boolean, what: string, ms = 120_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`telegram bench: timed out waiting for ${what}`);
    await sleep(2);
  }
}

export async function bench(emit: Emit): Promise<void> {
  const fake = await FakeTelegramApi.start();
  const model = await startFakeOpenAI({ fallback: () => text("Noted, thanks.") });
  const ids = Array.from({ length: users }, (_, i) => firstUser + i);
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-bench-telegram-"));
  const app = await spawnApp("tsx", await freePort(), {
    DATA_DIR: dataDir,
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_API_ROOT: fake.apiRoot,
    OPENAI_BASE_URL: model.url,
    OPENAI_MODEL: "fake-model",
    ALLOW_FROM: ids.map((id) => `telegram:${id}`).join(","),
  });
  try {
    const repliesTo = (id: number) => fake.messages.filter((m) => m.chatId === String(id)).length;
    // Warm-up: every person exists and has talked once.
    await Promise.all(ids.map(async (id) => {
      fake.push(updates.text(id, "hello, I am new here"));
      await until(() => repliesTo(id) >= 1, `the first reply to ${id}`);
    }));
    const callsBefore = fake.callsOf("getUpdates").length;
    const sentBefore = fake.messages.length;
    const measured: number[] = [];
    const e2e: number[] = [];
    const started = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        for (let n = 0; n < messagesEach; n++) {
          const have = repliesTo(id);
          const update = fake.push(updates.text(id, `message ${n}: what is on my list for tomorrow?`));
          measured.push(update.update_id);
          await until(() => repliesTo(id) > have, `reply ${n} to ${id}`);
          e2e.push(fake.messages.filter((m) => m.chatId === String(id)).at(-1)!.at - (performance.timeOrigin + fake.pushedAt.get(update.update_id)!));
        }
      }),
    );
    const wallMs = performance.now() - started;
    const fetchMs = measured.map((u) => fake.fetchedAt.get(u)! - fake.pushedAt.get(u)!);
    emit({
      bench: "telegram.users",
      users,
      messages_each: messagesEach,
      replies: fake.messages.length - sentBefore,
      replies_per_s: round((fake.messages.length - sentBefore) / (wallMs / 1000)),
      wall_ms: round(wallMs),
      ...spread(fetchMs, "_ms", "fetch_"),
      ...spread(e2e, "_ms", "e2e_"),
      get_updates_calls: fake.callsOf("getUpdates").length - callsBefore,
      round2_replies_per_s: "75 → 21 (alone → 20 users)",
      round2_fetch_p50_ms: 815,
      model: "instant fake, in the bench process; the app in a child process",
    });
  } finally {
    await app.stop();
    await fake.close();
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
