/**
 * Wiring of the connections framework (core/connections): the person's connections with the kinds
 * the connectors define, the change dispatcher that wakes watches, and FAMILIAR_CONFIG's
 * `connections` moved into the persons' vaults at start. Composition only: the behaviour is in
 * core/connections and core/runtime.
 */
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config/index.js";
import { Connections, importConfiguredConnections, type ConnectionKind } from "../core/connections/index.js";
import type { PersonId } from "../core/ids.js";
import type { Logger } from "../core/log/index.js";
import { ChangeDispatcher, type ChangeKinds } from "../core/runtime/index.js";
import type { SecretVault } from "../core/secrets/index.js";
import type { Store } from "../core/storage/index.js";

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
