/**
 * Collection names, creation-ordered keys and the indexes the adapter declares (the stored document
 * shapes are in documents.ts).
 *
 * Conventions: `_id` is the app-generated string id (`newId`, core/ids.ts) or, for records without
 * an id of their own, a creation-ordered key (`creationKey`); dates are BSON dates; opaque JSON
 * payloads (task checkpoints, tool arguments and results, approval details, audit data) are stored
 * as JSON text, because model-produced keys such as `$where` or `a.b` would otherwise be rejected by
 * the server inside update documents or misread as operators.
 */
import type { IndexDescription } from "mongodb";
import { newId } from "../../ids.js";

/** Every collection the adapter uses. */
export const collectionNames = {
  persons: "persons",
  identities: "identities",
  messages: "conversation_messages",
  summaries: "conversation_summaries",
  counters: "counters",
  goals: "goals",
  tasks: "tasks",
  journal: "tool_journal",
  memory: "memory_items",
  grants: "grants",
  approvals: "approval_requests",
  audit: "audit_events",
  outbox: "outbox",
  inbound: "inbound_updates",
  inboundHeld: "inbound_held",
  notifications: "notifications",
  localMailbox: "local_mailbox",
  hooks: "hooks",
  approvalChoices: "approval_choices",
  sentinelSessions: "sentinel_sessions",
  sentinelClock: "sentinel_clock",
  untrustedHosts: "untrusted_hosts",
  personRoles: "person_roles",
  groupMembers: "group_members",
  artifacts: "artifacts",
  connections: "connections",
  syncCursors: "sync_cursors",
  connectionChanges: "connection_changes",
  modelUsage: "model_usage",
  hookEvents: "hook_events",
} as const;

export type CollectionKey = keyof typeof collectionNames;

/**
 * A string key that sorts by creation time (same clock and counter as `newId`), for records whose
 * domain shape has no id (identities, journal entries, inbound update marks).
 */
export function creationKey(prefix: string): string {
  return `${prefix}_${newId("hook").slice("hook_".length)}`;
}

/**
 * Indexes per collection. Unique ones carry the store's uniqueness rules; the rest serve the
 * repositories' queries (their key order follows each query's equality fields, then its sort).
 */
export const indexSpecs: Readonly<Record<CollectionKey, IndexDescription[]>> = {
  persons: [],
  identities: [
    { key: { channel: 1, accountId: 1 }, name: "channel_account_unique", unique: true },
    { key: { personId: 1, _id: 1 }, name: "person_created" },
  ],
  messages: [
    { key: { personId: 1, seq: 1 }, name: "person_seq_unique", unique: true },
  ],
  summaries: [],
  counters: [],
  goals: [{ key: { personId: 1, _id: 1 }, name: "person_created" }],
  tasks: [
    { key: { personId: 1, _id: 1 }, name: "person_created" },
    { key: { goalId: 1, _id: 1 }, name: "goal_created" },
    { key: { status: 1, dueAt: 1, _id: 1 }, name: "status_due" },
    { key: { "wait.kind": 1, "wait.hookId": 1 }, name: "wait_hook" },
    { key: { "wait.kind": 1, "wait.approvalId": 1 }, name: "wait_approval" },
    { key: { personId: 1, status: 1, kind: 1 }, name: "person_status_kind" },
    { key: { "lease.owner": 1 }, name: "lease_owner" },
  ],
  journal: [
    { key: { idempotencyKey: 1 }, name: "idempotency_key_unique", unique: true },
    { key: { taskId: 1, step: 1 }, name: "task_step" },
  ],
  memory: [
    // $text needs a text index; the equality prefix keeps each search within one person.
    { key: { personId: 1, text: "text" }, name: "person_text" },
    { key: { personId: 1, _id: -1 }, name: "person_newest" },
  ],
  grants: [{ key: { personId: 1, _id: 1 }, name: "person_created" }],
  approvals: [
    { key: { personId: 1, status: 1, _id: 1 }, name: "person_status" },
    { key: { taskId: 1, _id: 1 }, name: "task_created" },
    { key: { status: 1, expiresAt: 1 }, name: "status_expires" },
    { key: { personId: 1, status: 1, decidedAt: 1, _id: 1 }, name: "person_status_decided" },
  ],
  audit: [{ key: { personId: 1, at: -1, _id: -1 }, name: "person_newest" }],
  outbox: [
    { key: { deliveryKey: 1 }, name: "delivery_key_unique", unique: true },
    { key: { status: 1, personId: 1, _id: 1 }, name: "status_person" },
    { key: { personId: 1, _id: 1 }, name: "person_created" },
    { key: { "lease.owner": 1 }, name: "lease_owner" },
  ],
  inbound: [
    { key: { channel: 1, updateId: 1 }, name: "channel_update_unique", unique: true },
    { key: { at: 1 }, name: "at" },
  ],
  inboundHeld: [
    { key: { channel: 1, heldAt: 1, _id: 1 }, name: "channel_held" },
    { key: { heldAt: 1 }, name: "held_at" },
  ],
  notifications: [
    { key: { personId: 1, at: -1, _id: -1 }, name: "person_at" },
    { key: { personId: 1, decision: 1, digestedAt: 1, at: 1 }, name: "person_held" },
    { key: { personId: 1, occurrenceKey: 1, at: -1 }, name: "person_occurrence" },
    { key: { personId: 1, "monitor.subject": 1, at: -1 }, name: "person_monitor" },
  ],
  localMailbox: [
    { key: { seq: 1 }, name: "seq_unique", unique: true },
    { key: { user: 1, seq: 1 }, name: "user_seq" },
  ],
  hooks: [{ key: { personId: 1, _id: 1 }, name: "person_created" }],
  approvalChoices: [{ key: { approvalId: 1 }, name: "approval" }],
  sentinelSessions: [],
  sentinelClock: [],
  untrustedHosts: [],
  personRoles: [],
  groupMembers: [{ key: { channel: 1, groupId: 1, addedAt: 1, _id: 1 }, name: "group_added" }],
  artifacts: [
    { key: { personId: 1, createdAt: -1, _id: -1 }, name: "person_newest" },
    { key: { seriesId: 1, version: 1 }, name: "series_version" },
  ],
  connections: [{ key: { personId: 1, _id: 1 }, name: "person_created" }],
  syncCursors: [],
  connectionChanges: [
    { key: { connectionId: 1, source: 1, key: 1 }, name: "source_key_unique", unique: true },
    { key: { seq: 1 }, name: "seq_unique", unique: true },
    { key: { dispatchedAt: 1, seq: 1 }, name: "undispatched" },
    { key: { personId: 1, seq: -1 }, name: "person_seq" },
    { key: { connectionId: 1, kind: 1, topic: 1, occurredAt: 1 }, name: "topic_at" },
  ],
  modelUsage: [],
  hookEvents: [{ key: { hookId: 1, _id: 1 }, name: "hook_order" }],
};
