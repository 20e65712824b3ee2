/**
 * SQL of Familiar's SQLite schema (migration 1). Conventions: ids are app-generated TEXT; every
 * instant is INTEGER UTC milliseconds; JSON values are TEXT; booleans are 0/1.
 */
import { legalTransitions, type TaskStatus } from "../../tasks/records.js";
import { illegalTransitionMarker } from "./context.js";

export const initialSchema = `
CREATE TABLE persons (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  time_zone TEXT NOT NULL,
  locale TEXT NOT NULL,
  proactivity TEXT NOT NULL CHECK (proactivity IN ('off', 'low', 'normal', 'high')),
  quiet_from TEXT,
  quiet_to TEXT,
  digest_time TEXT NOT NULL,
  paused INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX persons_by_creation ON persons (created_at, id);

CREATE TABLE identities (
  channel TEXT NOT NULL,
  account_id TEXT NOT NULL,
  person_id TEXT NOT NULL REFERENCES persons (id),
  address TEXT NOT NULL,
  unreachable_reason TEXT,
  unreachable_since INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (channel, account_id)
);
CREATE INDEX identities_by_person ON identities (person_id, created_at);

CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  channel TEXT NOT NULL,
  text TEXT NOT NULL,
  task_id TEXT,
  at INTEGER NOT NULL,
  UNIQUE (person_id, seq)
);

CREATE TABLE summaries (
  person_id TEXT PRIMARY KEY REFERENCES persons (id),
  up_to_seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE goals (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  title TEXT NOT NULL,
  description TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'done', 'abandoned')),
  origin_message_id TEXT,
  check_in TEXT,
  notes TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX goals_by_person ON goals (person_id, created_at, id);

CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  goal_id TEXT REFERENCES goals (id),
  title TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'waiting', 'done', 'failed', 'cancelled')),
  wait_kind TEXT CHECK (wait_kind IN ('time', 'event', 'approval', 'reply')),
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
  -- without notBefore is due from the start (0), whatever clock the caller passes as "now".
  due_at INTEGER GENERATED ALWAYS AS (
    CASE status
      WHEN 'pending' THEN coalesce(not_before, 0)
      WHEN 'running' THEN lease_until
      WHEN 'waiting' THEN CASE WHEN wait_kind = 'time' THEN wait_until END
    END
  ) STORED,
  CHECK ((status = 'waiting') = (wait_kind IS NOT NULL))
);
CREATE INDEX tasks_due ON tasks (due_at, created_at, id) WHERE due_at IS NOT NULL;
CREATE INDEX tasks_by_person ON tasks (person_id, created_at, id);
CREATE INDEX tasks_by_goal ON tasks (goal_id, created_at, id) WHERE goal_id IS NOT NULL;
CREATE INDEX tasks_waiting ON tasks (wait_kind, wait_key) WHERE status = 'waiting';

CREATE TABLE journal (
  idempotency_key TEXT PRIMARY KEY,
  task_id TEXT NOT NULL REFERENCES tasks (id),
  step INTEGER NOT NULL,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  side_effect INTEGER NOT NULL,
  intent_at INTEGER NOT NULL,
  outcome_ok INTEGER,
  outcome_result TEXT,
  outcome_error TEXT,
  outcome_at INTEGER
);
CREATE INDEX journal_by_task ON journal (task_id, step);

CREATE TABLE memory (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  person_id TEXT NOT NULL REFERENCES persons (id),
  kind TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'relationship', 'decision')),
  text TEXT NOT NULL,
  provenance_message_id TEXT,
  provenance_channel TEXT,
  provenance_note TEXT,
  confidence REAL NOT NULL,
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX memory_by_person ON memory (person_id, created_at, id);

-- Full-text index over memory.text (external content: the text lives once, in memory).
CREATE VIRTUAL TABLE memory_fts USING fts5 (
  text,
  content = 'memory',
  content_rowid = 'rid',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory BEGIN
  INSERT INTO memory_fts (rowid, text) VALUES (new.rid, new.text);
END;
CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.rid, old.text);
END;
CREATE TRIGGER memory_fts_update AFTER UPDATE OF text ON memory BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.rid, old.text);
  INSERT INTO memory_fts (rowid, text) VALUES (new.rid, new.text);
END;

CREATE TABLE grants (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  capability TEXT NOT NULL,
  constraints TEXT NOT NULL,
  scope_kind TEXT NOT NULL CHECK (scope_kind IN ('once', 'task', 'session', 'until', 'always')),
  scope_ref TEXT,
  scope_until INTEGER,
  granted_channel TEXT NOT NULL,
  granted_account TEXT NOT NULL,
  granted_at INTEGER NOT NULL,
  consumed_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX grants_by_person ON grants (person_id, granted_at, id);

CREATE TABLE approvals (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  task_id TEXT,
  capability TEXT NOT NULL,
  summary TEXT NOT NULL,
  details TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  decision TEXT,
  decided_channel TEXT,
  decided_account TEXT,
  decided_at INTEGER,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX approvals_pending_by_person ON approvals (person_id, created_at, id) WHERE status = 'pending';
CREATE INDEX approvals_pending_by_expiry ON approvals (expires_at) WHERE status = 'pending';

CREATE TABLE audit (
  id TEXT PRIMARY KEY,
  person_id TEXT REFERENCES persons (id),
  kind TEXT NOT NULL,
  summary TEXT NOT NULL,
  data TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX audit_by_person ON audit (person_id, at, id);

CREATE TABLE outbox (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  delivery_key TEXT NOT NULL UNIQUE,
  channel TEXT,
  text TEXT NOT NULL,
  buttons TEXT NOT NULL,
  edit_of TEXT,
  status TEXT NOT NULL CHECK (status IN ('queued', 'sending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  last_error TEXT,
  delivered TEXT,
  delivered_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX outbox_by_person ON outbox (person_id, created_at, id);
CREATE INDEX outbox_undelivered ON outbox (person_id, created_at, id) WHERE status IN ('queued', 'sending');
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status IN ('queued', 'sending');

CREATE TABLE inbound_updates (
  channel TEXT NOT NULL,
  update_id TEXT NOT NULL,
  processed_at INTEGER NOT NULL,
  PRIMARY KEY (channel, update_id)
) WITHOUT ROWID;
CREATE INDEX inbound_updates_by_time ON inbound_updates (processed_at);

CREATE TABLE notifications (
  id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES persons (id),
  task_id TEXT,
  text TEXT NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('send', 'hold', 'drop')),
  reasons TEXT NOT NULL,
  digested_at INTEGER,
  at INTEGER NOT NULL
);
CREATE INDEX notifications_by_person ON notifications (person_id, at, id);
CREATE INDEX notifications_held ON notifications (person_id, at, id) WHERE decision = 'hold' AND digested_at IS NULL;

CREATE TABLE local_messages (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL UNIQUE,
  user TEXT NOT NULL,
  text TEXT NOT NULL,
  buttons TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX local_messages_by_user ON local_messages (user, seq);
`;

/**
 * The `tasks_state_machine` trigger: aborts any UPDATE that changes `status` along a pair not in
 * `legalTransitions`, whoever issues it (a repository method or raw SQL). The error message is
 * `FAMILIAR_ILLEGAL_TRANSITION <taskId> <from> <to>`, mapped to IllegalTransitionError.
 * Generated from `legalTransitions` when the migration runs; changing the table later needs a new
 * migration that recreates the trigger.
 */
export function taskStateMachineTrigger(): string {
  const pairs = (Object.entries(legalTransitions) as [TaskStatus, readonly TaskStatus[]][])
    .flatMap(([from, tos]) => tos.filter((to) => to !== from).map((to) => `('${from}', '${to}')`))
    .join(", ");
  return `
CREATE TRIGGER tasks_state_machine BEFORE UPDATE OF status ON tasks
WHEN OLD.status <> NEW.status AND (OLD.status, NEW.status) NOT IN (VALUES ${pairs})
BEGIN
  SELECT RAISE(ABORT, '${illegalTransitionMarker} ' || OLD.id || ' ' || OLD.status || ' ' || NEW.status);
END;
`;
}
