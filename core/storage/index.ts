/**
 * Storage: the repository ports (the only way core code reaches durable state; methods speak intent
 * and each conditional update is atomic), the store's secret boundary (scrubbing.ts), and the
 * stored forms both adapters read back (reach, attachments, notification fields). The records the
 * ports speak belong to their rooms (core/tasks/records.ts, core/persons/records.ts, …): this room
 * must not define domain types. Its SQLite and MongoDB adapters are rooms of their own below it
 * (sqlite/, mongo/), imported only by the composition root and the tests.
 */
export { readAttachments } from "./attachments.js";
export { type ArtifactRepository } from "./artifacts.js";
export type {
  AccessRepository,
  ApprovalRepository,
  AuditRepository,
  ConversationRepository,
  GoalRepository,
  GrantRepository,
  HeldUpdate,
  HookRepository,
  InboundRepository,
  JournalRepository,
  LocalMailboxRepository,
  MemoryRepository,
  NotificationRepository,
  OutboxRepository,
  PersonRepository,
  SentinelStateRepository,
  Store,
  StoreHealth,
  TaskRepository,
} from "./ports.js";
export { scrubbingStore } from "./scrubbing.js";
export { parseReach, reachText } from "./reach.js";
export type { ChangeRepository, ConnectionRepository } from "./connections.js";
export { type Page, type PageRequest } from "./page.js";
export { parseStoredDemotion, parseStoredMonitor, parseStoredOrigin, parseStoredUrgency } from "./stored-notifications.js";
export type { ModelUsageDay, ModelUsageRepository } from "./usage.js";
export type { HookEventRepository, KeptHookEvent } from "./hook-events.js";
