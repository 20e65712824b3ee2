/**
 * The notification filter: a candidate message from background work is sent now, held for the
 * digest or dropped — by the person's proactivity, quiet hours, rate budget, novelty against what
 * was already said, urgency and whether the person must act. Pure rules plus the notifier that
 * records each decision and queues what is sent; it fails closed (holds) and never calls tools.
 */
export { Notifier, digestJobName } from "./notifier.js";
export { backgroundCandidates, occurrenceKeyOf, reminderCandidate, wakeupProvenance } from "./producers.js";
export { notifyTools } from "./tools.js";
export { withoutSilenceTokens } from "./silence.js";
export { monitorStateSchema, notificationOrigins, urgencies, type MonitorState, type MonitorValue, type NewNotificationRecord, type NotificationDecision, type NotificationOrigin, type NotificationRecord, type Urgency } from "./records.js";
