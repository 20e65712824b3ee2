/**
 * Every audit kind as a plain label, one table for the server (web/api/activity-words.ts) and the
 * dashboard's filter (webui/dashboard.tsx). A kind missing here still reads as words there.
 */
export const KIND_WORDS: Record<string, string> = {
  "sentinel.decision": "Permission check",
  "sentinel.follow_up": "Follow-up after a permission check",
  "approval.requested": "Asked for your approval",
  "approval.decided": "You answered an approval",
  "approval.deferred": "Approval put off",
  "approval.held": "Approval held",
  "approval.paused": "Approval paused",
  "approval.denied_again": "Asked again after a no",
  "grant.revoked": "Permission revoked",
  "grant.ended": "Permission ended",
  "identity.linked": "Messenger linked",
  "identity.unlinked": "Messenger unlinked",
  "outbound.sent": "Message sent",
  "outbound.failed": "Message not delivered",
  "outbound.part_rejected": "Part of a message refused",
  "outbound.delayed": "Message waiting to go out",
  "outbound.given_up": "Message sent in another chat",
  "notification.decision": "Notification decision",
  "notification.cap": "Notification limit reached",
  "inbound.refused": "Message refused",
  "pairing.approved": "Pairing approved",
  "pairing.refused": "Pairing refused",
  "access.role": "Access changed",
  "access.group": "Group access changed",
  "hook.event": "Event from a connected service",
  "hook.rejected": "Event from a connected service refused",
  "task.skipped": "Task skipped",
  "tool.result": "Tool result",
  "secret.stored": "Secret saved",
  "secret.removed": "Secret removed",
  "sentinel.secret_unbound_destination": "Secret held back (not its site)",
  "sentinel.inert_links": "Links shown as plain text",
};

