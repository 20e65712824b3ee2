/**
 * Runs the Telegram channel (long polling) in a process of its own, so a test can kill it with
 * SIGKILL the way a crash would. Environment: TG_API_ROOT, TG_TOKEN, TG_DB (SQLite file of the
 * durable dedupe). Prints `{"recorded":"<updateId>","status":…}` once an update id is stored durably, then
 * keeps the sink pending (the command's side effects are still running) until it is killed.
 */
import { createTelegramChannel } from "../../bots/telegram/channel.js";
import { captureLogger, durableDedupeSink } from "./telegram-sinks.js";

const { TG_API_ROOT, TG_TOKEN, TG_DB } = process.env;
if (!TG_API_ROOT || !TG_TOKEN || !TG_DB) throw new Error("TG_API_ROOT, TG_TOKEN and TG_DB are required");
const { sink } = durableDedupeSink(TG_DB, async (event, status) => {
  process.stdout.write(`${JSON.stringify({ recorded: event.updateId, status })}\n`);
  await new Promise(() => {});
});
const channel = createTelegramChannel({ token: TG_TOKEN, apiRoot: TG_API_ROOT, logger: captureLogger().logger });
await channel.start(sink);
process.stdout.write(`${JSON.stringify({ started: true })}\n`);
