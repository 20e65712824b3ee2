import type Database from "better-sqlite3";
import { StoreUnavailableError } from "../../errors.js";
import { initialSchema, taskStateMachineTrigger } from "./schema.js";
import { migrateToV3 } from "./schema-v3.js";
import { migrateChangeWait, migrateConnections } from "./schema-connections.js";

/** One schema change. Versions are positive integers, strictly increasing in `migrations`. */
export interface Migration {
  version: number;
  name: string;
  /** Applies the change; runs inside a transaction together with its `schema_migrations` row. */
  up(db: Database.Database, nowMs: number): void;
}

/**
 * Familiar's SQLite schema history, oldest first. Append new migrations; never edit an applied one
 * (databases in the field already ran it).
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    up(db) {
      db.exec(initialSchema);
      db.exec(taskStateMachineTrigger());
    },
  },
  {
    version: 2,
    name: "inbound webhooks",
    up(db) {
      db.exec(`CREATE TABLE hooks (
        id TEXT PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES persons (id),
        description TEXT NOT NULL,
        secret_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_event_at INTEGER
      );
      CREATE INDEX hooks_by_person ON hooks (person_id, created_at);`);
    },
  },
  {
    version: 3,
    name: "task kinds, held waits, delivery progress",
    up: migrateToV3,
  },
  {
    version: 10,
    name: "action-bound grants, approval buttons, Sentinel sessions, clock and host sightings",
    up(db) {
      // Grants from before action patterns keep pattern NULL and cover nothing (fail closed).
      db.exec(`ALTER TABLE grants ADD COLUMN pattern TEXT;
      CREATE INDEX approvals_by_task ON approvals (task_id, created_at, id) WHERE task_id IS NOT NULL;
      CREATE TABLE approval_choices (
        token TEXT PRIMARY KEY,
        approval_id TEXT NOT NULL REFERENCES approvals (id),
        choice TEXT NOT NULL CHECK (choice IN ('once', 'task', 'session', 'until', 'always', 'deny')),
        outbox_id TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE sentinel_sessions (
        person_id TEXT PRIMARY KEY REFERENCES persons (id),
        session_id TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        last_activity_at INTEGER NOT NULL,
        last_seq INTEGER NOT NULL
      );
      CREATE TABLE sentinel_clock (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        high_water INTEGER NOT NULL
      );
      CREATE TABLE untrusted_hosts (
        person_id TEXT NOT NULL REFERENCES persons (id),
        host TEXT NOT NULL,
        first_seen_at INTEGER NOT NULL,
        source TEXT NOT NULL,
        PRIMARY KEY (person_id, host)
      ) WITHOUT ROWID;`);
    },
  },
  {
    version: 11,
    name: "structured approval cards in the outbox and the local mailbox",
    up(db) {
      db.exec(`ALTER TABLE outbox ADD COLUMN card TEXT;
      ALTER TABLE local_messages ADD COLUMN card TEXT;`);
    },
  },
  {
    version: 12,
    name: "person roles and group member lists",
    up(db) {
      db.exec(`CREATE TABLE person_roles (
        person_id TEXT PRIMARY KEY REFERENCES persons (id),
        role TEXT NOT NULL CHECK (role IN ('admin')),
        created_at INTEGER NOT NULL
      );
      CREATE TABLE group_members (
        channel TEXT NOT NULL,
        group_id TEXT NOT NULL,
        person_id TEXT NOT NULL REFERENCES persons (id),
        added_at INTEGER NOT NULL,
        PRIMARY KEY (channel, group_id, person_id)
      );`);
    },
  },
  {
    version: 20,
    name: "notification candidates say what they are",
    up(db) {
      db.exec(`ALTER TABLE notifications ADD COLUMN origin TEXT;
      ALTER TABLE notifications ADD COLUMN urgency TEXT;
      ALTER TABLE notifications ADD COLUMN needs_action INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE notifications ADD COLUMN asked_for INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE notifications ADD COLUMN demoted TEXT;
      ALTER TABLE notifications ADD COLUMN deadline INTEGER;
      ALTER TABLE notifications ADD COLUMN occurrence_key TEXT;
      ALTER TABLE notifications ADD COLUMN monitor_subject TEXT;
      ALTER TABLE notifications ADD COLUMN monitor TEXT;
      ALTER TABLE notifications ADD COLUMN rule TEXT;
      CREATE INDEX notifications_by_occurrence ON notifications (person_id, occurrence_key) WHERE occurrence_key IS NOT NULL;
      CREATE INDEX notifications_by_monitor ON notifications (person_id, monitor_subject, at) WHERE monitor_subject IS NOT NULL;`);
    },
  },
  {
    version: 30,
    name: "web app: persona per person, chat log sides and channels",
    up(db) {
      db.exec(`ALTER TABLE persons ADD COLUMN persona_name TEXT;
      ALTER TABLE persons ADD COLUMN persona_style TEXT;
      ALTER TABLE local_messages ADD COLUMN role TEXT NOT NULL DEFAULT 'assistant' CHECK (role IN ('user', 'assistant'));
      ALTER TABLE local_messages ADD COLUMN channel TEXT NOT NULL DEFAULT 'local';`);
    },
  },
  {
    version: 40,
    name: "artifacts",
    up(db) {
      db.exec(`CREATE TABLE artifacts (
        id TEXT PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES persons (id),
        name TEXT NOT NULL,
        mime_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        path TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX artifacts_by_person ON artifacts (person_id, created_at, id);`);
    },
  },
  {
    version: 41,
    name: "attachments on outbound and local chat messages",
    up(db) {
      db.exec(`ALTER TABLE outbox ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE local_messages ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';`);
    },
  },
  {
    version: 55,
    name: "taint of memory items and goals (issue 11)",
    up(db) {
      // The untrusted source of the tainted activation that made the item; NULL: the person's own.
      db.exec(`ALTER TABLE memory ADD COLUMN taint_source TEXT;
      ALTER TABLE goals ADD COLUMN taint_source TEXT;`);
    },
  },
  {
    version: 60,
    name: "attachments of conversation messages",
    up(db) {
      // JSON array of MessageAttachment; NULL for the (many) messages without files.
      db.exec("ALTER TABLE messages ADD COLUMN attachments TEXT");
    },
  },
  {
    version: 70,
    name: "artifacts in versions, with kind, title, task, goal and taint (issue 23)",
    up(db) {
      // series_id: the first version's id (NULL in rows from before: the row's own id); latest: the
      // version lists show. Kinds of older rows follow their MIME type.
      db.exec(`ALTER TABLE artifacts ADD COLUMN series_id TEXT;
      ALTER TABLE artifacts ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE artifacts ADD COLUMN latest INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE artifacts ADD COLUMN kind TEXT;
      ALTER TABLE artifacts ADD COLUMN title TEXT;
      ALTER TABLE artifacts ADD COLUMN task_id TEXT;
      ALTER TABLE artifacts ADD COLUMN goal_id TEXT;
      ALTER TABLE artifacts ADD COLUMN taint_source TEXT;
      UPDATE artifacts SET series_id = id, title = name, kind = CASE
        WHEN mime_type = 'text/markdown' THEN 'document'
        WHEN mime_type = 'application/pdf' THEN 'pdf'
        WHEN mime_type = 'text/html' THEN 'page'
        WHEN mime_type IN ('image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml') THEN 'image'
        ELSE 'data' END;
      CREATE INDEX artifacts_latest_by_person ON artifacts (person_id, latest, created_at, id);
      CREATE UNIQUE INDEX artifacts_series_version ON artifacts (series_id, version);`);
    },
  },
  {
    version: 72,
    name: "inbound updates held until handled (Telegram long polling confirms once held)",
    up(db) {
      db.exec(`CREATE TABLE inbound_held (
        channel TEXT NOT NULL,
        update_id TEXT NOT NULL,
        payload TEXT NOT NULL,
        held_at INTEGER NOT NULL,
        UNIQUE (channel, update_id)
      );
      CREATE INDEX inbound_held_by_time ON inbound_held (held_at);`);
    },
  },
  {
    version: 73,
    name: "connections, sync cursors and connection changes",
    up: migrateConnections,
  },
  {
    version: 74,
    name: "tasks wait for connection changes",
    up: migrateChangeWait,
  },
  {
    version: 80,
    name: "denied approval requests by person and decision time (issue 18: denials outlive their card)",
    up(db) {
      db.exec("CREATE INDEX approvals_denied_by_person ON approvals (person_id, decided_at, id) WHERE status = 'denied'");
    },
  },
  {
    version: 95,
    name: "outbox lanes (order per person and channel) and where Familiar reaches a person (issue 19)",
    up(db) {
      // lane: the channel a row is queued on (its own channel, or where it was routed); NULL: not
      // routed yet. Undelivered rows of before keep their channel as their lane. reach: 'last',
      // 'all' or 'messenger:<channel>' (see ReachPreference).
      db.exec(`ALTER TABLE outbox ADD COLUMN lane TEXT;
      UPDATE outbox SET lane = coalesce(channel, json_extract(progress, '$.target.channel')) WHERE status IN ('queued', 'sending');
      CREATE INDEX outbox_lanes ON outbox (person_id, lane, created_at, id) WHERE status IN ('queued', 'sending');
      CREATE INDEX outbox_unrouted ON outbox (created_at, id) WHERE status = 'queued' AND lane IS NULL;
      ALTER TABLE persons ADD COLUMN reach TEXT NOT NULL DEFAULT 'last';`);
    },
  },
  {
    version: 98,
    name: "model tokens per person and local day (issue 18 item 7: the daily model budget)",
    up(db) {
      db.exec(`CREATE TABLE model_usage (
        person_id TEXT NOT NULL REFERENCES persons (id),
        day TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (person_id, day)
      ) WITHOUT ROWID;`);
    },
  },
  {
    version: 99,
    name: "webhook events kept until their task waits (issue 18)",
    up(db) {
      db.exec(`CREATE TABLE hook_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        hook_id TEXT NOT NULL REFERENCES hooks (id) ON DELETE CASCADE,
        body TEXT NOT NULL,
        received_at INTEGER NOT NULL
      );
      CREATE INDEX hook_events_by_hook ON hook_events (hook_id, id);`);
    },
  },
  {
    version: 104,
    name: "whether a person chose their time zone, and Familiar's one question about it (issue 19 item 5)",
    up(db) {
      // A zone other than the default was chosen by the person (the web app, Settings, /timezone).
      db.exec(`ALTER TABLE persons ADD COLUMN time_zone_confirmed INTEGER NOT NULL DEFAULT 0;
      UPDATE persons SET time_zone_confirmed = 1 WHERE time_zone <> 'UTC';
      ALTER TABLE persons ADD COLUMN time_zone_asked_at INTEGER;
      ALTER TABLE persons ADD COLUMN time_zone_pending_seq INTEGER;`);
    },
  },
];

/** What `migrate` did. */
export interface MigrationReport {
  /** Versions applied by this call, in order. */
  applied: number[];
  /** Highest version now applied. */
  current: number;
}

function checkOrder(list: readonly Migration[]): void {
  let previous = 0;
  for (const migration of list) {
    if (!Number.isInteger(migration.version) || migration.version <= previous) {
      throw new StoreUnavailableError(`SQLite migrations out of order: version ${migration.version} ("${migration.name}") follows ${previous}`);
    }
    previous = migration.version;
  }
}

/**
 * Brings the database up to the last migration of `list`. Keeps a `schema_migrations(version, name,
 * applied_at)` table; each pending migration runs in its own `BEGIN IMMEDIATE` transaction that also
 * re-checks it was not applied meanwhile, so two processes opening one file at once apply it once.
 * A failing migration is rolled back alone (earlier ones stay) and rethrown as StoreUnavailableError.
 * Throws StoreUnavailableError when the file was migrated by a newer Familiar (unknown versions).
 */
export function migrate(db: Database.Database, list: readonly Migration[] = migrations, now: () => number = Date.now): MigrationReport {
  checkOrder(list);
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const isApplied = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").pluck();
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  const highest = () => (db.prepare("SELECT coalesce(max(version), 0) FROM schema_migrations").pluck().get() as number);

  const known = list[list.length - 1]?.version ?? 0;
  if (highest() > known) {
    throw new StoreUnavailableError(
      `SQLite database is at schema version ${highest()} but this Familiar knows only up to ${known}: run a newer Familiar or restore a backup`,
    );
  }
  const applied: number[] = [];
  for (const migration of list) {
    if (isApplied.get(migration.version)) continue;
    const apply = db.transaction(() => {
      if (isApplied.get(migration.version)) return false;
      migration.up(db, now());
      record.run(migration.version, migration.name, now());
      return true;
    });
    try {
      if (apply.immediate()) applied.push(migration.version);
    } catch (error) {
      throw new StoreUnavailableError(`SQLite migration ${migration.version} ("${migration.name}") failed: ${(error as Error).message}`, { cause: error });
    }
  }
  return { applied, current: highest() };
}
