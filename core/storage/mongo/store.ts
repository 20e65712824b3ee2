/**
 * `MongoStore`: every repository of the `Store` port on one MongoDB database. Build it with
 * `connectMongoStore(uri)` (connects, pings, ensures indexes, detects transactions) or, on a database
 * handle you already have, `new MongoStore(db, { client })` followed by `await store.ensureIndexes()`.
 */
import type { MongoClient } from "mongodb";
import { systemClock, type Clock } from "../../clock.js";
import type { Store, StoreHealth } from "../index.js";
import { MongoAccessRepository } from "./roles.js";
import { MongoApprovalRepository } from "./approval-requests.js";
import { MongoAuditRepository } from "./audit.js";
import { MongoConversationRepository } from "./conversation.js";
import type { DbLike } from "./driver.js";
import { MongoGoalRepository } from "./goals.js";
import { MongoGrantRepository } from "./grants.js";
import { MongoHookRepository } from "./hooks.js";
import { MongoModelUsageRepository } from "./usage.js";
import { MongoHookEventRepository } from "./hook-events.js";
import { MongoChangeRepository, MongoConnectionRepository } from "./connections.js";
import { MongoArtifactRepository } from "./artifacts.js";
import { MongoInboundRepository } from "./inbound.js";
import { MongoJournalRepository } from "./journal.js";
import { MongoLocalMailboxRepository } from "./local-mailbox.js";
import { MongoMemoryRepository } from "./memory.js";
import { MongoNotificationRepository } from "./notifications.js";
import { MongoOutboxRepository } from "./outbox.js";
import { MongoPersonRepository } from "./persons.js";
import { MongoSentinelStateRepository } from "./sentinel-state.js";
import { isRetryableInTransaction, mapMongoError } from "./errors.js";
import { ensureIndexes, sessionStorage } from "./session.js";
import { MongoTaskRepository } from "./tasks.js";

export interface MongoStoreOptions {
  /**
   * The client that owns `db`. Needed for transactions (sessions start on the client) and closed by
   * `close()`. Without it the store never uses transactions and `close()` closes nothing.
   */
  client?: MongoClient;
  /**
   * Whether the deployment runs transactions (replica set or mongos). `connectMongoStore` detects it
   * with `hello`; default false. Ignored without `client`.
   */
  supportsTransactions?: boolean;
  /** Source of `createdAt` / `updatedAt` and other store-assigned times. Default: the system clock. */
  clock?: Clock;
}

/** The MongoDB adapter of the `Store` port. */
export class MongoStore implements Store {
  readonly kind = "mongodb" as const;
  readonly supportsTransactions: boolean;
  /** The driver client (shared with Agenda's MongoBackend by the composition root), if any. */
  readonly client: MongoClient | undefined;
  readonly db: DbLike;

  readonly persons: MongoPersonRepository;
  readonly conversation: MongoConversationRepository;
  readonly goals: MongoGoalRepository;
  readonly tasks: MongoTaskRepository;
  readonly journal: MongoJournalRepository;
  readonly memory: MongoMemoryRepository;
  readonly grants: MongoGrantRepository;
  readonly approvals: MongoApprovalRepository;
  readonly sentinel: MongoSentinelStateRepository;
  readonly access: MongoAccessRepository;
  readonly audit: MongoAuditRepository;
  readonly outbox: MongoOutboxRepository;
  readonly inbound: MongoInboundRepository;
  readonly notifications: MongoNotificationRepository;
  readonly localMailbox: MongoLocalMailboxRepository;
  readonly hooks: MongoHookRepository;
  readonly artifacts: MongoArtifactRepository;
  readonly connections: MongoConnectionRepository;
  readonly changes: MongoChangeRepository;
  readonly usage: MongoModelUsageRepository;
  readonly hookEvents: MongoHookEventRepository;

  constructor(db: DbLike, options: MongoStoreOptions = {}) {
    this.db = db;
    this.client = options.client;
    this.supportsTransactions = options.client !== undefined && options.supportsTransactions === true;
    const clock = options.clock ?? systemClock;
    const atomically = <T>(fn: () => Promise<T>) => this.transaction(fn);
    this.persons = new MongoPersonRepository(db, clock);
    this.conversation = new MongoConversationRepository(db, clock, atomically);
    this.goals = new MongoGoalRepository(db, clock);
    this.tasks = new MongoTaskRepository(db, clock);
    this.journal = new MongoJournalRepository(db, clock);
    this.memory = new MongoMemoryRepository(db, clock);
    this.grants = new MongoGrantRepository(db, clock);
    this.approvals = new MongoApprovalRepository(db, clock);
    this.sentinel = new MongoSentinelStateRepository(db);
    this.access = new MongoAccessRepository(db);
    this.audit = new MongoAuditRepository(db, clock);
    this.outbox = new MongoOutboxRepository(db, clock);
    this.inbound = new MongoInboundRepository(db);
    this.notifications = new MongoNotificationRepository(db, clock);
    this.localMailbox = new MongoLocalMailboxRepository(db, atomically);
    this.hooks = new MongoHookRepository(db, clock);
    this.artifacts = new MongoArtifactRepository(db, atomically);
    this.connections = new MongoConnectionRepository(db, clock);
    this.changes = new MongoChangeRepository(db, atomically);
    this.usage = new MongoModelUsageRepository(db);
    this.hookEvents = new MongoHookEventRepository(db);
  }

  /** Creates the declared indexes (collections.ts). Idempotent; call once before use. */
  ensureIndexes(): Promise<void> {
    return ensureIndexes(this.db);
  }

  /**
   * Runs `fn` in a multi-document transaction when the deployment supports them: every repository
   * call inside `fn` joins it (the session travels through AsyncLocalStorage). The driver may run
   * `fn` again on a transient transaction error, so `fn` must only touch the store. A nested call
   * joins the outer transaction. Without transaction support `fn` simply runs.
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    const client = this.client;
    if (!this.supportsTransactions || client === undefined || sessionStorage.getStore() !== undefined) return fn();
    try {
      return await client.withSession((session) => session.withTransaction(() => sessionStorage.run(session, fn)));
    } catch (err) {
      // Errors the driver gave up retrying arrive here unmapped (see Coll.guard); everything else
      // (including what `fn` itself threw) passes through unchanged.
      throw isRetryableInTransaction(err) ? mapMongoError(err, "transaction") : err;
    }
  }

  /** Pings the server; `ok: false` with the reason when it does not answer. */
  async health(): Promise<StoreHealth> {
    try {
      await this.db.command({ ping: 1 });
      return { ok: true, kind: "mongodb", detail: `database ${this.db.databaseName}${this.supportsTransactions ? ", transactions" : ""}` };
    } catch (err) {
      return { ok: false, kind: "mongodb", detail: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Closes the client (if the store owns one). */
  async close(): Promise<void> {
    await this.client?.close();
  }
}
