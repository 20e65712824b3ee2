/**
 * Wiring of the connections framework (core/connections): the person's connections with the kinds
 * the connectors define, the change dispatcher that wakes watches, and FAMILIAR_CONFIG's
 * `connections` moved into the persons' vaults at start. Composition only: the behaviour is in
 * core/connections and core/runtime.
 */
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config/index.js";
import { ConnectDesk, Connections, importConfiguredConnections, type ConnectionKind } from "../core/connections/index.js";
import type { PersonId } from "../core/ids.js";
import { registerConnectCommands, type CommandRegistry } from "../core/inbound/index.js";
import type { Logger } from "../core/log/index.js";
import type { Notifier } from "../core/notify/index.js";
import type { Outbound } from "../core/outbox/index.js";
import { ChangeDispatcher, type ChangeKinds } from "../core/runtime/index.js";
import type { SecretVault } from "../core/secrets/index.js";
import type { Store } from "../core/storage/index.js";
import type { ToolDefinition } from "../core/tools/index.js";
import { wireCalendar } from "./calendar.js";
import { wireEmail } from "./email.js";
import type { Storage } from "./store.js";

/** The wired framework. */
export interface ConnectionsWiring {
  connections: Connections;
  dispatcher: ChangeDispatcher;
  /** Loads the grants, imports FAMILIAR_CONFIG's connections (each problem logged), starts the dispatcher. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Builds the connections and the change dispatcher over `kinds`. */
export function wireConnections(deps: {
  store: Store;
  vault: SecretVault;
  clock: Clock;
  logger: Logger;
  kinds: readonly ConnectionKind[];
  configured: Config["connections"];
  pokeTasks: () => void;
}): ConnectionsWiring {
  const connections = new Connections({ store: deps.store, vault: deps.vault, clock: deps.clock, logger: deps.logger, kinds: deps.kinds });
  const kinds: ChangeKinds = {
    changeKind: (kind) => connections.kind(kind)?.changes?.changeKind ?? null,
    matches: (kind, filter, change) => connections.kind(kind)?.changes?.matches(filter, change) ?? false,
    observe: (kind, change) => connections.kind(kind)?.changes?.observe(change) ?? { source: kind, text: `A change in a ${kind} connection.` },
  };
  const dispatcher = new ChangeDispatcher({ store: deps.store, clock: deps.clock, kinds, logger: deps.logger, pokeTasks: deps.pokeTasks });
  return {
    connections,
    dispatcher,
    async start() {
      await connections.start();
      const report = await importConfiguredConnections(deps.configured, { connections, store: deps.store, env: process.env });
      if (deps.configured.length > 0) deps.logger.info({ connected: report.connected, problems: report.problems.length }, "connections from FAMILIAR_CONFIG imported");
      for (const problem of report.problems) deps.logger.error({ problem }, "a FAMILIAR_CONFIG connection could not be used");
      dispatcher.start();
    },
    async stop() {
      connections.stop();
      await dispatcher.stop();
    },
  };
}

/** A late-bound "watch re-armed" hook (the dispatcher is built after the runtime that calls it). */
export function watchArmedHook(): { hook: (personId: PersonId) => void; bind(dispatcher: ChangeDispatcher): void } {
  let target: ChangeDispatcher | null = null;
  return {
    hook: (personId) => target?.poke(personId),
    bind: (dispatcher) => {
      target = dispatcher;
    },
  };
}

/** The connectors in the process (connections, calendars, mailboxes): their tools, sync jobs, start and stop. */
export interface Connectors {
  tools: ToolDefinition[];
  /** The person's connections and the desk of one-time `/connect` links (the web app's Connections API and form). */
  connections: Connections;
  desk: ConnectDesk;
  /** The `calendar.sync` job's handler: one sync of a calendar connection. */
  syncCalendar(connectionId: string): Promise<unknown>;
  /** The `email.sync` job's handler: one sync session of a mailbox. */
  syncMailbox(connectionId: string): Promise<unknown>;
  /** After the scheduler: the connections' grants and FAMILIAR_CONFIG's imports, the dispatcher, the calendar's sync jobs. */
  start(): Promise<void>;
  /** Before the core stops: no more connection changes are dispatched; the mailbox sessions end (their jobs return). */
  stop(): Promise<void>;
  /** After the scheduler drained: the calendar's own store, the mail parse workers. */
  close(): Promise<void>;
}

/**
 * Builds the connectors over the running core: the calendar's and email's kinds, the connections
 * framework with them, the change dispatcher (bound to `watchArmed`, the hook the core calls when a
 * watch re-arms), their services and tools, the `/connect` desk and chat commands. Throws when the
 * calendar's store cannot be opened.
 */
export async function createConnectors(
  config: Config,
  parts: {
    storage: Storage;
    vault: SecretVault;
    core: { notifier: Pick<Notifier, "propose">; taskLoop: { poke(): void }; outbound: Pick<Outbound, "queue">; commands: CommandRegistry };
    watchArmed: ReturnType<typeof watchArmedHook>;
    clock: Clock;
    logger: Logger;
    dataDir: string;
    workspace: { quotaBytes: number };
    publicUrl: () => string;
  },
): Promise<Connectors> {
  const { storage, vault, clock, logger, core } = parts;
  const { store, scheduler } = storage;
  const pokeTasks = () => core.taskLoop.poke();
  // Connections (mailboxes, calendars): the kinds come from the connectors; changes wake watches.
  const calendar = await wireCalendar({ config, dataDir: parts.dataDir, store, vault, clock, logger, scheduler, ...(storage.mongoClient && { mongo: storage.mongoClient }) });
  const email = wireEmail({ config, dataDir: parts.dataDir, store, clock, logger, scheduler, workspace: parts.workspace });
  const connected = wireConnections({ store, vault, clock, logger, kinds: [...calendar.kinds, ...email.kinds], configured: config.connections, pokeTasks });
  parts.watchArmed.bind(connected.dispatcher);
  const pokeWatches = (personId: PersonId) => connected.dispatcher.poke(personId);
  const calendarParts = calendar.attach({ connections: connected.connections, notifier: core.notifier, pokeWatches, pokeTasks });
  const emailParts = email.attach({ connections: connected.connections, pokeWatches });
  const desk = new ConnectDesk({ connections: connected.connections, clock, publicUrl: parts.publicUrl, outbound: core.outbound });
  registerConnectCommands(core.commands, { desk, connections: connected.connections });
  return {
    tools: [...calendarParts.tools, ...emailParts.tools],
    connections: connected.connections,
    desk,
    syncCalendar: (connectionId) => calendarParts.service.sync(connectionId),
    syncMailbox: (connectionId) => emailParts.service.runSession(connectionId),
    async start() {
      await connected.start();
      await calendarParts.service.reconcile();
      await emailParts.service.ensureJobs();
    },
    async stop() {
      await connected.stop();
      await emailParts.service.stop();
    },
    async close() {
      await calendar.close();
      await email.close();
    },
  };
}
