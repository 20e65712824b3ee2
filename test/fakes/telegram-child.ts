/**
 * Runs the Telegram channel (long polling) in a process of its own, so a test can kill it with
 * SIGKILL the way a crash would. Environment: TG_API_ROOT, TG_TOKEN, TG_DB (SQLite file of the
 * durable dedupe and of the poller's update journal), TG_STALL (`after-record`, the default: print
 * `{"recorded":"<updateId>","status":…}` once the update id is stored durably, then keep the sink
 * pending — the command's side effects are still running; `before-record`: print
 * `{"received":"<updateId>"}` and keep the sink pending before anything is recorded — a file still
 * downloading) until it is killed.
 */
import { createTelegramChannel } from "../../bots/telegram/channel.js";
import { storeUpdateJournal } from "../../bots/telegram/journal.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import { captureLogger, durableDedupeSink } from "./telegram-sinks.js";

const { TG_API_ROOT, TG_TOKEN, TG_DB, TG_STALL = "after-record" } = process.env;
if (!TG_API_ROOT || !TG_TOKEN || !TG_DB) throw new Error("TG_API_ROOT, TG_TOKEN and TG_DB are required");
const forever = () => new Promise<never>(() => {});
const { sink: recordingSink } = durableDedupeSink(TG_DB, async (event, status) => {
  process.stdout.write(`${JSON.stringify({ recorded: event.updateId, status })}\n`);
  await forever();
});
const sink: typeof recordingSink =
  TG_STALL === "before-record"
    ? async (event) => {
        process.stdout.write(`${JSON.stringify({ received: event.updateId })}\n`);
        return forever();
      }
    : recordingSink;
const { logger } = captureLogger();
const journal = storeUpdateJournal(openSqliteStore({ path: TG_DB }).inbound, logger);
const channel = createTelegramChannel({ token: TG_TOKEN, apiRoot: TG_API_ROOT, logger, journal });
await channel.start(sink);
process.stdout.write(`${JSON.stringify({ started: true })}\n`);
