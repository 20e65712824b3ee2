/**
 * Wiring of the email connector: the mail parse workers, the `email` connection kind, the sync
 * service whose sessions the `email.sync` job runs (one job per mailbox, keyed by its connection id),
 * and the email tools with the person's workspace for attachments. Composition only: the behaviour
 * is in connectors/email and core/connections.
 */
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config/index.js";
import type { ConnectionKind, Connections } from "../core/connections/index.js";
import type { PersonId } from "../core/ids.js";
import type { Logger } from "../core/log/index.js";
import type { Scheduler } from "../core/scheduling/index.js";
import type { Store } from "../core/storage/index.js";
import type { ToolDefinition } from "../core/tools/index.js";
import { createParsePool, emailConnectionKind, emailTools, EmailService, type MailWorkspace } from "../connectors/email/index.js";
import { jobs } from "../jobs/index.js";
import { Workspace } from "../sandbox/workspace/index.js";

/** The email connector's parts, in the order the composition root needs them. */
export interface EmailWiring {
  kinds: ConnectionKind[];
  /** Needs the connections (made with `kinds`): returns the tools and the service (its `runSession` is the job). */
  attach(deps: { connections: Connections; pokeWatches(personId: PersonId): void }): { tools: ToolDefinition[]; service: EmailService };
  /** Ends the sessions (their jobs return) and the parse workers. */
  close(): Promise<void>;
}

/** The person's workspace as the email tools read and write it (the same jail as the file tools). */
function mailWorkspace(dataDir: string, workspace: { quotaBytes: number }): MailWorkspace {
  return {
    readFile: (personId, path, maxBytes) => Workspace.of(dataDir, personId, workspace).readBytes(path, maxBytes),
    writeFile: (personId, path, content) => Workspace.of(dataDir, personId, workspace).write(path, content),
  };
}

/** Makes the kind; the service is made once the connections exist (`attach`). */
export function wireEmail(deps: { config: Config; dataDir: string; store: Store; clock: Clock; logger: Logger; scheduler: Scheduler; workspace: { quotaBytes: number } }): EmailWiring {
  const parser = createParsePool({ workers: 2 });
  let service: EmailService | null = null;
  const kind = emailConnectionKind({ parser, changed: async (id, connection) => service?.changed(id, connection) });
  const name = jobs.emailSync.name;
  return {
    kinds: [kind],
    attach(attached) {
      service = new EmailService({
        connections: attached.connections,
        store: deps.store,
        clock: deps.clock,
        logger: deps.logger,
        parser,
        dispatcher: { poke: (personId) => attached.pokeWatches(personId) },
        timings: { sessionMs: deps.config.EMAIL_SYNC_SESSION_MS, watchdogMs: deps.config.EMAIL_WATCHDOG_MS, pollMs: deps.config.EMAIL_POLL_MS },
        jobs: {
          // Repeating every second: the next session is due as soon as one ends (a running one holds the lock).
          start: async (connectionId) => void (await deps.scheduler.schedule({ name, key: connectionId, data: { connectionId }, timing: { kind: "every", intervalMs: 1_000 } })),
          exists: async (connectionId) => (await deps.scheduler.nextRunAt(name, connectionId)) !== null,
          cancel: async (connectionId) => void (await deps.scheduler.cancel(name, connectionId)),
        },
      });
      const tools = emailTools({
        service,
        connections: attached.connections,
        store: deps.store,
        workspace: mailWorkspace(deps.dataDir, deps.workspace),
        automaticPerThread: deps.config.EMAIL_AUTOMATIC_SENDS_PER_THREAD,
        pokeWatches: (personId) => attached.pokeWatches(personId),
      });
      return { tools, service };
    },
    async close() {
      await service?.stop();
      await parser.close();
    },
  };
}
