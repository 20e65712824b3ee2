/**
 * Records kept by Familiar's stores. Both adapters (SQLite, MongoDB) read and write exactly these
 * shapes; the contract test suite checks that they round-trip unchanged (dates as `Date`, ids as
 * app-generated strings, JSON values as plain JSON).
 *
 * Units: every `Date` is an absolute instant (stored as UTC milliseconds); durations are in
 * milliseconds; `HH:MM` strings are wall-clock times in the person's own time zone.
 */
import type {
  ApprovalId,
  ArtifactId,
  AuditId,
  GoalId,
  GrantId,
  HookId,
  MemoryId,
  MessageId,
  NotificationId,
  OutboxId,
  PersonId,
  TaskId,
} from "../ids.js";

/** A JSON value, as stored in JSON columns / sub-documents. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Messengers (and the local web chat) a person can be reached on. */
export type ChannelName = "local" | "telegram" | "slack" | "discord" | "whatsapp";
export const channelNames: readonly ChannelName[] = ["local", "telegram", "slack", "discord", "whatsapp"];

/** Page of results with an opaque cursor for the next page (absent on the last page). */
export interface Page<T> {
  items: T[];
  next?: string;
}

/** Cursor pagination request: at most `limit` items (default 50, max 500) after `after`. */
export interface PageRequest {
  limit?: number;
  after?: string;
}

// ---------------------------------------------------------------------------------------------
// Persons and identities

/** How readily Familiar messages first. `off` never starts a conversation (asked-for wake-ups still arrive). */
export type Proactivity = "off" | "low" | "normal" | "high";

/** Quiet hours as wall-clock `HH:MM` in the person's time zone; `from` may be after `to` (overnight). */
export interface QuietHours {
  from: string;
  to: string;
}

export interface Person {
  id: PersonId;
  displayName: string;
  /** IANA time zone name, e.g. `Europe/Berlin`. */
  timeZone: string;
  /** BCP 47 locale, e.g. `en-US`. */
  locale: string;
  proactivity: Proactivity;
  quietHours: QuietHours | null;
  /**
   * `HH:MM` local time at which held messages go out as a digest (`/digest`); null when not set, and
   * then the digest goes out when quiet hours end (see `core/notify/digest-timing.ts`).
   */
  digestTime: string | null;
  /** All background work paused by the person (`/pause`). */
  paused: boolean;
  /** The name Familiar goes by with this person (null: "Familiar"); set on the dashboard. */
  personaName: string | null;
  /** How Familiar should write to this person, in their words (null: the default style). */
  personaStyle: string | null;
  reach: { mode: "last" } | { mode: "messenger"; channel: ChannelName } | { mode: "all" };
  createdAt: Date;
  updatedAt: Date;
}

export type NewPerson = Pick<Person, "displayName"> &
  Partial<Pick<Person, "timeZone" | "locale" | "proactivity" | "quietHours" | "digestTime">>;

export type PersonSettingsPatch = Partial<
  Pick<Person, "displayName" | "timeZone" | "locale" | "proactivity" | "quietHours" | "digestTime" | "paused" | "personaName" | "personaStyle" | "reach">
>;

/** One account of a person on one channel. (channel, accountId) is unique across all persons. */
export interface Identity {
  personId: PersonId;
  channel: ChannelName;
  /** The platform's own user id (Telegram user id, Slack user id, phone-based WhatsApp id, …). */
  accountId: string;
  /** Where to reach this account (chat id, DM channel id); defaults to the account id. */
  address: string;
  /** Set after a permanent delivery failure (blocked, chat gone); outbound skips it. */
  unreachable: { reason: string; since: Date } | null;
  createdAt: Date;
}

// ---------------------------------------------------------------------------------------------
// Conversation

/** What kind of file a message carries (a photo is an `image`, a voice note a `voice`). */
export const attachmentKinds = ["image", "voice", "audio", "video", "document", "sticker"] as const;
export type AttachmentKind = (typeof attachmentKinds)[number];

/**
 * A file that came with a person's message, as the conversation records it. The bytes are never
 * stored here: a kept file lives in the person's workspace at `path`.
 */
export interface MessageAttachment {
  kind: AttachmentKind;
  /** MIME type as the platform reported it, or null. */
  mimeType: string | null;
  /** Size in bytes, or null when unknown. */
  size: number | null;
  /** The file's own name, or null (photos and voice notes usually have none). */
  fileName: string | null;
  /** A caption or description of this file apart from the message text (Discord alt text, Slack title), or null. */
  caption: string | null;
  /** Workspace-relative path where the file was saved, or null when it was not kept. */
  path: string | null;
  /** What a voice note says (transcribed), or null. */
  transcript: string | null;
  /** A sticker's emoji (or its name where the platform gives no emoji), or null. */
  emoji: string | null;
  /** Length of a voice note, audio or video in seconds, or null. */
  durationSeconds: number | null;
  /** What could not be done with it, in a few words (e.g. "not transcribed: no transcription service"), or null. */
  note: string | null;
}

/** A message of the person's one continuous conversation, across every channel. */
export interface ConversationMessage {
  id: MessageId;
  personId: PersonId;
  /** Position in the person's conversation, 1-based and gap-free; assigned by the store. */
  seq: number;
  role: "user" | "assistant";
  channel: ChannelName;
  text: string;
  /** The task this message belongs to, for assistant messages produced by background work. */
  taskId: TaskId | null;
  at: Date;
  /** Files that came with a person's message, in the order sent (empty for most messages). */
  attachments: MessageAttachment[];
}

export type NewConversationMessage = Omit<ConversationMessage, "id" | "seq" | "at" | "attachments"> & { at?: Date; attachments?: MessageAttachment[] };

/** Rolling summary of the conversation up to and including `upToSeq`. */
export interface ConversationSummary {
  personId: PersonId;
  upToSeq: number;
  text: string;
  updatedAt: Date;
}

// ---------------------------------------------------------------------------------------------
// Goals and tasks

export type GoalStatus = "active" | "paused" | "done" | "abandoned";

/** A recurring check-in: a cron expression evaluated in an IANA time zone. */
export interface CheckInSchedule {
  cron: string;
  timeZone: string;
}

export interface Goal {
  id: GoalId;
  personId: PersonId;
  title: string;
  description: string;
  status: GoalStatus;
  originMessageId: MessageId | null;
  checkIn: CheckInSchedule | null;
  notes: string;
  /** Made in a tainted activation (see {@link Taint}); null when it came from the person's own words. */
  taint: Taint | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Issue 11: an item made in an activation that had read untrusted content (a web page, a fetched
 * result, an email, a file from outside, a webhook payload) carries that taint and its source, so an
 * activation that later runs from it (or shows it to the model) starts tainted.
 */
export interface Taint {
  /** The untrusted source that tainted the activation which made the item, e.g. a page URL or `webhook hook_…`. */
  source: string;
}

export type NewGoal = Pick<Goal, "personId" | "title"> &
  Partial<Pick<Goal, "description" | "originMessageId" | "checkIn" | "notes" | "taint">>;

/** `taint` can be set (a tainted activation changed the goal) but never cleared by a patch (null leaves it). */
export type GoalPatch = Partial<Pick<Goal, "title" | "description" | "status" | "checkIn" | "notes" | "taint">>;

/**
 * What a waiting task waits for. `held`: background work the person (`/pause`) or its goal paused;
 * `until` keeps the due time it had, restored on resume (null: it was due at once).
 */
export type WaitCondition =
  | { kind: "time"; until: Date }
  | { kind: "event"; hookId: HookId }
  | { kind: "approval"; approvalId: ApprovalId }
  | { kind: "reply" }
  | { kind: "held"; until: Date | null }
  /** A change a connection recorded (a new mail) with a seq above `afterSeq` (see ChangeRepository). */
  | { kind: "change"; afterSeq: number };

/**
 * A task's state. Legal transitions (enforced by the store):
 * pending → running | cancelled; running → waiting | done | failed | cancelled | pending;
 * waiting → running | pending (its condition was met: `resumeWaitingTask`) | waiting (held ↔ time) |
 * cancelled. A running task whose lease expired may be claimed again (running → running).
 */
export type TaskState =
  | { status: "pending" }
  | { status: "running" }
  | { status: "waiting"; wait: WaitCondition }
  | { status: "done"; result: string | null }
  | { status: "failed"; error: string }
  | { status: "cancelled"; reason: string | null };

export type TaskStatus = TaskState["status"];

export const legalTransitions: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ["running", "cancelled"],
  running: ["waiting", "done", "failed", "cancelled", "pending", "running"],
  waiting: ["running", "pending", "waiting", "cancelled"],
  done: [],
  failed: [],
  cancelled: [],
};

/** Exclusive right of one worker to run a task until `until`. */
export interface Lease {
  owner: string;
  until: Date;
}

/**
 * What a task is for; its checkpoint's shape depends on it (parsed by `core/tasks/checkpoint.ts`):
 * - `turn`: answers a range of the person's messages;
 * - `wakeup`: a wake-up the model scheduled (once or on a cron in a time zone);
 * - `checkin`: a goal's recurring check-in.
 */
export type TaskKind = "turn" | "wakeup" | "checkin";
export const taskKinds: readonly TaskKind[] = ["turn", "wakeup", "checkin"];

export interface Task {
  id: TaskId;
  personId: PersonId;
  goalId: GoalId | null;
  kind: TaskKind;
  title: string;
  state: TaskState;
  /** Plan steps in the task's own words. */
  plan: string[];
  /** Index of the next step to execute. */
  cursor: number;
  /** Opaque runtime state saved after each step. */
  checkpoint: Json;
  lease: Lease | null;
  /** When a pending task may first run (null: at once). */
  notBefore: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewTask = Pick<Task, "personId" | "title" | "kind"> &
  Partial<Pick<Task, "goalId" | "plan" | "checkpoint" | "notBefore">> & {
    /** Create the task already waiting for a connection change (a watch), instead of pending. */
    waitsFor?: Extract<WaitCondition, { kind: "change" }>;
  };

/** A claimed task and the instant it was due (its `notBefore`, wait time or lease end before the claim). */
export interface ClaimedTask {
  task: Task;
  dueAt: Date;
}

/**
 * Which waiting task `resumeWaitingTask` may resume: the wait it must still be in. `time`: a recurring
 * job between occurrences, resumed early because its parked call (a decided card) can go on (issue 18 item 9).
 */
export type WaitMatch =
  | { kind: "event"; hookId: HookId }
  | { kind: "approval"; approvalId: ApprovalId }
  | { kind: "reply" }
  | { kind: "time" }
  | { kind: "change"; afterSeq: number };

/** One entry of a task's tool-call journal: the intent is written before the call, the result after. */
export interface JournalEntry {
  taskId: TaskId;
  step: number;
  /** Derived from (task, step); unique. The side effect carries it where the target supports it. */
  idempotencyKey: string;
  tool: string;
  args: Json;
  sideEffect: boolean;
  intentAt: Date;
  outcome: { ok: true; result: Json; at: Date } | { ok: false; error: string; at: Date } | null;
}

export type NewJournalIntent = Omit<JournalEntry, "intentAt" | "outcome"> & { intentAt?: Date };

// ---------------------------------------------------------------------------------------------
// Memory

export type MemoryKind = "fact" | "preference" | "relationship" | "decision";

export interface MemoryItem {
  id: MemoryId;
  personId: PersonId;
  kind: MemoryKind;
  text: string;
  /** Where the item came from: the conversation message it was learned from. */
  provenance: { messageId: MessageId | null; channel: ChannelName | null; note: string | null };
  /** 0–1: how sure Familiar is. */
  confidence: number;
  expiresAt: Date | null;
  /** Learned in a tainted activation (see {@link Taint}): shown to the model marked, and taints the activation. */
  taint: Taint | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewMemoryItem = Pick<MemoryItem, "personId" | "kind" | "text"> &
  Partial<Pick<MemoryItem, "provenance" | "confidence" | "expiresAt" | "taint">>;

export type MemoryPatch = Partial<Pick<MemoryItem, "kind" | "text" | "confidence" | "expiresAt">>;

// ---------------------------------------------------------------------------------------------
// Authorization: grants and approval requests

/** Who acted, through which channel. */
export interface Actor {
  channel: ChannelName;
  accountId: string;
}

export type GrantScope =
  | { kind: "once" }
  | { kind: "task"; taskId: TaskId }
  | { kind: "session"; sessionId: string }
  | { kind: "until"; until: Date }
  | { kind: "always" };

/** Constraints a grant is limited to; absent keys are unconstrained. */
export interface GrantConstraints {
  /** Destination origin or host, e.g. `https://api.example.com` or `example.com`. */
  destination?: string;
  recipient?: string;
  /** Upper bound, in the currency's minor unit. */
  maxAmount?: number;
  /** Digest of one described action (core/tools/action.ts): the grant covers that action only. */
  action?: string;
}

export interface Grant {
  id: GrantId;
  personId: PersonId;
  capability: string;
  /** Legacy origin-level constraints (grants from before action patterns); not used for matching. */
  constraints: GrantConstraints;
  /** What the grant covers: Sentinel's `GrantPattern` (tool, method, targets, payload digest) as JSON; null for legacy grants (cover nothing). */
  pattern: Json | null;
  scope: GrantScope;
  grantedBy: Actor;
  grantedAt: Date;
  /** Set when a once-grant is used. */
  consumedAt: Date | null;
  revokedAt: Date | null;
}

export type NewGrant = Omit<Grant, "id" | "consumedAt" | "revokedAt" | "grantedAt" | "pattern"> & { grantedAt?: Date; pattern?: Json | null };

export type ApprovalDecision =
  | { kind: "approve"; scope: GrantScope["kind"] }
  | { kind: "deny" };

export type ApprovalStatus = "pending" | "approved" | "denied" | "expired";

export interface ApprovalRequest {
  id: ApprovalId;
  personId: PersonId;
  taskId: TaskId | null;
  capability: string;
  /** One line shown on the card. */
  summary: string;
  details: Json;
  status: ApprovalStatus;
  decision: ApprovalDecision | null;
  decidedBy: Actor | null;
  decidedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

export type NewApprovalRequest = Pick<
  ApprovalRequest,
  "personId" | "taskId" | "capability" | "summary" | "details" | "expiresAt"
>;

/** Outcome of `decideApproval`: exactly one caller gets `decided`. */
export type DecideResult =
  | { outcome: "decided"; request: ApprovalRequest }
  | { outcome: "already_decided"; request: ApprovalRequest }
  | { outcome: "expired"; request: ApprovalRequest }
  | { outcome: "not_found" };

/** The buttons a card can carry: a grant scope, or deny. */
export type ApprovalChoiceKind = GrantScope["kind"] | "deny";

/**
 * One button of an approval card: an opaque random token that maps to exactly one (request,
 * choice) pair. A press carries only the token; scope and request are never taken from the client.
 */
export interface ApprovalChoice {
  /** Random, URL-safe, unique (the button's id after the `ap:` prefix). */
  token: string;
  approvalId: ApprovalId;
  choice: ApprovalChoiceKind;
  /** The outbox row of the card this button is on (the press must come from where it was delivered). */
  outboxId: OutboxId | null;
  createdAt: Date;
}

/**
 * A person's session as Sentinel tracks it: a run of the person's own activity (messages, presses)
 * without a gap of `idle` (2 hours). Session grants hold while the session does.
 */
export interface SentinelSession {
  personId: PersonId;
  sessionId: string;
  startedAt: Date;
  lastActivityAt: Date;
  /** Highest conversation seq already folded into `lastActivityAt`. */
  lastSeq: number;
}

/** Where a host was first seen in untrusted content (a web page, a file, a webhook body). */
export interface HostSighting {
  personId: PersonId;
  /** ASCII host, lower case (IDN as punycode). */
  host: string;
  firstSeenAt: Date;
  /** The untrusted source, e.g. the URL of the page. */
  source: string;
}

/** Who may act at the door besides the owner (OWNER): admins may approve pairings and manage groups. */
export type PersonRole = "admin";

/** A group chat on a messenger (ALLOW_GROUPS entry). */
export interface GroupRef {
  channel: ChannelName;
  /** The platform's chat / channel id of the group. */
  groupId: string;
}

// ---------------------------------------------------------------------------------------------
// Audit

export interface AuditEvent {
  id: AuditId;
  personId: PersonId | null;
  /** Dotted kind, e.g. `tool.call`, `sentinel.decision`, `approval.decided`, `outbound.sent`. */
  kind: string;
  summary: string;
  data: Json;
  at: Date;
}

export type NewAuditEvent = Omit<AuditEvent, "id" | "at"> & { at?: Date };

// ---------------------------------------------------------------------------------------------
// Outbox

export interface Button {
  /** Opaque id, at most 32 ASCII characters (fits Telegram's 64-byte callback_data with a prefix). */
  id: string;
  label: string;
}

export type OutboxStatus = "queued" | "sending" | "delivered" | "failed";

export interface OutboxMessage {
  id: OutboxId;
  personId: PersonId;
  /** Unique; enqueueing the same key twice returns the first row. */
  deliveryKey: string;
  /** Target channel, or null for wherever the person is (their `ReachPreference`). */
  channel: ChannelName | null;
  lane: ChannelName | null; // the channel it is queued on (routed; null until then): order is per person and lane
  text: string;
  buttons: Button[];
  /** Set when this message edits an earlier one (an approval card showing its decision). */
  editOf: OutboxId | null;
  /**
   * A structured card (Sentinel's `CardView` as JSON) that surfaces able to draw it render instead of
   * `text`; `text` is always its complete markdown rendering. Null for plain messages.
   */
  card: Json | null;
  /** Artifacts sent with the message as real attachments (photo, document), in order. */
  attachments: ArtifactId[];
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: Date;
  lease: Lease | null;
  lastError: string | null;
  /** Platform ids of the delivered parts (a long message is split). */
  delivered: { channel: ChannelName; address: string; platformIds: string[]; at: Date } | null;
  /** Which parts went out so far (survives a crash mid-message). */
  progress: DeliveryProgress;
  createdAt: Date;
}

/**
 * How far the delivery of one outbox row got, saved before and after each part so a restarted
 * process neither repeats a part nor loses one: `target` (where the first attempt went; later parts
 * follow it); `sent` (part key `"0"`, `"2-1"` for a re-rendered part → platform id); `inflight` (the
 * part being sent at the last save: a crash leaves it set, outcome unknown); `fallback` (part index →
 * rendering level or file form after a refusal); `uncertain` (parts that may or may not have
 * arrived); `failingSince`, `refusals`, `textParts` (the give-up clock: core/outbox/handoff.ts, files.ts).
 */
export interface DeliveryProgress {
  target: { channel: ChannelName; address: string; accountId: string } | null;
  sent: Record<string, string>;
  inflight: string | null;
  fallback: Record<string, number>;
  uncertain: string[];
  failingSince?: string | null; refusals?: Record<string, number>; textParts?: number;
}

export const emptyProgress = (): DeliveryProgress => ({ target: null, sent: {}, inflight: null, fallback: {}, uncertain: [] });

export type NewOutboxMessage = Pick<OutboxMessage, "personId" | "deliveryKey" | "text"> &
  Partial<Pick<OutboxMessage, "channel" | "buttons" | "editOf" | "card" | "attachments">>;

// ---------------------------------------------------------------------------------------------
// Notification filter decisions

export type NotificationDecision = "send" | "hold" | "drop";

/** What produced a proactive candidate message. */
export type NotificationOrigin = "reminder" | "checkin" | "monitor" | "approval" | "question" | "digest-item" | "heartbeat";
export const notificationOrigins: readonly NotificationOrigin[] = ["reminder", "checkin", "monitor", "approval", "question", "digest-item", "heartbeat"];

/** How urgent a candidate is, set by its producer (never guessed from its wording). */
export type Urgency = "low" | "normal" | "high" | "critical";
export const urgencies: readonly Urgency[] = ["low", "normal", "high", "critical"];

/** A scalar a monitor observed (a price, a status, a count). */
export type MonitorValue = string | number | boolean | null;

/**
 * Structured state a monitor reported: what it watches (`subject`, stable across checks), what it
 * checked this time, and the values it saw. Novelty compares `values` with the state of the last
 * report the person received; `thresholds` (absolute change per numeric field) and `targets` (a
 * level whose crossing always matters) say what counts as a trivial change.
 */
export interface MonitorState {
  subject: string;
  checked: string;
  values: Record<string, MonitorValue>;
  thresholds?: Record<string, number>;
  targets?: Record<string, number>;
}

export interface NotificationRecord {
  id: NotificationId;
  personId: PersonId;
  taskId: TaskId | null;
  text: string;
  decision: NotificationDecision;
  reasons: string[];
  /** For held messages: when they went out in a digest. */
  digestedAt: Date | null;
  at: Date;
  /** What produced the candidate (null on records made before origins existed). */
  origin: NotificationOrigin | null;
  urgency: Urgency | null;
  needsAction: boolean;
  /** `notify: always` counted: it traced to the person's own words and stayed under the hourly cap. */
  askedFor: boolean;
  /** Why a claimed `notify: always` was treated as if_worthwhile (null when it was not demoted). */
  demoted: "provenance" | "cap" | null;
  deadline: Date | null;
  /** The scheduled occurrence of recurring work this message belongs to. */
  occurrenceKey: string | null;
  monitor: MonitorState | null;
  /** The filter rule that decided, e.g. `no-new-content` (null on old records). */
  rule: string | null;
}

export type NewNotificationRecord = Pick<NotificationRecord, "personId" | "taskId" | "text" | "decision" | "reasons"> &
  Partial<Pick<NotificationRecord, "origin" | "urgency" | "needsAction" | "askedFor" | "demoted" | "deadline" | "occurrenceKey" | "monitor" | "rule">> & { at?: Date };

// ---------------------------------------------------------------------------------------------
// Local web chat mailbox (the local channel's "platform")

export interface LocalMessage {
  /** Increasing per store; used as the polling cursor. */
  seq: number;
  id: string;
  user: string;
  text: string;
  buttons: Button[];
  /** The structured card of an approval request (see `OutboxMessage.card`), else null. */
  card: Json | null;
  /** Files sent with the message (the page links to `/api/local/artifacts/:id`). */
  attachments: LocalAttachment[];
  at: Date;
  /** Who said it: Familiar (`assistant`, the default) or the person (`user`, in a person's chat log). */
  role: "user" | "assistant";
  /** Where it was said (the person's chat log keeps every channel); `local` for the web chat. */
  channel: ChannelName;
}

/** An attachment of a local chat message: enough to show it and fetch its bytes. */
export interface LocalAttachment {
  id: ArtifactId;
  name: string;
  mimeType: string;
  size: number;
}

/** What `putLocalMessage` takes: `role` defaults to `assistant`, `channel` to `local`, `attachments` and `card` to none. */
export type NewLocalMessage = Omit<LocalMessage, "seq" | "role" | "channel" | "attachments" | "card"> & Partial<Pick<LocalMessage, "role" | "channel" | "attachments" | "card">>;

// ---------------------------------------------------------------------------------------------
// Inbound webhooks (event triggers)

/** A webhook an outside service calls to resume tasks waiting for it. The secret is stored hashed. */
export interface Hook {
  id: HookId;
  personId: PersonId;
  /** What the event is, in the person's words (shown on /activity). */
  description: string;
  /** SHA-256 (hex) of the secret the caller sends in `X-Familiar-Hook-Secret`. */
  secretHash: string;
  createdAt: Date;
  /** When the hook last received an event (null: never). */
  lastEventAt: Date | null;
}

export type NewHook = Pick<Hook, "personId" | "description" | "secretHash">;
