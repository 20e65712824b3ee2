/**
 * Composition root: the one place that picks adapters from configuration and wires them together.
 * `npm start` runs `main()`; tests call `startApp(config)` in-process.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { MongoClient } from "mongodb";
import { dashboardRouter } from "./bots/dashboard/routes.js";
import { secretsRouter } from "./bots/dashboard/secrets.js";
import { hooksRouter } from "./bots/hooks/routes.js";
import { HttpServer } from "./bots/http/server.js";
import { LocalChannel } from "./bots/local/channel.js";
import { pairingQrRouter } from "./bots/local/pairing-qr.js";
import { localChatRouter } from "./bots/local/routes.js";
import { createMessengers } from "./bots/messengers/setup.js";
import { systemClock, type Clock } from "./core/clock.js";
import { loadConfig, secretValues } from "./core/config/load.js";
import type { Config } from "./core/config/schema.js";
import { createTokenCounter } from "./core/context/tokens.js";
import { ConfigError } from "./core/errors.js";
import { Familiar } from "./core/familiar.js";
import { asId } from "./core/ids.js";
import { createLogger, type Logger } from "./core/log.js";
import { OpenAIModelClient } from "./core/model/openai.js";
import type { Scheduler } from "./core/scheduling/scheduler.js";
import type { Store } from "./core/storage/ports.js";
import { openSqliteStore } from "./core/storage/sqlite/index.js";
import { createEmbeddedScheduler, createMongoScheduler, registerJobs, scheduleHousekeeping } from "./jobs/index.js";
import { webTools } from "./connectors/web/index.js";
import { workspaceTools } from "./sandbox/workspace.js";
import { workspaceContextMedia, workspaceReceivedFiles } from "./sandbox/inbox.js";
import { MediaIntake } from "./core/inbound/media.js";
import { ModelCapabilities } from "./core/model/capabilities.js";
import { OpenAITranscriber } from "./core/model/openai-transcriber.js";
import { VisionFallbackModel } from "./core/model/vision-fallback.js";
import { EgressGuard } from "./core/sentinel/egress.js";
import { SecretVault } from "./core/sentinel/vault.js";

/** A running Familiar process. */
export interface RunningApp {
  familiar: Familiar;
  store: Store;
  scheduler: Scheduler;
  http: HttpServer;
  /** Base URL of the HTTP server, e.g. `http://127.0.0.1:3000`. */
  url: string;
  logger: Logger;
  /** Drains jobs and activations (up to SHUTDOWN_DEADLINE_MS), closes the server and the stores. */
  stop(): Promise<void>;
}

/**
 * Starts Familiar: data directory, store (SQLite under DATA_DIR, or MongoDB when MONGODB_URI is
 * set — its connection is checked before anything else starts), scheduler, model, channels, HTTP.
 * Throws when the store cannot be opened or the port cannot be bound.
 */
export async function startApp(
  config: Config,
  options: { clock?: Clock; logDestination?: NodeJS.WritableStream; configure?: (familiar: Familiar) => void } = {},
): Promise<RunningApp> {
  const clock = options.clock ?? systemClock;
  const { logger, addSecret } = createLogger({ level: config.LOG_LEVEL, secrets: secretValues(config), ...(options.logDestination && { destination: options.logDestination }) });
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });

  let store: Store;
  let scheduler: Scheduler;
  let mongoClient: MongoClient | undefined;
  if (config.MONGODB_URI) {
    // The driver is loaded only when MongoDB is configured (start time and memory of the default).
    const { connectMongoStore } = await import("./core/storage/mongo/index.js");
    const mongo = await connectMongoStore(config.MONGODB_URI);
    store = mongo;
    mongoClient = mongo.client;
    scheduler = await createMongoScheduler({ client: mongo.client, logger });
  } else {
    store = openSqliteStore({ path: join(dataDir, "familiar.db"), clock });
    scheduler = await createEmbeddedScheduler({ path: join(dataDir, "jobs.db"), logger, soleOwner: true });
  }

  const model =
    config.OPENAI_API_KEY || config.OPENAI_BASE_URL
      ? new OpenAIModelClient({
          model: config.OPENAI_MODEL,
          ...(config.OPENAI_API_KEY && { apiKey: config.OPENAI_API_KEY }),
          ...(config.OPENAI_BASE_URL && { baseURL: config.OPENAI_BASE_URL }),
          timeout: config.MODEL_TIMEOUT_MS,
        })
      : null;

  const media = createMedia(config, dataDir, model, logger);
  const egress = new EgressGuard({ privateHostsAllowed: config.PRIVATE_HOSTS_ALLOWED });
  const vault = await SecretVault.open({ dataDir, ...(config.FAMILIAR_SECRET_KEY && { secretKey: config.FAMILIAR_SECRET_KEY }), addSecret });
  let url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;
  const familiar = new Familiar({
    store,
    scheduler,
    model: media.model,
    tokens: createTokenCounter(),
    clock,
    logger,
    contextTokenBudget: config.CONTEXT_TOKEN_BUDGET,
    maxSteps: config.MAX_STEPS_PER_ACTIVATION,
    wakeupGraceMs: config.WAKEUP_GRACE_MS,
    publicUrl: () => config.PUBLIC_URL ?? url,
    singleProcess: store.kind === "sqlite",
    notificationJudgement: config.NOTIFY_MODEL_JUDGEMENT,
    sentinel: { egress, vault },
    allowFrom: config.ALLOW_FROM,
    media: { intake: media.intake, context: media.context },
  });
  familiar.addTools([...webTools(egress), ...workspaceTools(dataDir)]);
  registerJobs(
    scheduler,
    {
      expireApprovals: () => familiar.approvals.expire(),
      sendDigest: (personId) => familiar.notifier.sendDigest(asId("person", personId)),
      pruneInbound: (before) => store.inbound.pruneProcessedUpdates(before),
    },
    { logger, now: () => clock.now() },
  );
  const local = new LocalChannel(store.localMailbox, { clock });
  familiar.addChannel(local);
  options.configure?.(familiar);

  const http = new HttpServer(logger, [
    { name: "store", check: async () => ({ ...(await store.health()) }) },
    { name: "scheduler", check: async () => ({ ok: scheduler.status().running, ...scheduler.status() }) },
  ]);
  http.mount(localChatRouter(local, { allowRemote: config.LOCAL_CHAT_ALLOW_REMOTE, logger }));
  const messengers = await createMessengers(config, {
    http,
    logger,
    dataDir,
    ...(mongoClient && { mongoClient }),
    onWhatsAppQr: () => logger.info(`WhatsApp pairing: scan the QR printed above, or open ${url}/whatsapp`),
    onWhatsAppInvalid: (reason) => {
      logger.error({ reason }, "WhatsApp session is no longer valid; the other messengers keep running");
      void familiar.alertOnOtherChannel("whatsapp", `WhatsApp stopped working (${reason}). Open ${url}/whatsapp on the Familiar machine to pair it again.`);
    },
  });
  for (const adapter of messengers.adapters) familiar.addChannel(adapter);
  const whatsapp = messengers.whatsapp;
  http.mount(pairingQrRouter(() => (whatsapp ? { state: whatsapp.state(), qr: whatsapp.currentQr() } : null), { allowRemote: config.LOCAL_CHAT_ALLOW_REMOTE }));
  http.mount(dashboardRouter({ store, views: familiar.views, allowRemote: config.LOCAL_CHAT_ALLOW_REMOTE }));
  http.mount(secretsRouter(vault, { allowRemote: config.LOCAL_CHAT_ALLOW_REMOTE }));
  http.mount(hooksRouter((id, secret, body) => familiar.handleHookEvent(id, secret, body)));

  await scheduler.start();
  await scheduleHousekeeping(scheduler);
  const channels = await familiar.start();
  const port = await http.listen(config.HOST, config.PORT);
  url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`;

  logger.info(
    { url, dataDir, store: store.kind, scheduler: scheduler.status().backend, model: model ? config.OPENAI_MODEL : null, channels: channels.started, notConfigured: messengers.notConfigured },
    `Familiar is running: open ${url} to chat`,
  );
  if (config.LOCAL_CHAT_ALLOW_REMOTE) {
    logger.warn("LOCAL_CHAT_ALLOW_REMOTE is on: the local chat, dashboard and secrets APIs have no login and answer any client that can reach this address");
  }
  if (!model) logger.warn("no model configured: set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server) to get answers");
  for (const f of channels.failed) logger.error({ channel: f.channel, error: f.error }, "channel not started");

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      const deadline = config.SHUTDOWN_DEADLINE_MS;
      await http.close();
      await familiar.stop(deadline);
      await scheduler.drain(deadline);
      await store.close();
    })());
  return { familiar, store, scheduler, http, url, logger, stop };
}

/**
 * Inbound files: the capabilities learnt about the model endpoint, the model wrapped so a refusal of
 * images is learnt (and answered honestly), the transcriber of voice notes (same endpoint and key),
 * and the person's workspace for received files.
 */
function createMedia(config: Config, dataDir: string, model: OpenAIModelClient | null, logger: Logger) {
  const transcribe = model !== null && config.OPENAI_TRANSCRIPTION_MODEL.toLowerCase() !== "off";
  const capabilities = new ModelCapabilities({ model: model?.model ?? null, vision: config.OPENAI_VISION, transcription: transcribe }, logger);
  const transcriber = transcribe
    ? new OpenAITranscriber({
        model: config.OPENAI_TRANSCRIPTION_MODEL,
        ...(config.OPENAI_API_KEY && { apiKey: config.OPENAI_API_KEY }),
        ...(config.OPENAI_BASE_URL && { baseURL: config.OPENAI_BASE_URL }),
        timeout: config.MODEL_TIMEOUT_MS,
      })
    : null;
  const files = workspaceReceivedFiles(dataDir, config.MAX_ATTACHMENT_BYTES);
  return {
    model: model && new VisionFallbackModel(model, capabilities),
    intake: new MediaIntake({ files, transcriber, capabilities, logger, maxBytes: config.MAX_ATTACHMENT_BYTES }),
    context: workspaceContextMedia(files, capabilities),
  };
}

/** `npm start`: load settings (exit 2 with every bad key listed), start, stop cleanly on SIGTERM/SIGINT. */
export async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Familiar cannot start. ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let app: RunningApp;
  try {
    app = await startApp(config);
  } catch (err) {
    process.stderr.write(`Familiar failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const shutdown = (signal: string) => {
    app.logger.info({ signal }, "shutting down");
    app
      .stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        app.logger.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  void main();
}
