/**
 * Telegram (grammY): long polling or a webhook in, Telegram HTML and inline keyboards out. Loaded
 * only when TELEGRAM_BOT_TOKEN is set.
 */
export { createTelegramChannel } from "./channel.js";
export { storeUpdateJournal } from "./journal.js";
export type { UpdateJournal } from "./polling.js";
