/**
 * Migration 3 (durable core): tasks get a `kind` column and the `held` wait (the table is rebuilt,
 * since SQLite cannot change a CHECK constraint in place); the state machine trigger is regenerated
 * (waiting → pending and waiting → waiting became legal); outbox rows get their delivery progress.
 */
import type Database from "better-sqlite3";
import { taskStateMachineTrigger } from "./schema.js";

const tasksTable = `
CREATE TABLE tasks_v3 (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  goal_id TEXT REFERENCES goals (id),
  kind TEXT NOT NULL CHECK (kind IN ('turn', 'wakeup', 'checkin')),
  title TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'waiting', 'done', 'failed', 'cancelled')),
  wait_kind TEXT CHECK (wait_kind IN ('time', 'event', 'approval', 'reply', 'held')),
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
  -- When the task may next be claimed without outside help (null: never by time). A pending task
  -- without notBefore is due from the start (0). Held tasks are never due.
  due_at INTEGER GENERATED ALWAYS AS (
    CASE status
      WHEN 'pending' THEN coalesce(not_before, 0)
      WHEN 'running' THEN lease_until
      WHEN 'waiting' THEN CASE WHEN wait_kind = 'time' THEN wait_until END
    END
  ) STORED,
  CHECK ((status = 'waiting') = (wait_kind IS NOT NULL))
);`;

const tasksIndexes = `
CREATE INDEX tasks_due ON tasks (due_at, created_at, id) WHERE due_at IS NOT NULL;
CREATE INDEX tasks_by_person ON tasks (person_id, created_at, id);
CREATE INDEX tasks_by_goal ON tasks (goal_id, created_at, id) WHERE goal_id IS NOT NULL;
CREATE INDEX tasks_waiting ON tasks (wait_kind, wait_key) WHERE status = 'waiting';
CREATE INDEX tasks_pending_turns ON tasks (person_id, created_at) WHERE status = 'pending' AND kind = 'turn';
CREATE INDEX tasks_by_lease ON tasks (lease_owner) WHERE status = 'running';`;

/** Applies migration 3 inside the migration's transaction (foreign keys are checked at commit). */
export function migrateToV3(db: Database.Database, now: number): void {
  db.pragma("defer_foreign_keys = ON");
  db.exec(tasksTable);
  // Round-1 checkpoints said what a task was under `type`; anything else was a wake-up.
  db.exec(`INSERT INTO tasks_v3 (id, person_id, goal_id, kind, title, status, wait_kind, wait_until, wait_key, outcome, plan, cursor,
             checkpoint, lease_owner, lease_until, not_before, created_at, updated_at)
           SELECT id, person_id, goal_id,
             CASE json_extract(checkpoint, '$.type') WHEN 'turn' THEN 'turn' WHEN 'checkin' THEN 'checkin' ELSE 'wakeup' END,
             title, status, wait_kind, wait_until, wait_key, outcome, plan, cursor, checkpoint, lease_owner, lease_until, not_before,
             created_at, updated_at
           FROM tasks`);
  // Round-1 turns were bound to one message id; they now cover a range of seqs.
  db.exec(`UPDATE tasks_v3 SET checkpoint = json_set(checkpoint,
             '$.fromSeq', (SELECT seq FROM messages WHERE id = json_extract(tasks_v3.checkpoint, '$.messageId')),
             '$.toSeq', (SELECT seq FROM messages WHERE id = json_extract(tasks_v3.checkpoint, '$.messageId')))
           WHERE kind = 'turn' AND json_extract(checkpoint, '$.messageId') IS NOT NULL`);
  // Round 1 created a turn's task only when the turn ran: a message that was never answered has none.
  db.prepare(
    `INSERT INTO tasks_v3 (id, person_id, goal_id, kind, title, status, plan, cursor, checkpoint, created_at, updated_at)
     SELECT 'task_' || printf('%012x', @now) || lower(hex(randomblob(10))), p.id, NULL, 'turn', 'conversation turn', 'pending', '[]', 0,
       json_object('fromSeq', coalesce((SELECT max(seq) FROM messages WHERE person_id = p.id AND role = 'assistant'), 0) + 1,
                   'toSeq', (SELECT max(seq) FROM messages WHERE person_id = p.id AND role = 'user')), @now, @now
     FROM persons p
     WHERE (SELECT max(seq) FROM messages WHERE person_id = p.id AND role = 'user') >
           coalesce((SELECT max(seq) FROM messages WHERE person_id = p.id AND role = 'assistant'), 0)
       AND NOT EXISTS (SELECT 1 FROM tasks_v3 t WHERE t.person_id = p.id AND t.kind = 'turn' AND t.status IN ('pending', 'running'))`,
  ).run({ now });
  db.exec("DROP TRIGGER IF EXISTS tasks_state_machine");
  db.exec("DROP TABLE tasks");
  db.exec("ALTER TABLE tasks_v3 RENAME TO tasks");
  db.exec(tasksIndexes);
  db.exec(taskStateMachineTrigger());
  db.exec(`ALTER TABLE outbox ADD COLUMN progress TEXT NOT NULL DEFAULT '{}'`);
  db.exec(`CREATE INDEX outbox_by_lease ON outbox (lease_owner) WHERE status = 'sending'`);
}
