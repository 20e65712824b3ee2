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
  "connection.capabilities": "Connection permissions changed",
  "connection.disconnected": "Connection removed",
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
  "pairing.declined": "Pairing declined",
  "access.role": "Access changed",
  "access.group": "Group access changed",
  "hook.event": "Event from a connected service",
  "change.matched": "A watched change arrived",
  "hook.rejected": "Event from a connected service refused",
  "task.skipped": "Task skipped",
  "task.paused": "Task paused after your denials",
  "tool.result": "Tool result",
  "secret.stored": "Secret saved",
  "secret.removed": "Secret removed",
  "sentinel.secret_unbound_destination": "Secret held back (not its site)",
  "sentinel.inert_links": "Links shown as plain text",
};


/**
 * The Activity tab's filter: a few human categories, each a set of audit kinds (a kind may be in two,
 * e.g. a refused message is a message and a problem). `effects` narrows Sentinel's decisions: what
 * Familiar did (allowed calls) versus what it asked about or was stopped from doing.
 */
export const ACTIVITY_CATEGORIES: readonly { id: string; label: string; kinds: readonly string[]; effects?: readonly string[] }[] = [
  { id: "done", label: "What Familiar did", kinds: ["sentinel.decision", "tool.result"], effects: ["allow"] },
  { id: "asked", label: "Asked you or blocked", kinds: ["sentinel.decision", "approval.requested", "approval.decided", "approval.deferred", "approval.held", "approval.paused", "approval.denied_again", "task.paused", "sentinel.secret_unbound_destination"], effects: ["ask", "deny"] },
  { id: "messages", label: "Messages", kinds: ["outbound.sent", "outbound.failed", "outbound.part_rejected", "outbound.delayed", "outbound.given_up", "notification.decision", "notification.cap", "inbound.refused", "sentinel.inert_links"] },
  { id: "permissions", label: "Permissions and secrets", kinds: ["grant.revoked", "grant.ended", "secret.stored", "secret.removed", "connection.capabilities"] },
  { id: "services", label: "Connected services", kinds: ["connection.capabilities", "connection.disconnected", "hook.event", "hook.rejected", "change.matched"] },
  { id: "people", label: "Who can talk to Familiar", kinds: ["identity.linked", "identity.unlinked", "pairing.approved", "pairing.refused", "pairing.declined", "access.role", "access.group"] },
  { id: "problems", label: "Problems", kinds: ["outbound.failed", "outbound.given_up", "outbound.part_rejected", "outbound.delayed", "hook.rejected", "task.skipped", "inbound.refused", "sentinel.secret_unbound_destination", "tool.result"] },
];
