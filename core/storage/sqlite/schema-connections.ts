/**
 * Migrations 73 and 74 (connections, issue 21): a person's connections, the cursors of their synced
 * sources and the changes the syncs found; and the `change` wait of tasks (the tasks table is rebuilt,
 * since SQLite cannot change a CHECK constraint in place, as migration 3 did).
 */
import type Database from "better-sqlite3";
import { taskStateMachineTrigger } from "./schema.js";

/** Migration 73: connections, sync cursors, connection changes. */
export function migrateConnections(db: Database.Database): void {
  db.exec(`CREATE TABLE connections (
    id TEXT PRIMARY KEY,
    person_id TEXT NOT NULL REFERENCES persons (id),
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    settings TEXT NOT NULL,
    capabilities TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('config', 'person')),
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX connections_by_person ON connections (person_id, created_at, id);
  CREATE TABLE sync_cursors (
    connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    cursor TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (connection_id, source)
  ) WITHOUT ROWID;
  CREATE TABLE connection_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    person_id TEXT NOT NULL REFERENCES persons (id),
    source TEXT NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    topic TEXT,
    occurred_at INTEGER NOT NULL,
    data TEXT NOT NULL,
    dispatched_at INTEGER,
    UNIQUE (connection_id, source, key)
  );
  CREATE INDEX changes_undispatched ON connection_changes (seq) WHERE dispatched_at IS NULL;
  CREATE INDEX changes_by_person ON connection_changes (person_id, seq);
  CREATE INDEX changes_by_topic ON connection_changes (connection_id, kind, topic, occurred_at) WHERE topic IS NOT NULL;`);
}

/** Migration 74: tasks may wait for a connection change (`wait_kind = 'change'`, `wait_key` = the seq it waits after). */
export function migrateChangeWait(db: Database.Database): void {
  db.pragma("defer_foreign_keys = ON");
  db.exec(`CREATE TABLE tasks_v74 (
    id TEXT PRIMARY KEY,
    person_id TEXT NOT NULL REFERENCES persons (id),
    goal_id TEXT REFERENCES goals (id),
    kind TEXT NOT NULL CHECK (kind IN ('turn', 'wakeup', 'checkin')),
    title TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'waiting', 'done', 'failed', 'cancelled')),
    wait_kind TEXT CHECK (wait_kind IN ('time', 'event', 'approval', 'reply', 'held', 'change')),
    wait_until INTEGER,
    wait_key TEXT,
    outcome TEXT,
    plan TEXT NOT NULL,
    cursor INTEGER NOT NULL,
    checkpoint TEXT NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER,
    not_before INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    due_at INTEGER GENERATED ALWAYS AS (
      CASE status
        WHEN 'pending' THEN coalesce(not_before, 0)
        WHEN 'running' THEN lease_until
        WHEN 'waiting' THEN CASE WHEN wait_kind = 'time' THEN wait_until END
      END
    ) STORED,
    CHECK ((status = 'waiting') = (wait_kind IS NOT NULL))
  );
  INSERT INTO tasks_v74 (id, person_id, goal_id, kind, title, status, wait_kind, wait_until, wait_key, outcome, plan, cursor,
      checkpoint, lease_owner, lease_until, not_before, created_at, updated_at)
    SELECT id, person_id, goal_id, kind, title, status, wait_kind, wait_until, wait_key, outcome, plan, cursor,
      checkpoint, lease_owner, lease_until, not_before, created_at, updated_at FROM tasks;
  DROP TRIGGER IF EXISTS tasks_state_machine;
  DROP TABLE tasks;
  ALTER TABLE tasks_v74 RENAME TO tasks;
  CREATE INDEX tasks_due ON tasks (due_at, created_at, id) WHERE due_at IS NOT NULL;
  CREATE INDEX tasks_by_person ON tasks (person_id, created_at, id);
  CREATE INDEX tasks_by_goal ON tasks (goal_id, created_at, id) WHERE goal_id IS NOT NULL;
  CREATE INDEX tasks_waiting ON tasks (wait_kind, wait_key) WHERE status = 'waiting';
  CREATE INDEX tasks_pending_turns ON tasks (person_id, created_at) WHERE status = 'pending' AND kind = 'turn';
  CREATE INDEX tasks_by_lease ON tasks (lease_owner) WHERE status = 'running';`);
  db.exec(taskStateMachineTrigger());
}
