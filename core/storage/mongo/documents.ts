/**
 * The stored document shapes of the MongoDB adapter, one per collection (collections.ts names the
 * collections and their indexes). `_id` is the app-generated id or a creation-ordered key; dates
 * are BSON dates; opaque JSON payloads are JSON text.
 */
import type { Actor, PersonRole, Proactivity, QuietHours } from "../../persons/records.js";
import type { ApprovalChoiceKind, ApprovalDecision, ApprovalStatus } from "../../approvals/records.js";
import type { Button, ChannelName } from "../../channels/records.js";
import type { CheckInSchedule, GoalStatus } from "../../goals/records.js";
import type { DeliveryProgress, OutboxStatus } from "../../outbox/records.js";
import type { GrantConstraints, GrantScope } from "../../policy/records.js";
import type { Lease, TaskKind, TaskStatus, WaitCondition } from "../../tasks/records.js";
import type { MemoryKind } from "../../memory/records.js";
import type { MonitorState, NotificationDecision, NotificationOrigin, Urgency } from "../../notify/records.js";
import type { MessageAttachment } from "../../conversation/records.js";

export interface PersonDoc {
  _id: string;
  displayName: string;
  timeZone: string;
  /** Absent on documents written before issue 19 item 5: then a zone other than UTC counts as chosen. */
  timeZoneConfirmed?: boolean;
  timeZoneAsk?: { at: Date; pendingSeq: number | null } | null;
  locale: string;
  proactivity: Proactivity;
  quietHours: QuietHours | null;
  digestTime: string | null;
  paused: boolean;
  /** Absent on documents written before the web app. */
  personaName?: string | null;
  personaStyle?: string | null; reach?: string; // reach: `last`, `all` or `messenger:<channel>` (absent: `last`)
  createdAt: Date;
  updatedAt: Date;
}

export interface IdentityDoc {
  _id: string;
  personId: string;
  channel: ChannelName;
  accountId: string;
  address: string;
  unreachable: { reason: string; since: Date } | null;
  createdAt: Date;
}

export interface MessageDoc {
  _id: string;
  personId: string;
  seq: number;
  role: "user" | "assistant";
  channel: ChannelName;
  text: string;
  taskId: string | null;
  at: Date;
  /** Files of a person's message; absent on messages without any (and on documents written before). */
  attachments?: MessageAttachment[];
}

export interface SummaryDoc {
  /** The person id: one summary per person. */
  _id: string;
  upToSeq: number;
  text: string;
  updatedAt: Date;
}

export interface CounterDoc {
  _id: string;
  value: number;
}

export interface GoalDoc {
  _id: string;
  personId: string;
  title: string;
  description: string;
  status: GoalStatus;
  originMessageId: string | null;
  checkIn: CheckInSchedule | null;
  notes: string;
  /** Source of the untrusted content that tainted the activation which made it (absent on older documents). */
  taintSource?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A task. The state union is flattened so the store can filter on `status` (state machine) and
 * `wait.*`; `dueAt` is when the task next becomes claimable (pending: `notBefore` or creation;
 * waiting for a time: its `until`; running: its lease's end; other waits and final states: null).
 */
export interface TaskDoc {
  _id: string;
  personId: string;
  goalId: string | null;
  /** Absent on documents written before task kinds existed (read as their checkpoint's `type`). */
  kind?: TaskKind;
  title: string;
  status: TaskStatus;
  wait: WaitCondition | null;
  result: string | null;
  error: string | null;
  reason: string | null;
  plan: string[];
  cursor: number;
  checkpoint: string;
  lease: Lease | null;
  notBefore: Date | null;
  dueAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface JournalDoc {
  _id: string;
  taskId: string;
  step: number;
  idempotencyKey: string;
  tool: string;
  args: string;
  sideEffect: boolean;
  intentAt: Date;
  outcome: { ok: true; result: string; at: Date } | { ok: false; error: string; at: Date } | null;
}

export interface MemoryDoc {
  _id: string;
  personId: string;
  kind: MemoryKind;
  text: string;
  provenance: { messageId: string | null; channel: ChannelName | null; note: string | null };
  confidence: number;
  expiresAt: Date | null;
  /** Source of the untrusted content that tainted the activation which made it (absent on older documents). */
  taintSource?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface GrantDoc {
  _id: string;
  personId: string;
  capability: string;
  constraints: GrantConstraints;
  /** Sentinel's grant pattern as JSON text (absent or null: a legacy grant that covers nothing). */
  pattern?: string | null;
  scope: GrantScope;
  grantedBy: Actor;
  grantedAt: Date;
  consumedAt: Date | null;
  revokedAt: Date | null;
}

/** One button of an approval card: `_id` is its random token. */
export interface ApprovalChoiceDoc {
  _id: string;
  approvalId: string;
  choice: ApprovalChoiceKind;
  outboxId: string | null;
  createdAt: Date;
}

/** `_id` is the person id. */
export interface SentinelSessionDoc {
  _id: string;
  sessionId: string;
  startedAt: Date;
  lastActivityAt: Date;
  lastSeq: number;
}

/** One document, `_id: "clock"`: the latest time Sentinel has seen. */
export interface SentinelClockDoc {
  _id: string;
  highWater: Date;
}

/** `_id` is `<personId>|<host>`. */
export interface UntrustedHostDoc {
  _id: string;
  personId: string;
  host: string;
  firstSeenAt: Date;
  source: string;
}

/** `_id` is the person id. */
export interface PersonRoleDoc {
  _id: string;
  role: PersonRole;
  createdAt: Date;
}

/** `_id` is `<channel>|<groupId>|<personId>`. */
export interface GroupMemberDoc {
  _id: string;
  channel: ChannelName;
  groupId: string;
  personId: string;
  addedAt: Date;
}

export interface ApprovalDoc {
  _id: string;
  personId: string;
  taskId: string | null;
  capability: string;
  summary: string;
  details: string;
  status: ApprovalStatus;
  decision: ApprovalDecision | null;
  decidedBy: Actor | null;
  decidedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface AuditDoc {
  _id: string;
  personId: string | null;
  kind: string;
  summary: string;
  data: string;
  at: Date;
}

export interface OutboxDoc {
  _id: string;
  personId: string;
  deliveryKey: string;
  channel: ChannelName | null; lane?: ChannelName | null; // lane: where it is queued (OutboxMessage.lane); absent/null: not routed
  text: string;
  buttons: Button[];
  editOf: string | null;
  /** The structured card as JSON text (absent or null: a plain message). */
  card?: string | null;
  /** Artifact ids (absent on rows written before attachments existed). */
  attachments?: string[];
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: Date;
  lease: Lease | null;
  lastError: string | null;
  delivered: { channel: ChannelName; address: string; platformIds: string[]; at: Date } | null;
  /** Absent on documents written before delivery progress existed. */
  progress?: DeliveryProgress;
  createdAt: Date;
}

export interface InboundDoc {
  _id: string;
  channel: ChannelName;
  updateId: string;
  at: Date;
}

/** An update held until handled; `_id` is `<channel>:<updateId>` (one per update). */
export interface InboundHeldDoc {
  _id: string;
  channel: ChannelName;
  updateId: string;
  payload: string;
  heldAt: Date;
}

export interface NotificationDoc {
  _id: string;
  personId: string;
  taskId: string | null;
  text: string;
  decision: NotificationDecision;
  reasons: string[];
  digestedAt: Date | null;
  at: Date;
  // Absent on documents written before candidates said what they are.
  origin?: NotificationOrigin | null;
  urgency?: Urgency | null;
  needsAction?: boolean;
  askedFor?: boolean;
  demoted?: "provenance" | "cap" | null;
  deadline?: Date | null;
  occurrenceKey?: string | null;
  monitor?: MonitorState | null;
  rule?: string | null;
}

export interface LocalMailboxDoc {
  /** The caller's message id. */
  _id: string;
  seq: number;
  user: string;
  text: string;
  buttons: Button[];
  /** The structured card as JSON text (absent or null: a plain message). */
  card?: string | null;
  /** Absent on rows written before attachments existed. */
  attachments?: { id: string; name: string; mimeType: string; size: number }[];
  at: Date;
  /** Absent on documents written before the web app: `assistant` and `local`. */
  role?: "user" | "assistant";
  channel?: ChannelName;
}

/** A person's connection (`connections`); settings as encoded JSON (keys may hold `.` or `$`). */
export interface ConnectionDoc {
  _id: string;
  personId: string;
  kind: string;
  label: string;
  settings: string;
  capabilities: string[];
  source: "config" | "person";
  status: { state: "ok" | "error" | "unknown"; mode: string; lastSyncAt: Date | null; lastError: string | null; checkedAt: Date | null };
  createdAt: Date;
  updatedAt: Date;
}

/** The cursor of one synced source (`sync_cursors`), `_id` = connection id + NUL + source. */
export interface SyncCursorDoc {
  _id: string;
  connectionId: string;
  source: string;
  cursor: string;
  updatedAt: Date;
}

/** One connection change (`connection_changes`); `seq` from the `connection_changes` counter. */
export interface ChangeDoc {
  _id: string;
  seq: number;
  connectionId: string;
  personId: string;
  source: string;
  key: string;
  kind: string;
  topic: string | null;
  occurredAt: Date;
  data: string;
  dispatchedAt: Date | null;
}

export interface HookDoc {
  _id: string;
  personId: string;
  description: string;
  /** SHA-256 hex of the caller's secret (never the secret itself). */
  secretHash: string;
  createdAt: Date;
  lastEventAt: Date | null;
}
