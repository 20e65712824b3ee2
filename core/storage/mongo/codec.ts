/**
 * Stored documents → domain records. Each mapper copies exactly the fields of the domain type (so
 * server-added fields such as a text score never leak out) and turns JSON text back into values.
 */
import { asId } from "../../ids.js";
import { emptyProgress, type OutboxMessage } from "../../outbox/records.js";
import { parseReach, readAttachments } from "../index.js";
import { type ApprovalRequest } from "../../approvals/records.js";
import { type AuditEvent } from "../../audit/records.js";
import { type ConversationMessage, type ConversationSummary } from "../../conversation/records.js";
import { type Goal } from "../../goals/records.js";
import { type Grant } from "../../policy/records.js";
import { type Identity, type Person } from "../../persons/records.js";
import { type Json } from "../../json.js";
import { type JournalEntry, type Task, type TaskKind, type TaskState } from "../../tasks/records.js";
import { type LocalMessage } from "../../channels/records.js";
import { type MemoryItem } from "../../memory/records.js";
import { type NotificationRecord } from "../../notify/records.js";
import { parseStoredDemotion, parseStoredMonitor, parseStoredOrigin, parseStoredUrgency } from "../index.js";
import type { ApprovalDoc, AuditDoc, GoalDoc, GrantDoc, IdentityDoc, JournalDoc, LocalMailboxDoc, MemoryDoc, MessageDoc, NotificationDoc, OutboxDoc, PersonDoc, SummaryDoc, TaskDoc } from "./documents.js";

/** Encodes an opaque JSON payload for storage (see collections.ts for why it is text). */
export function encodeJson(value: Json): string {
  return JSON.stringify(value);
}

/** Decodes a payload written by `encodeJson`. */
export function decodeJson(text: string): Json {
  return JSON.parse(text) as Json;
}

const optionalId = <K extends Parameters<typeof asId>[0]>(kind: K, value: string | null) =>
  value === null ? null : asId(kind, value);

export function toPerson(d: PersonDoc): Person {
  return {
    id: asId("person", d._id),
    displayName: d.displayName,
    timeZone: d.timeZone,
    timeZoneConfirmed: d.timeZoneConfirmed ?? d.timeZone !== "UTC",
    timeZoneAsk: d.timeZoneAsk ? { at: d.timeZoneAsk.at, pendingSeq: d.timeZoneAsk.pendingSeq ?? null } : null,
    locale: d.locale,
    proactivity: d.proactivity,
    quietHours: d.quietHours === null ? null : { from: d.quietHours.from, to: d.quietHours.to },
    digestTime: d.digestTime ?? null,
    paused: d.paused,
    personaName: d.personaName ?? null,
    personaStyle: d.personaStyle ?? null,
    reach: parseReach(d.reach),
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export function toIdentity(d: IdentityDoc): Identity {
  return {
    personId: asId("person", d.personId),
    channel: d.channel,
    accountId: d.accountId,
    address: d.address,
    unreachable: d.unreachable === null ? null : { reason: d.unreachable.reason, since: d.unreachable.since },
    createdAt: d.createdAt,
  };
}

export function toMessage(d: MessageDoc): ConversationMessage {
  return {
    id: asId("message", d._id),
    personId: asId("person", d.personId),
    seq: d.seq,
    role: d.role,
    channel: d.channel,
    text: d.text,
    taskId: optionalId("task", d.taskId),
    at: d.at,
    attachments: readAttachments(d.attachments),
  };
}

export function toSummary(d: SummaryDoc): ConversationSummary {
  return { personId: asId("person", d._id), upToSeq: d.upToSeq, text: d.text, updatedAt: d.updatedAt };
}

export function toGoal(d: GoalDoc): Goal {
  return {
    id: asId("goal", d._id),
    personId: asId("person", d.personId),
    title: d.title,
    description: d.description,
    status: d.status,
    originMessageId: optionalId("message", d.originMessageId),
    checkIn: d.checkIn === null ? null : { cron: d.checkIn.cron, timeZone: d.checkIn.timeZone },
    notes: d.notes,
    taint: typeof d.taintSource === "string" ? { source: d.taintSource } : null,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

function toTaskState(d: TaskDoc): TaskState {
  switch (d.status) {
    case "pending":
    case "running":
      return { status: d.status };
    case "waiting": {
      const wait = d.wait;
      if (wait === null) throw new Error(`task ${d._id} is waiting without a wait condition`);
      switch (wait.kind) {
        case "time":
          return { status: "waiting", wait: { kind: "time", until: wait.until } };
        case "event":
          return { status: "waiting", wait: { kind: "event", hookId: wait.hookId } };
        case "approval":
          return { status: "waiting", wait: { kind: "approval", approvalId: wait.approvalId } };
        case "reply":
          return { status: "waiting", wait: { kind: "reply" } };
        case "held":
          return { status: "waiting", wait: { kind: "held", until: wait.until } };
        case "change":
          return { status: "waiting", wait: { kind: "change", afterSeq: wait.afterSeq } };
      }
      break;
    }
    case "done":
      return { status: "done", result: d.result };
    case "failed":
      return { status: "failed", error: d.error ?? "" };
    case "cancelled":
      return { status: "cancelled", reason: d.reason };
  }
}

/** Kind of a task written before kinds existed: its checkpoint said `type`; anything else was a wake-up. */
function legacyTaskKind(checkpoint: string): TaskKind {
  const decoded = decodeJson(checkpoint);
  const type = decoded !== null && typeof decoded === "object" && !Array.isArray(decoded) ? decoded.type : undefined;
  return type === "turn" || type === "checkin" ? type : "wakeup";
}

export function toTask(d: TaskDoc): Task {
  return {
    id: asId("task", d._id),
    personId: asId("person", d.personId),
    goalId: optionalId("goal", d.goalId),
    kind: d.kind ?? legacyTaskKind(d.checkpoint),
    title: d.title,
    state: toTaskState(d),
    plan: [...d.plan],
    cursor: d.cursor,
    checkpoint: decodeJson(d.checkpoint),
    lease: d.lease === null ? null : { owner: d.lease.owner, until: d.lease.until },
    notBefore: d.notBefore,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export function toJournalEntry(d: JournalDoc): JournalEntry {
  const o = d.outcome;
  return {
    taskId: asId("task", d.taskId),
    step: d.step,
    idempotencyKey: d.idempotencyKey,
    tool: d.tool,
    args: decodeJson(d.args),
    sideEffect: d.sideEffect,
    intentAt: d.intentAt,
    outcome:
      o === null
        ? null
        : o.ok
          ? { ok: true, result: decodeJson(o.result), at: o.at }
          : { ok: false, error: o.error, at: o.at },
  };
}

export function toMemory(d: MemoryDoc): MemoryItem {
  return {
    id: asId("memory", d._id),
    personId: asId("person", d.personId),
    kind: d.kind,
    text: d.text,
    provenance: {
      messageId: optionalId("message", d.provenance.messageId),
      channel: d.provenance.channel,
      note: d.provenance.note,
    },
    confidence: d.confidence,
    expiresAt: d.expiresAt,
    taint: typeof d.taintSource === "string" ? { source: d.taintSource } : null,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export function toGrant(d: GrantDoc): Grant {
  return {
    id: asId("grant", d._id),
    personId: asId("person", d.personId),
    capability: d.capability,
    constraints: { ...d.constraints },
    pattern: d.pattern === undefined || d.pattern === null ? null : decodeJson(d.pattern),
    scope: { ...d.scope },
    grantedBy: { channel: d.grantedBy.channel, accountId: d.grantedBy.accountId },
    grantedAt: d.grantedAt,
    consumedAt: d.consumedAt,
    revokedAt: d.revokedAt,
  };
}

export function toApproval(d: ApprovalDoc): ApprovalRequest {
  return {
    id: asId("approval", d._id),
    personId: asId("person", d.personId),
    taskId: optionalId("task", d.taskId),
    capability: d.capability,
    summary: d.summary,
    details: decodeJson(d.details),
    status: d.status,
    decision: d.decision === null ? null : { ...d.decision },
    decidedBy: d.decidedBy === null ? null : { channel: d.decidedBy.channel, accountId: d.decidedBy.accountId },
    decidedAt: d.decidedAt,
    createdAt: d.createdAt,
    expiresAt: d.expiresAt,
  };
}

export function toAudit(d: AuditDoc): AuditEvent {
  return {
    id: asId("audit", d._id),
    personId: optionalId("person", d.personId),
    kind: d.kind,
    summary: d.summary,
    data: decodeJson(d.data),
    at: d.at,
  };
}

export function toOutbox(d: OutboxDoc): OutboxMessage {
  return {
    id: asId("outbox", d._id),
    personId: asId("person", d.personId),
    deliveryKey: d.deliveryKey,
    channel: d.channel,
    lane: d.lane ?? null,
    text: d.text,
    buttons: d.buttons.map((b) => ({ id: b.id, label: b.label })),
    editOf: optionalId("outbox", d.editOf),
    card: d.card === undefined || d.card === null ? null : decodeJson(d.card),
    attachments: (d.attachments ?? []).map((id) => asId("artifact", id)),
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt,
    lease: d.lease === null ? null : { owner: d.lease.owner, until: d.lease.until },
    lastError: d.lastError,
    delivered:
      d.delivered === null
        ? null
        : { channel: d.delivered.channel, address: d.delivered.address, platformIds: [...d.delivered.platformIds], at: d.delivered.at },
    progress: { ...emptyProgress(), ...d.progress },
    createdAt: d.createdAt,
  };
}

export function toNotification(d: NotificationDoc): NotificationRecord {
  return {
    id: asId("notification", d._id),
    personId: asId("person", d.personId),
    taskId: optionalId("task", d.taskId),
    text: d.text,
    decision: d.decision,
    reasons: [...d.reasons],
    digestedAt: d.digestedAt,
    at: d.at,
    origin: parseStoredOrigin(d.origin),
    urgency: parseStoredUrgency(d.urgency),
    needsAction: d.needsAction === true,
    askedFor: d.askedFor === true,
    demoted: parseStoredDemotion(d.demoted),
    deadline: d.deadline ?? null,
    occurrenceKey: d.occurrenceKey ?? null,
    monitor: parseStoredMonitor(d.monitor),
    rule: d.rule ?? null,
  };
}

export function toLocalMessage(d: LocalMailboxDoc): LocalMessage {
  return {
    seq: d.seq,
    id: d._id,
    user: d.user,
    text: d.text,
    buttons: d.buttons.map((b) => ({ id: b.id, label: b.label })),
    card: d.card === undefined || d.card === null ? null : decodeJson(d.card),
    attachments: (d.attachments ?? []).map((a) => ({ id: asId("artifact", a.id), name: a.name, mimeType: a.mimeType, size: a.size })),
    at: d.at,
    role: d.role ?? "assistant",
    channel: d.channel ?? "local",
  };
}
