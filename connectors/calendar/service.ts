/**
 * The calendar's running part: one sync job per calendar connection (Agenda, `calendar.sync`, every
 * `intervals` ms, so with MongoDB the jobs spread over processes), and what a sync hands on —
 * the connection's status for the Connections page, its changes for the tasks that wait on them
 * (recorded in the store's change sequence, matched by the connection kind's filter), and new
 * conflicts among the person's own calendars proposed through the notification filter, each once.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Clock } from "../../core/clock.js";
import type { Connections } from "../../core/connections/index.js";
import { asId, type ConnectionId, type PersonId } from "../../core/ids.js";
import type { Logger } from "../../core/log/index.js";
import type { Notifier } from "../../core/notify/index.js";
import type { Scheduler } from "../../core/scheduling/index.js";
import type { Connection } from "../../core/connections/index.js";
import type { Store } from "../../core/storage/index.js";
import { agendaFor, type AgendaEntry } from "./agenda.js";
import type { CaldavOptions } from "./caldav.js";
import type { CalendarChange } from "./changes.js";
import { findConflicts, type Conflict } from "./conflicts.js";
import type { CalendarConnection, CalendarConnections } from "./connections.js";
import type { CalendarHttp } from "./http.js";
import { CALENDAR_CHANGE_KIND, caldavSettingsSchema, icsSettingsSchema, type ChangeFacts } from "./kinds.js";
import { entryInputs, quote, whenWords } from "./present.js";
import type { CalendarStore } from "./store.js";
import { syncCaldavSource, syncFeedSource, type SyncOutcome } from "./sync.js";
import { expandSeries } from "./ical/expand.js";

/** The sync job's name; its key is the connection id. */
export const CALENDAR_SYNC_JOB = "calendar.sync";

/** What the service needs. */
export interface CalendarServiceDeps {
  store: CalendarStore;
  connections: Pick<Connections, "list" | "get" | "secretOf" | "setStatus" | "granted">;
  core: Pick<Store, "changes" | "persons">;
  notifier: Pick<Notifier, "propose">;
  scheduler: Pick<Scheduler, "schedule" | "cancel">;
  /** Wakes the watches of a person after changes were recorded. */
  pokeWatches(personId: PersonId): void;
  /**
   * The egress path for requests that carry `credential` (a connection's own password) on purpose
   * to the connection's server; null for requests that must carry no vault value at all (feeds).
   */
  httpFor(credential: string | null): CalendarHttp;
  clock: Clock;
  logger: Logger;
  /** Sync intervals, ms: CalDAV accounts and feeds. */
  intervals: { caldavMs: number; feedMs: number };
  /** How far ahead conflicts are looked for, days (default 30). */
  conflictDays?: number;
  caldav?: CaldavOptions;
  /** This process's name in sync leases (default: host, pid and a random suffix). */
  owner?: string;
  /** How long a sync lease lasts without renewal, ms (default 60 s; renewed every third of it while the sync runs). */
  leaseMs?: number;
}

/** The default sync lease, ms: a process that dies mid-sync holds up its source's sync for at most this long. */
export const CALENDAR_SYNC_LEASE_MS = 60_000;

/** The calendar connections' sync, changes and conflicts. */
export class CalendarService {
  /** The sync of each connection running in this process (its repeating job and a `:now` one may overlap). */
  private readonly running = new Map<string, Promise<SyncOutcome | null>>();
  private readonly owner: string;
  private runs = 0;

  constructor(private readonly deps: CalendarServiceDeps) {
    this.owner = deps.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /** The port the calendar tools read connections through. */
  connectionsPort(): CalendarConnections {
    const { connections } = this.deps;
    return {
      list: async (personId) => (await connections.list({ personId })).flatMap(toCalendarConnection),
      listAll: async () => (await connections.list()).flatMap(toCalendarConnection),
      credentials: async (personId, connectionId) => {
        const c = await connections.get(asId("connection", connectionId), personId);
        const settings = c === null ? null : caldavSettingsSchema.safeParse(c.settings);
        const password = c === null ? null : connections.secretOf(c);
        if (c === null || settings === null || !settings.success || password === null) throw new Error("the calendar connection is gone or has no password; connect it again");
        return { serverUrl: settings.data.url, username: settings.data.user, password };
      },
      granted: (personId, capability) => connections.granted(personId, "caldav", capability) || (capability === "read" && connections.granted(personId, "ics", "read")),
    };
  }

  /** A connection was made, changed or removed: its sync job follows (and a new one syncs at once). */
  async changed(id: ConnectionId, connection: Connection | null): Promise<void> {
    if (connection === null || !connection.capabilities.includes("read")) {
      await this.deps.scheduler.cancel(CALENDAR_SYNC_JOB, id);
      if (connection === null) await this.forget(id);
      return;
    }
    await this.schedule(connection);
    await this.deps.scheduler.schedule({ name: CALENDAR_SYNC_JOB, key: `${id}:now`, data: { connectionId: id }, timing: { kind: "now" } });
  }

  /** Makes sure every calendar connection has its sync job (at start). */
  async reconcile(): Promise<void> {
    for (const c of await this.deps.connections.list()) {
      if ((c.kind === "caldav" || c.kind === "ics") && c.capabilities.includes("read")) await this.schedule(c);
    }
  }

  private async schedule(connection: Connection): Promise<void> {
    const intervalMs = connection.kind === "ics" ? this.deps.intervals.feedMs : this.deps.intervals.caldavMs;
    await this.deps.scheduler.schedule({ name: CALENDAR_SYNC_JOB, key: connection.id, data: { connectionId: connection.id }, timing: { kind: "every", intervalMs } });
  }

  /** Deletes the synced calendars of a connection that is gone (its events, sync state, everything). */
  private async forget(id: ConnectionId): Promise<void> {
    await this.deps.store.removeSource(id);
  }

  /**
   * The sync job: syncs the connection, records its status, its changes and new conflicts. A
   * connection that is gone cancels its job. Never throws for the connection's own failures
   * (they are its status); store failures propagate (the job runs again).
   *
   * Syncs of one connection never overlap, so a change is never recorded twice by two at once: in
   * this process they run one after the other; across processes sharing the store (MongoDB, or
   * several processes on one SQLite file) each sync holds the source's lease in the calendar store.
   * A sync that finds the lease held elsewhere returns null at once, and the holder syncs once more
   * when it is done, so what this one was asked for still happens.
   */
  async sync(connectionId: string): Promise<SyncOutcome | null> {
    const before = this.running.get(connectionId) ?? Promise.resolve(null);
    const mine = before.catch(() => null).then(() => this.syncLeased(connectionId));
    this.running.set(connectionId, mine);
    try {
      return await mine;
    } finally {
      if (this.running.get(connectionId) === mine) this.running.delete(connectionId);
    }
  }

  /** Syncs under the source's lease, again while another process asked for a sync meanwhile (bounded). */
  private async syncLeased(connectionId: string): Promise<SyncOutcome | null> {
    const { store, clock, logger } = this.deps;
    const leaseMs = this.deps.leaseMs ?? CALENDAR_SYNC_LEASE_MS;
    const holder = `${this.owner}#${++this.runs}`;
    if (!(await store.claimSync(connectionId, holder, clock.now(), leaseMs))) {
      logger.info({ connectionId }, "calendar sync skipped: another process is syncing this connection and will sync it again");
      return null;
    }
    const renewal = setInterval(() => {
      store.renewSync(connectionId, holder, clock.now(), leaseMs).then(
        (held) => held || logger.warn({ connectionId }, "calendar sync lease lost: another process may sync this connection at the same time"),
        (err: unknown) => logger.warn({ err, connectionId }, "calendar sync lease could not be renewed"),
      );
    }, Math.max(1_000, Math.floor(leaseMs / 3)));
    renewal.unref();
    let outcome: SyncOutcome | null = null;
    let held = true;
    try {
      for (let round = 0; round < 5; round++) {
        if (round > 0 && !(await store.claimSync(connectionId, holder, clock.now(), leaseMs))) break;
        held = true;
        outcome = await this.syncNow(connectionId);
        held = false;
        if (!(await store.releaseSync(connectionId, holder))) break;
      }
    } finally {
      clearInterval(renewal);
      if (held) await store.releaseSync(connectionId, holder).catch(() => false);
    }
    return outcome;
  }

  private async syncNow(connectionId: string): Promise<SyncOutcome | null> {
    const { connections, clock } = this.deps;
    const id = asId("connection", connectionId);
    const connection = await connections.get(id);
    if (connection === null || (connection.kind !== "caldav" && connection.kind !== "ics")) {
      await this.deps.scheduler.cancel(CALENDAR_SYNC_JOB, id);
      return null;
    }
    if (!connection.capabilities.includes("read")) return null;
    const personId = connection.personId;
    const zone = (await this.deps.core.persons.getPerson(personId))?.timeZone ?? "UTC";
    let outcome: SyncOutcome;
    try {
      outcome = connection.kind === "caldav" ? await this.syncCaldav(connection) : await this.syncFeed(connection);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await connections.setStatus(id, { ...connection.status, state: "error", mode: "polling", lastError: message, checkedAt: clock.now() });
      this.deps.logger.warn({ connectionId: id, kind: connection.kind, error: message }, "calendar sync failed; the stored copy is kept");
      return null;
    }
    const failed = outcome.calendars.filter((c) => c.error !== null);
    const problems = [...failed.map((c) => `${quote(c.name, 60)}: ${c.error}`), ...outcome.errors.slice(0, 3).map((e) => `${e.item}: ${e.message}`)];
    if (outcome.errors.length > 3) problems.push(`and ${outcome.errors.length - 3} more items that could not be read`);
    const now = clock.now();
    await connections.setStatus(id, { state: failed.length > 0 ? "error" : "ok", mode: "polling", lastSyncAt: now, lastError: problems.length > 0 ? problems.join("; ") : null, checkedAt: now });
    await this.recordChanges(connection, outcome.changes, zone);
    if (connection.kind === "caldav") await this.announceConflicts(personId, zone);
    return outcome;
  }

  private async syncCaldav(connection: Connection): Promise<SyncOutcome> {
    const settings = caldavSettingsSchema.parse(connection.settings);
    const password = this.deps.connections.secretOf(connection);
    if (password === null) throw new Error("the app password is missing from the vault; connect the calendar again");
    const deps = { store: this.deps.store, http: this.deps.httpFor(password), clock: this.deps.clock, caldav: this.deps.caldav };
    return syncCaldavSource(deps, connection.personId, connection.id, { serverUrl: settings.url, username: settings.user, password });
  }

  private async syncFeed(connection: Connection): Promise<SyncOutcome> {
    const settings = icsSettingsSchema.parse(connection.settings);
    const deps = { store: this.deps.store, http: this.deps.httpFor(null), clock: this.deps.clock };
    return syncFeedSource(deps, connection.personId, connection.id, settings.url, settings.name);
  }

  /** Records the sync's changes in the store's change sequence and wakes the person's watches. */
  private async recordChanges(connection: Connection, changes: CalendarChange[], zone: string): Promise<void> {
    if (changes.length === 0) return;
    const now = this.deps.clock.now();
    const recorded = await this.deps.core.changes.commitChanges({
      connectionId: connection.id,
      personId: connection.personId,
      source: "calendar",
      cursor: { syncedAt: now.toISOString() },
      now,
      changes: changes.map((c) => {
        const facts: ChangeFacts = { kind: c.kind, calendarName: c.calendarName, sourceKind: c.sourceKind, uid: c.uid, title: c.title, when: firstWhen(c.after ?? c.before, zone, now), before: c.kind === "moved" ? firstWhen(c.before, zone, now) : null };
        return { key: `${c.calendarId}|${c.uid}|${c.kind}|${now.getTime()}`, kind: CALENDAR_CHANGE_KIND, topic: c.uid, occurredAt: now, data: facts };
      }),
    });
    if (recorded.length > 0) this.deps.pokeWatches(connection.personId);
  }

  /** Finds overlaps among the person's own calendars ahead and proposes each new one once. */
  private async announceConflicts(personId: PersonId, zone: string): Promise<void> {
    const now = this.deps.clock.now().getTime();
    const own = (await this.deps.connections.list({ personId, kind: "caldav" })).filter((c) => c.capabilities.includes("read")).map((c) => c.id as string);
    const calendarIds = (await this.deps.store.listCalendars(personId)).filter((c) => c.kind === "caldav" && own.includes(c.sourceId)).map((c) => c.calendarId);
    const agenda = await agendaFor(this.deps.store, personId, { fromMs: now, toMs: now + (this.deps.conflictDays ?? 30) * 86_400_000 }, zone, { calendarIds });
    const conflicts = findConflicts(agenda.entries);
    if (conflicts.length === 0) return;
    const fresh = new Set(await this.deps.store.recordConflicts(personId, conflicts.map((c) => c.key), this.deps.clock.now()));
    for (const conflict of conflicts.filter((c) => fresh.has(c.key))) {
      await this.deps.notifier.propose({
        personId,
        taskId: null,
        deliveryKey: `calendar:${conflict.key}`,
        candidate: {
          text: conflictText(conflict, zone),
          origin: "monitor",
          notify: "if_worthwhile",
          urgency: "normal",
          needsAction: true,
          deadline: new Date(conflict.first.startMs),
          occurrenceKey: `calendar:${conflict.key}`,
          // Titles come from outside (anyone who sends an invitation writes one).
          provenance: { tainted: true, fromPersonWords: false },
        },
      });
    }
  }
}

function toCalendarConnection(c: Connection): CalendarConnection[] {
  if (c.kind !== "caldav" && c.kind !== "ics") return [];
  const settings = c.settings as { url?: unknown; user?: unknown };
  return [
    {
      id: c.id,
      personId: c.personId,
      kind: c.kind,
      label: c.label,
      url: typeof settings.url === "string" ? settings.url : "",
      username: typeof settings.user === "string" ? settings.user : null,
      capabilities: { read: c.capabilities.includes("read"), write: c.kind === "caldav" && c.capabilities.includes("write") },
    },
  ];
}

/** A conflict in words, in the person's zone. */
export function conflictText(conflict: Conflict, zone: string): string {
  const side = (e: AgendaEntry) => {
    const { start, end } = entryInputs(e, zone);
    return `${quote(e.details.title, 80)} (${whenWords(start, end, zone)}, calendar ${quote(e.calendarName, 60)})`;
  };
  return `Calendar conflict: ${side(conflict.first)} overlaps ${side(conflict.second)}.`;
}

/** The next occurrence of a series from `now` (or its first) in words. */
function firstWhen(series: CalendarChange["after"], zone: string, now: Date): string | null {
  if (series === null) return null;
  const ahead = expandSeries(series, { fromMs: now.getTime(), toMs: now.getTime() + 400 * 86_400_000, zone, maxOccurrences: 1 }).occurrences[0];
  const first = ahead ?? expandSeries(series, { fromMs: -8.64e15, toMs: 8.64e15, zone, maxOccurrences: 1 }).occurrences[0];
  if (first === undefined) return null;
  const { start, end } = entryInputs(first, zone);
  return whenWords(start, end, zone);
}
