/**
 * Composition root: the one place that picks adapters from configuration and wires them together.
 * `npm start` runs `main()`; tests call `startApp(config)` in-process.
 */
import { chmodSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { MongoClient } from "mongodb";
import { dashboardRouter } from "./bots/dashboard/routes.js";
import { secretsRouter } from "./bots/dashboard/secrets.js";
import { hooksRouter } from "./bots/hooks/routes.js";
import type { Refusal } from "./bots/http/body.js";
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
import { SwitchableModelClient } from "./core/model/switchable.js";
import type { ModelClient } from "./core/model/port.js";
import type { Scheduler } from "./core/scheduling/scheduler.js";
import type { Store } from "./core/storage/ports.js";
import { openSqliteStore } from "./core/storage/sqlite/index.js";
// Agenda itself (jobs/factories.ts) is imported only when a job needs it.
import { registerJobs, startHousekeeping } from "./jobs/catalogue.js";
import { LazyScheduler, sqliteJobsExist } from "./jobs/lazy.js";
import { webTools } from "./connectors/web/index.js";
import { workspaceTools } from "./sandbox/workspace.js";
import { WorkspaceArtifacts, artifactTools } from "./sandbox/artifacts.js";
import { BrowserRuntime } from "./sandbox/browser/runtime.js";
import { browserTools } from "./sandbox/browser/tools.js";
import { artifactsRouter } from "./bots/dashboard/artifacts.js";
import { workspaceContextMedia, workspaceReceivedFiles } from "./sandbox/inbox.js";
import { MediaIntake } from "./core/inbound/media.js";
import { ModelCapabilities } from "./core/model/capabilities.js";
import { OpenAITranscriber } from "./core/model/openai-transcriber.js";
import { VisionFallbackModel } from "./core/model/vision-fallback.js";
import { EgressGuard } from "./core/sentinel/egress.js";
import { SecretVault } from "./core/sentinel/vault.js";
import { SecretDesk } from "./core/sentinel/secret-desk.js";
import { SecretScrubbingModel } from "./core/sentinel/model-guard.js";
import { scrubSecrets } from "./core/sentinel/scrub.js";
import { scrubbingStore } from "./core/storage/scrubbing.js";
import { ChatLog, recordingAdapter } from "./bots/web/chat-log.js";
import { webApp } from "./bots/web/app.js";
import { MessengerSetup } from "./bots/web/messenger-setup.js";
import { MessengerStatus, readReadme } from "./bots/web/messenger-status.js";
import { clientFor } from "./bots/web/setup-api.js";
import { SetupStore } from "./bots/web/setup-store.js";
import { WebSessions } from "./bots/web/sessions.js";

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
  const { logger, addSecret, registry } = createLogger({ level: config.LOG_LEVEL, secrets: secretValues(config), ...(options.logDestination && { destination: options.logDestination }) });
  const dataDir = resolve(config.DATA_DIR);
  // The conversation, memory and keys live here: readable by this account only.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  restrictDataDir(dataDir, logger);

  let store: Store;
  let scheduler: Scheduler;
  let mongoClient: MongoClient | undefined;
  if (config.MONGODB_URI) {
    // The driver is loaded only when MongoDB is configured (start time and memory of the default).
    const { connectMongoStore } = await import("./core/storage/mongo/index.js");
    const mongo = await connectMongoStore(config.MONGODB_URI);
    store = mongo;
    mongoClient = mongo.client;
    scheduler = await (await import("./jobs/factories.js")).createMongoScheduler({ client: mongo.client, logger });
  } else {
    store = openSqliteStore({ path: join(dataDir, "familiar.db"), clock });
    // Agenda loads only when there is a job to run (see jobs/lazy.ts).
    const jobsPath = join(dataDir, "jobs.db");
    scheduler = new LazyScheduler({
      load: async () => (await import("./jobs/factories.js")).createEmbeddedScheduler({ path: jobsPath, logger, soleOwner: true }),
      hasJobs: () => sqliteJobsExist(jobsPath),
      backend: "agenda-sqlite",
      logger,
    });
  }

  // Secrets boundary: audit rows, journal entries and error fields are scrubbed of configured tokens,
  // vault values (every encoding) and token shapes before they are written (core/storage/scrubbing.ts).
  store = scrubbingStore(store, registry.scrubDeep);
  const vault = await SecretVault.open({ dataDir, ...(config.FAMILIAR_SECRET_KEY && { secretKey: config.FAMILIAR_SECRET_KEY }), addSecret });
  // Every hop is checked for vault values going to an origin they are not bound to.
  const secretCheck = (texts: readonly string[], origin: string) => vault.unboundIn(texts, origin);
  const egress = new EgressGuard({ privateHostsAllowed: config.PRIVATE_HOSTS_ALLOWED, outboundCheck: secretCheck });
  const setup = await SetupStore.open(dataDir, vault);

  // Environment variables win; else the model chosen on the setup page. Switchable: the setup page
  // changes it for the very next request, without a restart.
  const envModel = Boolean(config.OPENAI_API_KEY || config.OPENAI_BASE_URL);
  const stored = setup.model();
  const model = new SwitchableModelClient(
    envModel
      ? new OpenAIModelClient({
          model: config.OPENAI_MODEL,
          ...(config.OPENAI_API_KEY && { apiKey: config.OPENAI_API_KEY }),
          ...(config.OPENAI_BASE_URL && { baseURL: config.OPENAI_BASE_URL }),
          timeout: config.MODEL_TIMEOUT_MS,
        })
      : stored
        ? clientFor({ ...stored, apiKey: setup.apiKey() }, config.MODEL_TIMEOUT_MS)
        : null,
  );
  const workspace = { quotaBytes: config.WORKSPACE_QUOTA_MB * 1024 * 1024 };
  const artifacts = new WorkspaceArtifacts({ dataDir, repository: store.artifacts, clock, workspace });
  // Photos, voice notes and files: what the model in use can do is learnt as it goes (see createMedia).
  const media = createMedia(config, dataDir, workspace, model, () => modelEndpoint(config, setup), logger);
  let url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;
  const guardedModel = new SecretScrubbingModel(media.model, (text) => scrubSecrets(text, registry.list()));
  const secrets = new SecretDesk({ vault, store, clock, publicUrl: () => config.PUBLIC_URL ?? url, pokeOutbox: () => familiar.outboxLoop.poke() });
  const familiar = new Familiar({
    store,
    scheduler,
    // The runtime asks for the model at each activation: whatever the setup page chose last.
    // Requests and answers pass the secret scrubber (vault values and configured keys, every encoding).
    model: () => (model.configured ? guardedModel : null),
    tokens: createTokenCounter(),
    clock,
    logger,
    contextTokenBudget: config.CONTEXT_TOKEN_BUDGET,
    maxSteps: config.MAX_STEPS_PER_ACTIVATION,
    wakeupGraceMs: config.WAKEUP_GRACE_MS,
    publicUrl: () => config.PUBLIC_URL ?? url,
    singleProcess: store.kind === "sqlite",
    notificationJudgement: config.NOTIFY_MODEL_JUDGEMENT,
    askedForPerHour: config.NOTIFY_ASKED_FOR_PER_HOUR,
    sentinel: { egress, vault, scrub: registry.scrub },
    secrets,
    allowFrom: config.ALLOW_FROM,
    owners: config.OWNER,
    localChatIsOwner: !config.LOCAL_CHAT_ALLOW_REMOTE,
    attachments: artifacts,
    media: { intake: media.intake, context: media.context },
  });
  // Chromium starts on the first browser tool call, not here.
  const browser = new BrowserRuntime({ chromiumPath: config.CHROMIUM_PATH, dataDir, egress, secretCheck, logger, maxContexts: config.BROWSER_MAX_CONTEXTS, idleMs: config.BROWSER_IDLE_MS });
  familiar.addTools([
    ...webTools(egress),
    ...workspaceTools(dataDir, workspace),
    // A page readout gets about a quarter of the context budget (≈ 4 characters per token).
    ...browserTools({ runtime: browser, artifacts, dataDir, scrub: (text) => vault.scrub(text), maxReadChars: config.CONTEXT_TOKEN_BUDGET }),
    ...artifactTools({ store, clock, deliver: async () => familiar.outboxLoop.poke(), offered: (personId) => browser.inUse(personId) || artifacts.hasArtifacts(personId) }),
  ]);
  registerJobs(
    scheduler,
    {
      expireApprovals: () => familiar.approvals.expire(),
      sendDigest: (personId) => familiar.notifier.sendDigest(asId("person", personId)),
    },
    { logger, now: () => clock.now() },
  );
  const local = new LocalChannel(store.localMailbox, { clock });
  // Every channel is recorded into the person's chat log (the web chat shows both sides, everywhere).
  const chatLog = new ChatLog(store, clock, logger);
  familiar.addChannel(recordingAdapter(local, chatLog));
  options.configure?.(familiar);

  const http = new HttpServer(
    logger,
    [
    { name: "store", check: async () => ({ ...(await store.health()) }) },
    { name: "scheduler", check: async () => ({ ok: scheduler.status().running, ...scheduler.status() }) },
    ],
    registry.scrubDeep,
  );
  const sessions = await WebSessions.open(dataDir, clock);
  // Requests refused at the door (bad signature, too large, too deep) go to the audit log.
  const onRefused = (refusal: Refusal) =>
    void store.audit
      .appendAudit({ personId: null, kind: "inbound.refused", summary: `${refusal.source}: refused a request (${refusal.reason})`, data: { ...refusal } })
      .catch((err: unknown) => logger.error({ err, refusal }, "could not audit a refused request"));
  const messengerStatus = new MessengerStatus();
  const messengerDeps = {
    http,
    logger,
    dataDir,
    onRefused,
    inbound: store.inbound,
    ...(mongoClient && { mongoClient }),
    onWhatsAppQr: () => logger.info(`WhatsApp pairing: scan the QR printed above, or open ${url}/setup`),
    onWhatsAppInvalid: (reason: string) => {
      logger.error({ reason }, "WhatsApp session is no longer valid; the other messengers keep running");
      void familiar.alertOnOtherChannel("whatsapp", `WhatsApp stopped working (${reason}). Open ${url}/setup on the Familiar machine to pair it again.`);
    },
  };
  // Messenger settings from the setup page: the environment wins; applied live, without a restart.
  const messengerSetup = new MessengerSetup({
    config,
    vault,
    logger,
    status: messengerStatus,
    create: (effective) => createMessengers(effective, messengerDeps),
    install: (adapter) => {
      const recorded = recordingAdapter(adapter, chatLog);
      familiar.addChannel(recorded);
      return recorded;
    },
    running: (name) => familiar.channel(name),
    sink: familiar.handleInbound,
    whatsappEnabled: () => setup.whatsappEnabled(),
    setWhatsAppEnabled: (enabled) => setup.setWhatsAppEnabled(enabled),
  });
  // The web app comes first: it serves `/` (the old chat's API stays under /api/local).
  http.mount(
    webApp({
      store,
      familiar,
      chatLog,
      sessions,
      setup,
      clock,
      logger,
      allowRemote: config.LOCAL_CHAT_ALLOW_REMOTE,
      secureCookies: (config.PUBLIC_URL ?? "").startsWith("https:"),
      publicUrl: () => config.PUBLIC_URL ?? url,
      deliver: (event) => local.deliver(event),
      typing: (account) => local.isTyping(account),
      channelStatus: messengerStatus.channels,
      setupApi: {
        model,
        envModel: { vars: [config.OPENAI_API_KEY ? "OPENAI_API_KEY" : "", config.OPENAI_BASE_URL ? "OPENAI_BASE_URL" : ""].filter(Boolean), model: envModel ? config.OPENAI_MODEL : null, baseURL: envModel ? (config.OPENAI_BASE_URL ?? "https://api.openai.com/v1") : null },
        modelTimeoutMs: config.MODEL_TIMEOUT_MS,
        messengers: messengerStatus.messengers,
        whatsappQr: messengerStatus.whatsappQr,
        messengerSetup,
      },
      readme: readReadme,
      secrets,
    }),
  );
  // The old JSON APIs have no sign-in: they stay on this machine even when the web app is opened up.
  http.mount(
    localChatRouter(local, {
      allowRemote: false,
      logger,
      attachment: async (id) => {
        const artifact = await store.artifacts.getArtifact(id);
        return artifact ? artifacts.loadAttachment(artifact.personId, id) : null;
      },
    }),
  );
  const messengers = await createMessengers(messengerSetup.effectiveConfig(), messengerDeps);
  for (const adapter of messengers.adapters) familiar.addChannel(recordingAdapter(adapter, chatLog));
  const whatsapp = messengers.whatsapp;
  if (whatsapp) messengerStatus.watchWhatsApp(() => ({ state: whatsapp.state(), qr: whatsapp.currentQr() }));
  http.mount(pairingQrRouter(() => (whatsapp ? { state: whatsapp.state(), qr: whatsapp.currentQr() } : null), { allowRemote: false }));
  http.mount(dashboardRouter({ store, views: familiar.views, allowRemote: false }));
  http.mount(secretsRouter(vault, { allowRemote: false }));
  http.mount(artifactsRouter({ store, source: artifacts, allowRemote: false }));
  http.mount(hooksRouter((id, secret, body) => familiar.handleHookEvent(id, secret, body), { onRefused }));

  await scheduler.start();
  const stopHousekeeping = startHousekeeping({ pruneInbound: (before) => store.inbound.pruneProcessedUpdates(before), logger, now: () => clock.now() });
  const channels = await familiar.start();
  messengerStatus.started(channels);
  const port = await http.listen(config.HOST, config.PORT);
  url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`;

  logger.info(
    { url, dataDir, store: store.kind, scheduler: scheduler.status().backend, model: model.configured ? model.model : null, channels: channels.started, notConfigured: messengers.notConfigured },
    `Familiar is running: open ${url} to chat`,
  );
  if (config.LOCAL_CHAT_ALLOW_REMOTE) {
    logger.warn("LOCAL_CHAT_ALLOW_REMOTE is on: other machines may open the web app and must sign in (a /web link on a messenger, or the setup password); use HTTPS (PUBLIC_URL) in front of it");
    // Printed to the console only (never a messenger): whoever reads the server's log owns the install.
    process.stderr.write(`\nOwner sign-in link (valid 24 h, once): ${(config.PUBLIC_URL ?? url).replace(/\/$/, "")}/signin#token=${sessions.createOwnerLink()}\n\n`);
  }
  if (!model.configured) logger.warn(`no model configured: open ${url}/setup to choose one, or set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server)`);
  for (const f of channels.failed) logger.error({ channel: f.channel, error: f.error }, "channel not started");

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      const deadline = config.SHUTDOWN_DEADLINE_MS;
      chatLog.releaseAll();
      stopHousekeeping();
      await http.close();
      await familiar.stop(deadline);
      await browser.close();
      await scheduler.drain(deadline);
      await store.close();
    })());
  return { familiar, store, scheduler, http, url, logger, stop };
}

/** The model endpoint in use now: the environment's settings win, else the setup page's choice (it can change while running). */
function modelEndpoint(config: Config, setup: SetupStore): { baseURL?: string; apiKey?: string; model: string } | null {
  if (config.OPENAI_API_KEY || config.OPENAI_BASE_URL) {
    return { model: config.OPENAI_MODEL, ...(config.OPENAI_BASE_URL && { baseURL: config.OPENAI_BASE_URL }), ...(config.OPENAI_API_KEY && { apiKey: config.OPENAI_API_KEY }) };
  }
  const stored = setup.model();
  if (!stored) return null;
  const apiKey = setup.apiKey();
  return { model: stored.model, baseURL: stored.baseURL, ...(apiKey && { apiKey }) };
}

/**
 * Inbound files: the capabilities learnt about the model in use (per endpoint and model), the model
 * wrapped so a refusal of images is learnt and answered honestly, the transcriber of voice notes
 * (the same endpoint and key, OPENAI_TRANSCRIPTION_MODEL), and the person's workspace for received files.
 */
function createMedia(
  config: Config,
  dataDir: string,
  workspace: { quotaBytes: number },
  model: ModelClient,
  endpoint: () => { baseURL?: string; apiKey?: string; model: string } | null,
  logger: Logger,
) {
  const transcribes = config.OPENAI_TRANSCRIPTION_MODEL.toLowerCase() !== "off";
  const capabilities = new ModelCapabilities(
    {
      current: () => {
        const e = endpoint();
        return e && { key: `${e.baseURL ?? "openai"}|${e.model}`, model: e.model };
      },
      vision: config.OPENAI_VISION,
      transcription: () => transcribes && endpoint() !== null,
    },
    logger,
  );
  let transcriber: { key: string; client: OpenAITranscriber } | null = null;
  const currentTranscriber = () => {
    const e = endpoint();
    if (!e || !transcribes) return null;
    const key = `${e.baseURL ?? ""}|${e.apiKey ?? ""}`;
    if (transcriber?.key !== key) {
      const client = new OpenAITranscriber({ model: config.OPENAI_TRANSCRIPTION_MODEL, ...(e.apiKey && { apiKey: e.apiKey }), ...(e.baseURL && { baseURL: e.baseURL }), timeout: config.MODEL_TIMEOUT_MS });
      transcriber = { key, client };
    }
    return transcriber.client;
  };
  const files = workspaceReceivedFiles(dataDir, config.MAX_ATTACHMENT_BYTES, workspace);
  return {
    model: new VisionFallbackModel(model, capabilities),
    intake: new MediaIntake({ files, transcriber: currentTranscriber, capabilities, logger, maxBytes: config.MAX_ATTACHMENT_BYTES }),
    context: workspaceContextMedia(files, capabilities),
  };
}

/** `npm start`: load settings (exit 2 with every bad key listed), start, stop cleanly on SIGTERM/SIGINT. */
export async function main(): Promise<void> {
  // Files Familiar creates (database, vault, workspace, artifacts) are this account's alone.
  process.umask(0o077);
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
    const code = (err as NodeJS.ErrnoException).code;
    const hint = code === "EADDRINUSE" ? ` Another program (or another Familiar) uses port ${config.PORT}: stop it, or start with another port, e.g. PORT=3001 npm start.` : "";
    process.stderr.write(`Familiar failed to start: ${(err as Error).message}.${hint}\n`);
    process.exit(1);
  }
  let exiting = false;
  const shutdown = (reason: string, code: number) => {
    if (exiting) return;
    exiting = true;
    app.logger.info({ reason }, "shutting down");
    app
      .stop()
      .then(() => process.exit(code))
      .catch((err: unknown) => {
        app.logger.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.once("SIGTERM", () => shutdown("SIGTERM", 0));
  process.once("SIGINT", () => shutdown("SIGINT", 0));
  // No silent death: anything that escaped every handler is logged with its context, then the
  // process drains (running work finishes or is left to resume) and exits non-zero for a restart.
  process.on("unhandledRejection", (reason) => {
    app.logger.fatal({ err: reason }, "unhandled promise rejection: draining and exiting");
    shutdown("unhandledRejection", 1);
  });
  process.on("uncaughtException", (err) => {
    app.logger.fatal({ err }, "uncaught exception: draining and exiting");
    shutdown("uncaughtException", 1);
  });
}

// Run when this file is the entry (main.ts, or the bundled dist/main.js) — not when a bundle of another entry inlines it.
if (process.argv[1] && /[\\/]main\.[jt]s$/.test(process.argv[1]) && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`Familiar failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

/**
 * Makes DATA_DIR and the database files in it readable by this account only (0700 / 0600): they hold
 * the conversation, memory and keys. A directory someone else owns (a mounted volume) is left as is
 * and reported.
 */
function restrictDataDir(dataDir: string, logger: Logger): void {
  try {
    chmodSync(dataDir, 0o700);
    for (const name of readdirSync(dataDir)) {
      if (/\.(db|db-wal|db-shm|json|key)$/.test(name)) chmodSync(join(dataDir, name), 0o600);
    }
  } catch (err) {
    logger.warn({ err, dataDir }, "could not make the data folder private to this account");
  }
}
