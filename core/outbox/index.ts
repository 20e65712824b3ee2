/**
 * The outbox: the one outbound door (`Outbound`: every message to a person is queued there, once
 * per delivery key) and the delivery of everything Familiar says — routed to a channel by the
 * person's reach preference, claimed in order per person and channel, split into parts by the
 * platform's limits with progress saved around every part, a part cut short settled per messenger,
 * refusals classified into four outcomes and retried with backoff for a bounded time, a refused
 * file sent as a document then as a link, and a message that keeps failing handed to another of
 * the person's chats. It never decides what to say.
 */
export { OutboxDelivery, type OutboxDeliveryDeps } from "./delivery.js";
export { alertOnOtherChannel, type AlertDeps } from "./alerts.js";
export { fileForms, type FileLinker } from "./files.js";
export { GIVE_UP_AFTER_MS } from "./handoff.js";
export { Outbound, type OutboundDeps } from "./outbound.js";
export { chooseLanes, PAGE_OPEN_MS, WebPresence, type PagePresence, type RouteFacts } from "./routing.js";
export { emptyProgress, type DeliveryProgress, type NewOutboxMessage, type OutboxMessage, type OutboxStatus } from "./records.js";
