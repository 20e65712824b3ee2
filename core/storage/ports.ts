/**
 * Repository ports: the only way core code reaches durable state. Methods speak intent
 * (`appendMessage`, `claimDueTask`, `decideApproval`) and each conditional update is atomic in
 * every adapter. Errors: `DuplicateKeyError` for unique keys, `ConflictError` for lost races or
 * leases, `IllegalTransitionError` for task state changes the state machine forbids,
 * `StoreUnavailableError` when the store cannot be reached.
 */
import type { OutboxRouting } from "./outbox-routing.js";
import type {
  ApprovalId,
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
import type { Actor, GroupRef, Identity, NewPerson, Person, PersonRole, PersonSettingsPatch } from "../persons/records.js";
import type { ApprovalChoice, ApprovalDecision, ApprovalRequest, DecideResult, NewApprovalRequest } from "../approvals/records.js";
import type { AuditEvent, NewAuditEvent } from "../audit/records.js";
import type { ChannelName, LocalMessage, NewLocalMessage, Button } from "../channels/records.js";
import type { ClaimedTask, JournalEntry, NewJournalIntent, NewTask, Task, TaskState, TaskKind, TaskStatus, WaitMatch } from "../tasks/records.js";
import type { ConversationMessage, ConversationSummary, NewConversationMessage } from "../conversation/records.js";
import type { DeliveryProgress, NewOutboxMessage, OutboxMessage } from "../outbox/records.js";
import type { Goal, GoalPatch, GoalStatus, NewGoal } from "../goals/records.js";
import type { Grant, HostSighting, NewGrant, SentinelSession } from "../policy/records.js";
import type { Hook, NewHook } from "../runtime/records.js";
import type { Json } from "../json.js";
import type { MemoryItem, MemoryPatch, NewMemoryItem } from "../memory/records.js";
import type { NewNotificationRecord, NotificationRecord } from "../notify/records.js";
import type { Page, PageRequest } from "./page.js";
import type { ArtifactRepository } from "./artifacts.js";
import type { ChangeRepository, ConnectionRepository } from "./connections.js";
import type { ModelUsageRepository } from "./usage.js";
import type { HookEventRepository } from "./hook-events.js";

export interface PersonRepository {
  /** Creates a person with defaults (UTC, en-US, proactivity normal, digest 18:00). */
  createPerson(input: NewPerson): Promise<Person>;
  getPerson(id: PersonId): Promise<Person | null>;
  /** Throws NotFoundError. */
  updatePerson(id: PersonId, patch: PersonSettingsPatch): Promise<Person>;
  /** Ordered by creation. */
  listPersons(page?: PageRequest): Promise<Page<Person>>;
  /** Links an account to a person. Throws DuplicateKeyError if (channel, accountId) is taken. */
  addIdentity(identity: Omit<Identity, "createdAt" | "unreachable" | "address"> & { address?: string }): Promise<Identity>;
  findIdentity(channel: ChannelName, accountId: string): Promise<Identity | null>;
  /** Ordered by creation. */
  listIdentities(personId: PersonId): Promise<Identity[]>;
  /** Unlinks one of the person's accounts; false when the person has no such identity. */
  removeIdentity(personId: PersonId, channel: ChannelName, accountId: string): Promise<boolean>;
  /** Marks (or with `null`, clears) an identity as unreachable after a permanent delivery error. */
  setIdentityUnreachable(channel: ChannelName, accountId: string, reason: string | null, now: Date): Promise<void>;
  /** The account wrote from `address`: it becomes the reply address and any unreachable mark is cleared. */
  recordIdentitySeen(input: { channel: ChannelName; accountId: string; address: string; now: Date }): Promise<void>;
  /**
   * Gives an existing account to another person (a confirmed `/link … move`): sets its person and
   * address and clears any unreachable mark; `createdAt` stays. Throws NotFoundError when the
   * identity does not exist.
   */
  moveIdentity(input: { channel: ChannelName; accountId: string; toPersonId: PersonId; address: string }): Promise<Identity>;
}

export interface ConversationRepository {
  /** Appends to the person's one conversation; the store assigns the next `seq` atomically. */
  appendMessage(input: NewConversationMessage): Promise<ConversationMessage>;
  /** The newest `limit` messages, returned oldest first. */
  listRecentMessages(personId: PersonId, limit: number): Promise<ConversationMessage[]>;
  /** Messages with `seq > afterSeq`, oldest first, at most `limit`. */
  listMessagesAfter(personId: PersonId, afterSeq: number, limit: number): Promise<ConversationMessage[]>;
  /** Messages with `fromSeq <= seq <= toSeq`, oldest first. */
  listMessagesBetween(personId: PersonId, fromSeq: number, toSeq: number): Promise<ConversationMessage[]>;
  getMessage(id: MessageId): Promise<ConversationMessage | null>;
  /** Highest `seq` so far (0 for an empty conversation). */
  lastSeq(personId: PersonId): Promise<number>;
  getSummary(personId: PersonId): Promise<ConversationSummary | null>;
  /**
   * Saves the rolling summary if the stored one still covers `expectedUpToSeq` (null: none yet),
   * so two concurrent summarizers cannot overwrite each other. Returns false on a lost race.
   */
  saveSummary(summary: Omit<ConversationSummary, "updatedAt">, expectedUpToSeq: number | null): Promise<boolean>;
}

export interface GoalRepository {
  createGoal(input: NewGoal): Promise<Goal>;
  getGoal(id: GoalId): Promise<Goal | null>;
  /** Throws NotFoundError. */
  updateGoal(id: GoalId, patch: GoalPatch): Promise<Goal>;
  /** Ordered by creation; optionally only the given statuses. */
  listGoals(personId: PersonId, filter?: { status?: GoalStatus[] }, page?: PageRequest): Promise<Page<Goal>>;
}

export interface TaskRepository {
  createTask(input: NewTask): Promise<Task>;
  getTask(id: TaskId): Promise<Task | null>;
  /**
   * Atomically claims one task for `owner` until `now + leaseMs`: it must be due at `now` — pending
   * (past `notBefore`), waiting for a time that has come, or running with an expired lease. Returns
   * null when it was not claimable. Two concurrent claims of one task: exactly one wins.
   */
  claimTask(input: { taskId: TaskId; owner: string; now: Date; leaseMs: number }): Promise<Task | null>;
  /**
   * Like claimTask, for the task due first (earliest due time, then creation), with the instant it
   * was due. The one way the runtime starts work: turns, wake-ups, resumed and interrupted tasks.
   */
  claimDueTask(input: { owner: string; now: Date; leaseMs: number; personId?: PersonId; excludePersons?: readonly PersonId[] }): Promise<ClaimedTask | null>;
  /**
   * When the next task (of a person not in `excludePersons`) becomes claimable by time — possibly in
   * the past — or null if none will.
   */
  nextDueAt(input?: { excludePersons?: readonly PersonId[] }): Promise<Date | null>;
  /**
   * Moves a task to a new state. For a running task, `owner` must hold the lease (else ConflictError);
   * leaving `running` releases the lease. Illegal transitions throw IllegalTransitionError (the store
   * rejects them even if a caller bypasses this method's checks).
   */
  transitionTask(input: { taskId: TaskId; owner: string | null; to: TaskState; now: Date }): Promise<Task>;
  /**
   * The condition a waiting task waits for was met: atomically moves it from exactly that wait to
   * `pending` (due at once) and stores `input` under the checkpoint's `input` key (what resumed it).
   * Returns null when the task no longer waits for it (first resume wins).
   */
  resumeWaitingTask(input: { taskId: TaskId; wait: WaitMatch; input: Json; now: Date }): Promise<Task | null>;
  /**
   * Binds the person's new message (conversation `seq`) to a turn: extends the person's pending (not yet claimed)
   * turn task to cover it, or creates one covering just it, due at `notBefore` if given (the inbound rate limit's
   * window). Call it in the same transaction as the append, so no message is ever without a turn.
   */
  bindTurnMessage(input: { personId: PersonId; seq: number; now: Date; notBefore?: Date | null }): Promise<Task>;
  /** Saves the cursor, plan and checkpoint of a running task and extends its lease. Requires the lease. */
  saveCheckpoint(input: {
    taskId: TaskId;
    owner: string;
    cursor: number;
    checkpoint: Json;
    plan?: string[];
    now: Date;
    leaseMs: number;
  }): Promise<Task>;
  /** Extends every lease `owner` holds to `now + leaseMs` (the owner's heartbeat). Returns how many. */
  renewLeases(input: { owner: string; now: Date; leaseMs: number }): Promise<number>;
  /**
   * Ends, as of `now`, every lease not held by `owner`: for the embedded mode, where one process owns
   * the store, so any other owner is a dead predecessor. Returns how many.
   */
  expireForeignLeases(input: { owner: string; now: Date }): Promise<number>;
  /** Oldest first, filtered by person, goal, statuses and kinds. */
  listTasks(filter: { personId?: PersonId; goalId?: GoalId; status?: TaskStatus[]; kind?: TaskKind[] }, page?: PageRequest): Promise<Page<Task>>;
  /** Tasks waiting for the given wait kind and key (hook id, approval id, or the person's reply / hold / connection changes). */
  findWaitingTasks(
    wait:
      | { kind: "event"; hookId: string }
      | { kind: "approval"; approvalId: string }
      | { kind: "reply"; personId: PersonId }
      | { kind: "held"; personId: PersonId }
      | { kind: "change"; personId: PersonId },
  ): Promise<Task[]>;
}

export interface JournalRepository {
  /** Records the intent before a tool call. Throws DuplicateKeyError if the key was recorded already. */
  recordIntent(input: NewJournalIntent): Promise<JournalEntry>;
  /** Records the outcome after the call; a second outcome for the same key is a ConflictError. */
  recordOutcome(idempotencyKey: string, outcome: { ok: true; result: Json } | { ok: false; error: string }, now: Date): Promise<JournalEntry>;
  getEntry(idempotencyKey: string): Promise<JournalEntry | null>;
  /** Ordered by step. */
  listJournal(taskId: TaskId): Promise<JournalEntry[]>;
}

export interface MemoryRepository {
  addMemory(input: NewMemoryItem): Promise<MemoryItem>;
  getMemory(id: MemoryId): Promise<MemoryItem | null>;
  /** Only the person's own item; throws NotFoundError otherwise. */
  updateMemory(personId: PersonId, id: MemoryId, patch: MemoryPatch): Promise<MemoryItem>;
  /** Returns false when there was no such item of that person. */
  deleteMemory(personId: PersonId, id: MemoryId): Promise<boolean>;
  /** Newest first. */
  listMemory(personId: PersonId, page?: PageRequest): Promise<Page<MemoryItem>>;
  /**
   * Items relevant to `query`, best first, at most `limit`, excluding items expired at `now`.
   * Full-text relevance (SQLite FTS5 bm25 / MongoDB text score).
   */
  searchMemory(personId: PersonId, query: string, options: { limit: number; now: Date }): Promise<MemoryItem[]>;
}

export interface GrantRepository {
  recordGrant(input: NewGrant): Promise<Grant>;
  getGrant(id: GrantId): Promise<Grant | null>;
  /** Grants not revoked, not consumed, and (for `until`) not expired at `now`; oldest first. */
  listActiveGrants(personId: PersonId, now: Date): Promise<Grant[]>;
  /** Atomically marks a once-grant used. Returns false if it was used, revoked or missing already. */
  consumeGrant(id: GrantId, now: Date): Promise<boolean>;
  /** Returns false when the grant was missing, not the person's, or already revoked. */
  revokeGrant(personId: PersonId, id: GrantId, now: Date): Promise<boolean>;
}

export interface ApprovalRepository {
  createApprovalRequest(input: NewApprovalRequest): Promise<ApprovalRequest>;
  getApprovalRequest(id: ApprovalId): Promise<ApprovalRequest | null>;
  /**
   * Records a decision atomically: only a pending request that has not expired at `now` accepts it;
   * the first decision wins. An expired pending request is marked `expired` and reported so.
   * Ownership (who may decide) is checked by the caller before this.
   */
  decideApproval(input: { id: ApprovalId; decision: ApprovalDecision; by: Actor; now: Date }): Promise<DecideResult>;
  /** Pending requests of the person, oldest first (including ones expired but not yet marked). */
  listPendingApprovals(personId: PersonId): Promise<ApprovalRequest[]>;
  /** Marks every pending request with `expiresAt <= now` as expired and returns them. */
  expireApprovals(now: Date): Promise<ApprovalRequest[]>;
  /** Every request of a task (any status), oldest first. */
  listTaskApprovals(taskId: TaskId): Promise<ApprovalRequest[]>;
  /** The person's denied requests decided at or after `since`, in the order they were decided. */
  listDeniedApprovals(personId: PersonId, since: Date): Promise<ApprovalRequest[]>;
}

/**
 * Sentinel's own durable state: the buttons of approval cards, the person's session, a high-water
 * mark of time (so a clock moved backwards cannot revive an expiry) and where hosts were first seen
 * in untrusted content.
 */
export interface SentinelStateRepository {
  /** Stores the buttons of one card. @throws DuplicateKeyError when a token exists already. */
  recordApprovalChoices(choices: Omit<ApprovalChoice, "createdAt">[], now: Date): Promise<void>;
  getApprovalChoice(token: string): Promise<ApprovalChoice | null>;
  /** The buttons of one request's card (in no particular order). */
  listApprovalChoices(approvalId: ApprovalId): Promise<ApprovalChoice[]>;
  getSession(personId: PersonId): Promise<SentinelSession | null>;
  /** Creates or replaces the person's session row. */
  saveSession(session: SentinelSession): Promise<void>;
  /** Atomically raises the stored high-water time to `now` if later; returns the (new) high-water mark. */
  advanceClock(now: Date): Promise<Date>;
  /** Records hosts seen in untrusted content; the first sighting of a host is kept, later ones ignored. */
  noteUntrustedHosts(personId: PersonId, hosts: string[], source: string, at: Date): Promise<void>;
  /** The first untrusted sightings of these hosts (hosts never seen are absent). */
  firstUntrustedSightings(personId: PersonId, hosts: string[]): Promise<HostSighting[]>;
}

/** Roles and group membership: who may act at the door. */
export interface AccessRepository {
  /** Marks the person as an admin (`role`) or removes the role (null); `now` is when (kept for ordering). */
  setRole(personId: PersonId, role: PersonRole | null, now: Date): Promise<void>;
  /** Persons with a role, oldest first. */
  listRoles(): Promise<{ personId: PersonId; role: PersonRole }[]>;
  /** Adds a member to a group's list; returns false when they were one already. */
  addGroupMember(group: GroupRef, personId: PersonId, now: Date): Promise<boolean>;
  /** Returns false when they were not a member. */
  removeGroupMember(group: GroupRef, personId: PersonId): Promise<boolean>;
  /** Members of one group, in the order they were added. */
  listGroupMembers(group: GroupRef): Promise<PersonId[]>;
}

export interface AuditRepository {
  appendAudit(input: NewAuditEvent): Promise<AuditEvent>;
  /** Newest first. */
  listAudit(personId: PersonId, page?: PageRequest & { kinds?: string[] }): Promise<Page<AuditEvent>>;
}

export interface OutboxRepository extends OutboxRouting {
  /** Enqueues a message; if `deliveryKey` exists already, returns the existing row unchanged. */
  enqueueOutbound(input: NewOutboxMessage, now: Date): Promise<OutboxMessage>;
  getOutbound(id: OutboxId): Promise<OutboxMessage | null>;
  /** Atomically claims the next deliverable message: queued (or sending, lease ended), due, the oldest undelivered of its person and lane. */
  claimNextOutbound(input: { owner: string; now: Date; leaseMs: number; personId?: PersonId }): Promise<OutboxMessage | null>;
  /** Requires the lease (and extends it): saves how far the delivery got, before and after each part. */
  saveProgress(input: { id: OutboxId; owner: string; progress: DeliveryProgress; now: Date; leaseMs: number }): Promise<OutboxMessage>;
  /** Extends every lease `owner` holds to `now + leaseMs` (the owner's heartbeat). Returns how many. */
  renewLeases(input: { owner: string; now: Date; leaseMs: number }): Promise<number>;
  /** Ends, as of `now`, every lease not held by `owner` (embedded mode: their process is gone). */
  expireForeignLeases(input: { owner: string; now: Date }): Promise<number>;
  /** When the next undelivered message becomes claimable (its retry time or lease end), or null. */
  nextDueAt(): Promise<Date | null>;
  /** Requires the lease. Records where it went; a second call is a ConflictError. */
  markDelivered(input: { id: OutboxId; owner: string; channel: ChannelName; address: string; platformIds: string[]; now: Date }): Promise<OutboxMessage>;
  /** Requires the lease. `retryAt: null` fails permanently; otherwise requeues for `retryAt`. */
  markDeliveryFailed(input: { id: OutboxId; owner: string; error: string; retryAt: Date | null; now: Date }): Promise<OutboxMessage>;
  /** The person's messages, oldest first, after the cursor (the outbox id). */
  listOutbound(personId: PersonId, page?: PageRequest & { status?: OutboxMessage["status"][] }): Promise<Page<OutboxMessage>>;
}

export interface InboundRepository {
  /**
   * Records a platform update id (Telegram update_id, Slack event_id, Discord message/interaction id).
   * Returns true the first time and false for a repeat: the caller drops repeats. Durable before any
   * side effect of the update is confirmed.
   */
  markUpdateProcessed(channel: ChannelName, updateId: string, now: Date): Promise<boolean>;
  /**
   * Deletes records older than `before` (redeliveries never come that late), and held updates held
   * before `before` (their dedupe record may be gone, so handing them over again could repeat them).
   * Returns how many records of either kind.
   */
  pruneProcessedUpdates(before: Date): Promise<number>;
  /**
   * Keeps platform updates fetched but not yet handled, durably, before they are confirmed to the
   * platform (Telegram long polling confirms an update to Telegram only once it is held). `payload`
   * is the update as the platform sent it (JSON text). A (channel, updateId) held already keeps its
   * first payload.
   */
  holdUpdates(channel: ChannelName, updates: readonly { updateId: string; payload: string }[], now: Date): Promise<void>;
  /** Forgets a held update (it was handled). Releasing one that is not held does nothing. */
  releaseUpdate(channel: ChannelName, updateId: string): Promise<void>;
  /** The channel's held updates (a process stopped or crashed before handling them), in the order they were held. */
  listHeldUpdates(channel: ChannelName): Promise<HeldUpdate[]>;
}

/** A platform update kept by {@link InboundRepository.holdUpdates} until it is handled. */
export interface HeldUpdate {
  updateId: string;
  /** The update as the platform sent it (JSON text). */
  payload: string;
  heldAt: Date;
}

export interface NotificationRepository {
  recordNotification(input: NewNotificationRecord): Promise<NotificationRecord>;
  /** Decisions since `since`, newest first (novelty and rate budget look at these). */
  listNotificationsSince(personId: PersonId, since: Date): Promise<NotificationRecord[]>;
  /** Held and not yet digested, oldest first. */
  listHeldNotifications(personId: PersonId): Promise<NotificationRecord[]>;
  markDigested(ids: NotificationId[], now: Date): Promise<void>;
  /** The newest sent or held record carrying `occurrenceKey` (an occurrence already taken care of), or null. */
  findOccurrence(personId: PersonId, occurrenceKey: string): Promise<NotificationRecord | null>;
  /** The newest sent or held record whose monitor state has `subject` (what the person was last told), or null. */
  lastMonitorReport(personId: PersonId, subject: string): Promise<NotificationRecord | null>;
}

/**
 * The local web chat's mailbox: what Familiar said to each local user, with buttons. The web app also
 * keeps each person's whole chat log here (both sides, every channel) under the key `log:<personId>`,
 * which no local user name can take (they never contain `:`).
 */
export interface LocalMailboxRepository {
  /** Throws DuplicateKeyError when the id exists. */
  putLocalMessage(input: NewLocalMessage): Promise<LocalMessage>;
  /** Replaces text, buttons and card of an earlier message (a card showing its outcome); bumps its seq. */
  editLocalMessage(id: string, patch: { text: string; buttons: Button[]; card?: Json | null }, now: Date): Promise<LocalMessage | null>;
  getLocalMessage(id: string): Promise<LocalMessage | null>;
  /** Messages for `user` with `seq > afterSeq`, oldest first. */
  listLocalMessages(user: string, afterSeq: number, limit: number): Promise<LocalMessage[]>;
  /** The newest `limit` messages for `user` with `seq < beforeSeq`, returned oldest first (scrolling back). */
  listLocalMessagesBefore(user: string, beforeSeq: number, limit: number): Promise<LocalMessage[]>;
}

export interface HookRepository {
  createHook(input: NewHook): Promise<Hook>;
  getHook(id: HookId): Promise<Hook | null>;
  /** Oldest first. */
  listHooks(personId: PersonId): Promise<Hook[]>;
  /** Records that an event arrived (for /activity). */
  touchHook(id: HookId, now: Date): Promise<void>;
  /** Returns false when there was no such hook of that person. */
  deleteHook(personId: PersonId, id: HookId): Promise<boolean>;
}

/** Status reported by `/healthz`. */
export interface StoreHealth {
  ok: boolean;
  kind: "sqlite" | "mongodb";
  detail?: string;
}

/**
 * All repositories of one store, plus lifecycle. `transaction` runs `fn` atomically where the store
 * allows (SQLite always; MongoDB without a replica set runs it without a transaction and says so in
 * `supportsTransactions`).
 */
export interface Store {
  readonly kind: "sqlite" | "mongodb";
  readonly supportsTransactions: boolean;
  readonly persons: PersonRepository;
  readonly conversation: ConversationRepository;
  readonly goals: GoalRepository;
  readonly tasks: TaskRepository;
  readonly journal: JournalRepository;
  readonly memory: MemoryRepository;
  readonly grants: GrantRepository;
  readonly approvals: ApprovalRepository;
  readonly sentinel: SentinelStateRepository;
  readonly access: AccessRepository;
  readonly audit: AuditRepository;
  readonly outbox: OutboxRepository;
  readonly inbound: InboundRepository;
  readonly notifications: NotificationRepository;
  readonly localMailbox: LocalMailboxRepository;
  readonly hooks: HookRepository;
  readonly artifacts: ArtifactRepository;
  readonly connections: ConnectionRepository;
  readonly changes: ChangeRepository;
  /** Model tokens per person and local day (the daily model budget). */
  readonly usage: ModelUsageRepository;
  readonly hookEvents: HookEventRepository;
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  health(): Promise<StoreHealth>;
  close(): Promise<void>;
}
