/**
 * The audit trail: what was done, by what, for whom (a tool call, a Sentinel decision, an approval
 * decided, a message sent), kept in the store and shown on the dashboard's activity. The room holds
 * the records; writers append them through the store's `AuditRepository`. It must never hold a
 * secret: what goes in has passed the store's scrubbing boundary.
 */
export { type AuditEvent, type NewAuditEvent } from "./records.js";
