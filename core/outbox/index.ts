/**
 * The outbox: the one outbound door (`Outbound`: every message to a person is queued there, once
 * per delivery key) and the delivery of everything Familiar says — claimed per person in order,
 * split into parts by the platform's limits with progress saved around every part, a part cut short
 * settled per messenger, refusals classified into four outcomes and retried with backoff. It never
 * decides what to say.
 */
export { OutboxDelivery } from "./delivery.js";
export { alertOnOtherChannel, type AlertDeps } from "./alerts.js";
export { Outbound, type OutboundDeps } from "./outbound.js";
