/**
 * Wiring of the calendar connector: its store (SQLite on its own connection to DATA_DIR's database,
 * or MongoDB), its connection kinds, its sync service and its tools. Composition only.
 */
import { join } from "node:path";
import type { MongoClient } from "mongodb";
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config/index.js";
import type { Connections } from "../core/connections/index.js";
import { EgressGuard } from "../core/egress/index.js";
import type { PersonId } from "../core/ids.js";
import type { Logger } from "../core/log/index.js";
import type { Notifier } from "../core/notify/index.js";
import type { Scheduler } from "../core/scheduling/index.js";
import type { SecretVault } from "../core/secrets/index.js";
import type { Store } from "../core/storage/index.js";
import type { ToolDefinition } from "../core/tools/index.js";
import {
  CalendarService,
  calendarKinds,
  calendarReadTools,
  calendarWatchTool,
  calendarWriteTools,
  MongoCalendarStore,
  SqliteCalendarStore,
  type CalendarHttp,
  type CalendarStore,
} from "../connectors/calendar/index.js";
import type { ConnectionKind } from "../core/connections/index.js";

/** The calendar's parts, in the order the composition root needs them. */
export interface CalendarWiring {
  kinds: ConnectionKind[];
  /** Needs the connections (made with `kinds`): returns the tools and the sync handler. */
  attach(deps: { connections: Connections; notifier: Pick<Notifier, "propose">; pokeWatches(personId: PersonId): void; pokeTasks(): void }): { tools: ToolDefinition[]; service: CalendarService };
  close(): Promise<void>;
}

/**
 * Opens the calendar store and makes the kinds. Requests go through an egress guard per connection
 * that lets that connection's own credential (in the person's vault, bound to no origin) go to its
 * server, and checks every other vault value as the shared guard does.
 */
export async function wireCalendar(deps: { config: Config; dataDir: string; store: Store; vault: SecretVault; clock: Clock; logger: Logger; scheduler: Scheduler; mongo?: MongoClient }): Promise<CalendarWiring> {
  let calendarStore: CalendarStore;
  let close: () => Promise<void>;
  if (deps.mongo) {
    const mongoStore = new MongoCalendarStore(deps.mongo.db());
    await mongoStore.ensureIndexes();
    calendarStore = mongoStore;
    close = async () => undefined;
  } else {
    const sqlite = new SqliteCalendarStore({ path: join(deps.dataDir, "familiar.db") });
    calendarStore = sqlite;
    close = async () => sqlite.close();
  }
  const httpFor = (credential: string | null): CalendarHttp =>
    new EgressGuard({
      privateHostsAllowed: deps.config.PRIVATE_HOSTS_ALLOWED,
      // The connection's own password goes to its server on purpose (whichever vault entries hold the
      // same value: one app password for mail and calendar, an account two persons share); any other
      // vault value is refused as everywhere else.
      outboundCheck: (texts, origin) => deps.vault.unboundIn(texts, origin, credential === null ? [] : [credential]),
    });
  let service: CalendarService | null = null;
  const kinds = calendarKinds({ httpFor, changed: async (id, connection) => service?.changed(id, connection) });
  const personZone = async (personId: PersonId) => (await deps.store.persons.getPerson(personId))?.timeZone ?? "UTC";
  return {
    kinds,
    attach(attached) {
      service = new CalendarService({
        store: calendarStore,
        connections: attached.connections,
        core: deps.store,
        notifier: attached.notifier,
        scheduler: deps.scheduler,
        pokeWatches: (personId) => attached.pokeWatches(personId),
        httpFor,
        clock: deps.clock,
        logger: deps.logger,
        intervals: { caldavMs: deps.config.CALENDAR_SYNC_INTERVAL_MS, feedMs: deps.config.CALENDAR_FEED_INTERVAL_MS },
        conflictDays: deps.config.CALENDAR_CONFLICT_DAYS,
      });
      const connections = service.connectionsPort();
      const tools = [
        ...calendarReadTools({ store: calendarStore, connections, personZone }),
        ...calendarWriteTools({ store: calendarStore, connections, httpFor, clock: deps.clock, personZone }),
        calendarWatchTool({ store: deps.store, connections, poke: () => attached.pokeTasks() }),
      ];
      return { tools, service };
    },
    close,
  };
}
