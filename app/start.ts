/**
 * `startApp`: one Familiar process, as a sequence of the composition root's factories — the data
 * folder and the store (app/store.ts), the secrets (app/secrets.ts), the model (app/model.ts), the
 * runtime (app/runtime.ts), the HTTP server and the channels (app/web.ts, app/channels.ts) — then
 * everything is started in order. `npm start` runs `main()` (main.ts), which calls it; tests call it
 * in-process.
 */
import { systemClock, type Clock } from "../core/clock.js";
import { listenHost, secretValues, type Config } from "../core/config/index.js";
import { addressesOf, startLine, type Addresses } from "./addresses.js";
import { createLogger, type Logger } from "../core/log/index.js";
import type { Scheduler } from "../core/scheduling/index.js";
import type { Store } from "../core/storage/index.js";
import { startHousekeeping } from "../jobs/index.js";
import type { WebSessions } from "../web/api/index.js";
import type { HttpServer } from "../web/http/index.js";
import { createChannels, type Channels } from "./channels.js";
import type { Familiar } from "./familiar.js";
import { createModels, type Models } from "./model.js";
import { createRuntime, type Runtime } from "./runtime.js";
import { createSecrets } from "./secrets.js";
import { createStorage, prepareDataDir, type Storage } from "./store.js";
import { createHttp, mountLocalApis, mountWebApp } from "./web.js";

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

/** Options of {@link startApp} (tests). */
export interface StartOptions {
  clock?: Clock;
  logDestination?: NodeJS.WritableStream;
  /** Called with the core before anything starts (tests add tools and channels). */
  configure?: (familiar: Familiar) => void;
}

/**
 * Where people open Familiar (app/addresses.ts): on this machine, and — PUBLIC_URL, else this
 * machine's network address when it listens beyond loopback — from other devices; known in full
 * once the port is bound.
 */
class Address {
  readonly host: string;
  current: Addresses;
  constructor(private readonly config: Config) {
    this.host = listenHost(config);
    this.current = addressesOf(this.host, config.PORT, config.PUBLIC_URL);
  }
  bound(port: number): void {
    this.current = addressesOf(this.host, port, this.config.PUBLIC_URL);
  }
  get url(): string {
    return this.current.local;
  }
  publicUrl = (): string => this.current.public;
  local = (): string => this.current.local;
}

/**
 * Starts Familiar: data directory, store (SQLite under DATA_DIR, or MongoDB when MONGODB_URI is
 * set — its connection is checked before anything else starts), scheduler, model, channels, HTTP.
 * Throws when the store cannot be opened or the port cannot be bound.
 */
export async function startApp(config: Config, options: StartOptions = {}): Promise<RunningApp> {
  const clock = options.clock ?? systemClock;
  const { logger, addSecret, registry } = createLogger({ level: config.LOG_LEVEL, secrets: secretValues(config), ...(options.logDestination && { destination: options.logDestination }) });
  const dataDir = prepareDataDir(config, logger);
  const storage = await createStorage(config, { dataDir, clock, logger, scrubDeep: registry.scrubDeep });
  const secrets = await createSecrets(config, { dataDir, addSecret });
  const workspace = { quotaBytes: config.WORKSPACE_QUOTA_MB * 1024 * 1024 };
  const models = createModels(config, { setup: secrets.setup, dataDir, workspace, logger, knownSecrets: () => registry.list() });
  const address = new Address(config);
  const runtime = await createRuntime(config, { storage, secrets, models, clock, logger, scrub: registry.scrub, dataDir, workspace, publicUrl: address.publicUrl });
  const http = createHttp(logger, storage, registry, runtime.computer);
  const channels = createChannels(config, { familiar: runtime.familiar, storage, secrets, http, clock, logger, dataDir, url: address.local });
  options.configure?.(runtime.familiar);
  const sessions = await mountWebApp(config, http, { runtime, channels, storage, secrets, models, clock, logger, dataDir, publicUrl: address.publicUrl, devices: () => address.current });
  const messengers = await channels.startMessengers();
  mountLocalApis(http, { runtime, channels, storage, secrets, whatsapp: messengers.whatsapp });
  return begin(config, { runtime, channels, storage, models, http, sessions, address, dataDir, logger, clock, notConfigured: messengers.notConfigured });
}

/** Starts the scheduler, housekeeping, the core and the channels, then listens; says where to open it. */
async function begin(
  config: Config,
  parts: { runtime: Runtime; channels: Channels; storage: Storage; models: Models; http: HttpServer; sessions: WebSessions; address: Address; dataDir: string; logger: Logger; clock: Clock; notConfigured: string[] },
): Promise<RunningApp> {
  const { runtime, channels, storage, http, address, logger, clock } = parts;
  const { familiar } = runtime;
  const { store, scheduler } = storage;
  await scheduler.start();
  await runtime.connectors.start();
  const stopHousekeeping = startHousekeeping({ pruneInbound: (before) => store.inbound.pruneProcessedUpdates(before), logger, now: () => clock.now() });
  const started = await familiar.start();
  channels.status.started(started);
  address.bound(await http.listen(address.host, config.PORT));
  const url = address.url;
  const model = parts.models.switchable;
  logger.info(
    { url, network: address.current.network, dataDir: parts.dataDir, store: store.kind, scheduler: scheduler.status().backend, model: model.configured ? model.model : null, channels: started.started, notConfigured: parts.notConfigured },
    `Familiar is running: open ${url} to chat`,
  );
  // One line a person reads (the log above is JSON for machines).
  process.stderr.write(`${startLine(address.current, model.configured, config.LOCAL_CHAT_ALLOW_REMOTE)}\n`);
  if (config.LOCAL_CHAT_ALLOW_REMOTE) {
    logger.warn("LOCAL_CHAT_ALLOW_REMOTE is on: other machines may open the web app and must sign in (a /web link on a messenger, or the setup password); use HTTPS (PUBLIC_URL) in front of it");
    // Printed to the console only (never a messenger): whoever reads the server's log owns the install.
    process.stderr.write(`\nOwner sign-in link (valid 24 h, once): ${address.publicUrl().replace(/\/$/, "")}/signin#token=${parts.sessions.createOwnerLink()}\n\n`);
  }
  if (!model.configured) logger.warn(`no model configured: open ${url}/setup to choose one, or set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server)`);
  for (const f of started.failed) logger.error({ channel: f.channel, error: f.error }, "channel not started");
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      const deadline = config.SHUTDOWN_DEADLINE_MS;
      channels.chatLog.releaseAll();
      stopHousekeeping();
      await http.close();
      await runtime.connectors.stop();
      await familiar.stop(deadline);
      await runtime.browser.close();
      await scheduler.drain(deadline);
      await runtime.connectors.close();
      // The start-up probe (a sandboxed `echo ok`, bounded by its own wall time) ends before DATA_DIR may go.
      await runtime.computer.status;
      await store.close();
    })());
  return { familiar, store, scheduler, http, url, logger, stop };
}
