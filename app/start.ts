/**
 * Composition root: the one place that picks adapters from configuration and wires them together.
 * `npm start` runs `main()` (main.ts), which calls `startApp`; tests call `startApp(config)` in-process.
 */
import { chmodSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MongoClient } from "mongodb";
import {
  dashboardRouter,
  secretsRouter,
  pairingQrRouter,
  localChatRouter,
  artifactsRouter,
} from "../web/local/index.js";
import { hooksRouter } from "../web/hooks/index.js";
import { type Refusal, HttpServer } from "../web/http/index.js";
import { LocalChannel } from "../bots/local/index.js";
import { createMessengers } from "./messengers.js";
import { systemClock, type Clock } from "../core/clock.js";
import { secretValues, type Config } from "../core/config/index.js";
import { createTokenCounter } from "../core/context/index.js";
import { Familiar } from "./familiar.js";
import { asId } from "../core/ids.js";
import { createLogger, type Logger, scrubSecrets } from "../core/log/index.js";
import {
  OpenAIModelClient,
  SwitchableModelClient,
  type ModelClient,
  ModelCapabilities,
  OpenAITranscriber,
  VisionFallbackModel,
} from "../core/model/index.js";
import type { Scheduler } from "../core/scheduling/index.js";
import { type Store, scrubbingStore } from "../core/storage/index.js";
import { openSqliteStore } from "../core/storage/sqlite/index.js";
// Agenda itself (jobs/agenda/factories.ts) is imported only when a job needs it.
import { registerJobs, startHousekeeping, LazyScheduler, sqliteJobsExist } from "../jobs/index.js";
import { webTools } from "../connectors/web/index.js";
import {
  workspaceTools,
  WorkspaceArtifacts,
  artifactTools,
  workspaceContextMedia,
  workspaceReceivedFiles,
} from "../sandbox/workspace/index.js";
import { BrowserRuntime, browserTools } from "../sandbox/browser/index.js";
import { MediaIntake } from "../core/inbound/index.js";
import { EgressGuard } from "../core/egress/index.js";
import { SecretVault, SecretDesk, SecretScrubbingModel } from "../core/secrets/index.js";
import {
  ChatLog,
  recordingAdapter,
  webApp,
  MessengerSetup,
  MessengerStatus,
  readReadme,
  clientFor,
  SetupStore,
  WebSessions,
  fileLink,
  fileLinksRouter,
} from "../web/api/index.js";

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
    const { connectMongoStore } = await import("../core/storage/mongo/index.js");
    const mongo = await connectMongoStore(config.MONGODB_URI);
    store = mongo;
    mongoClient = mongo.client;
    scheduler = await (await import("../jobs/agenda/index.js")).createMongoScheduler({ client: mongo.client, logger });
  } else {
    store = openSqliteStore({ path: join(dataDir, "familiar.db"), clock });
    // Agenda loads only when there is a job to run (see jobs/lazy.ts).
    const jobsPath = join(dataDir, "jobs.db");
    scheduler = new LazyScheduler({
      load: async () => (await import("../jobs/agenda/index.js")).createEmbeddedScheduler({ path: jobsPath, logger, soleOwner: true }),
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
  // Download links for files a messenger refused (the sessions' key signs them; it is read below).
  let linkFile: ((personId: string, artifactId: string) => string) | null = null;
  const familiar = new Familiar({
    fileLink: (personId, artifactId) => linkFile?.(personId, artifactId) ?? null,
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
  linkFile = (personId, artifactId) => fileLink(sessions, config.PUBLIC_URL ?? url, personId, artifactId);
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
      familiar
        .alertOnOtherChannel("whatsapp", `WhatsApp stopped working (${reason}). Open ${url}/setup on the Familiar machine to pair it again.`)
        .catch((err: unknown) => logger.error({ err }, "could not tell the persons on WhatsApp on another channel that it stopped"));
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
        notificationJudgement: config.NOTIFY_MODEL_JUDGEMENT,
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
  http.mount(fileLinksRouter({ sessions, source: artifacts }));
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
