import type { MongoClient } from "mongodb";
import type { RefusalSink, HttpServer } from "../web/http/index.js";
import type { ChannelAdapter } from "../core/channels/index.js";
import type { Config } from "../core/config/index.js";
import type { Logger } from "../core/log/index.js";
import type { InboundRepository } from "../core/storage/index.js";
import type { WhatsAppChannel } from "../bots/whatsapp/index.js";

/** The `<channel>:` entries of ALLOW_GROUPS, without the prefix. */
export function groupsFor(config: Config, channel: "telegram" | "slack" | "discord" | "whatsapp"): string[] {
  return config.ALLOW_GROUPS.filter((e) => e.startsWith(`${channel}:`)).map((e) => e.slice(channel.length + 1));
}

/** What {@link createMessengers} needs besides the settings. */
export interface MessengerDeps {
  http: HttpServer;
  logger: Logger;
  dataDir: string;
  /** The connected client of the Mongo store; the messengers never close it. */
  mongoClient?: MongoClient;
  onWhatsAppQr?: (qr: string) => void;
  onWhatsAppInvalid?: (reason: string) => void;
  /** Refused webhook requests (bad signature, too large, too deep), for the audit log. */
  onRefused?: RefusalSink;
  /** The store's inbound repository: Telegram long polling holds fetched updates there until handled. */
  inbound: Pick<InboundRepository, "holdUpdates" | "releaseUpdate" | "listHeldUpdates">;
}

/**
 * Creates the adapters of every messenger configured in the settings (any combination). A messenger
 * whose settings are missing is skipped; one that fails to start is reported by the core at start
 * and the others keep running. With `mongoClient` (the Mongo store's client, MONGODB_URI set) the
 * WhatsApp session is backed up to GridFS in the store's database (RemoteAuth); LocalAuth otherwise.
 * Each messenger's library is imported only when it is configured, so an unused one costs neither
 * start time nor memory.
 */
export async function createMessengers(
  config: Config,
  deps: MessengerDeps,
): Promise<{ adapters: ChannelAdapter[]; whatsapp: WhatsAppChannel | null; notConfigured: string[] }> {
  const { http, logger } = deps;
  const adapters: ChannelAdapter[] = [];
  const notConfigured: string[] = [];
  if (config.TELEGRAM_BOT_TOKEN) {
    const { createTelegramChannel, storeUpdateJournal } = await import("../bots/telegram/index.js");
    const telegramLogger = logger.child({ channel: "telegram" });
    adapters.push(
      createTelegramChannel({
        token: config.TELEGRAM_BOT_TOKEN,
        apiRoot: config.TELEGRAM_API_ROOT,
        groups: groupsFor(config, "telegram"),
        logger: telegramLogger,
        journal: storeUpdateJournal(deps.inbound, telegramLogger),
        ...(config.TELEGRAM_WEBHOOK_URL &&
          config.TELEGRAM_WEBHOOK_SECRET && { webhook: { url: config.TELEGRAM_WEBHOOK_URL, secret: config.TELEGRAM_WEBHOOK_SECRET, http, ...(deps.onRefused && { onRefused: deps.onRefused }) } }),
      }),
    );
  } else notConfigured.push("telegram (set TELEGRAM_BOT_TOKEN)");
  if (config.SLACK_BOT_TOKEN) {
    const { createSlackChannel } = await import("../bots/slack/index.js");
    adapters.push(
      createSlackChannel({
        botToken: config.SLACK_BOT_TOKEN,
        ...(config.SLACK_SIGNING_SECRET && { signingSecret: config.SLACK_SIGNING_SECRET }),
        ...(config.SLACK_APP_TOKEN && { appToken: config.SLACK_APP_TOKEN }),
        ...(config.SLACK_API_URL && { apiUrl: config.SLACK_API_URL }),
        allowGroups: groupsFor(config, "slack"),
        http,
        ...(deps.onRefused && { onRefused: deps.onRefused }),
        logger: logger.child({ channel: "slack" }),
      }),
    );
  } else notConfigured.push("slack (set SLACK_BOT_TOKEN with SLACK_SIGNING_SECRET or SLACK_APP_TOKEN)");
  if (config.DISCORD_BOT_TOKEN) {
    const { createDiscordChannel } = await import("../bots/discord/index.js");
    adapters.push(
      createDiscordChannel({
        token: config.DISCORD_BOT_TOKEN,
        ...(config.DISCORD_API_URL && { apiUrl: config.DISCORD_API_URL }),
        groups: groupsFor(config, "discord"),
        logger: logger.child({ channel: "discord" }),
      }),
    );
  } else notConfigured.push("discord (set DISCORD_BOT_TOKEN)");
  let whatsapp: WhatsAppChannel | null = null;
  if (config.WHATSAPP_ENABLED) {
    const { createWhatsAppChannel } = await import("../bots/whatsapp/index.js");
    const { createGridFsSessionStore } = await import("../bots/whatsapp/index.js");
    const { parseMongoUri } = await import("../core/storage/mongo/index.js");
    const waLogger = logger.child({ channel: "whatsapp" });
    // The same database as connectMongoStore: the URI's, else "familiar".
    const dbName = (config.MONGODB_URI && parseMongoUri(config.MONGODB_URI).dbName) || "familiar";
    whatsapp = createWhatsAppChannel({
      dataDir: deps.dataDir,
      ...(deps.mongoClient && { auth: { kind: "remote", store: createGridFsSessionStore({ client: deps.mongoClient, dbName, logger: waLogger }) } }),
      chromiumPath: config.CHROMIUM_PATH,
      groups: groupsFor(config, "whatsapp"),
      logger: waLogger,
      ...(deps.onWhatsAppQr && { onQr: deps.onWhatsAppQr }),
      ...(deps.onWhatsAppInvalid && { onSessionInvalid: deps.onWhatsAppInvalid }),
    });
    adapters.push(whatsapp);
  } else notConfigured.push("whatsapp (set WHATSAPP_ENABLED=true)");
  return { adapters, whatsapp, notConfigured };
}
