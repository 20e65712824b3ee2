/**
 * The email connector: a person's mailboxes over IMAP (imapflow) and SMTP (nodemailer), parsed by
 * mailparser in worker threads, every mail's content passed through the mail-safety rules first
 * (safety.ts: one-time codes and access links removed, no answers to machines or loops, senders
 * verified from the receiving server's Authentication-Results only). It defines the `email`
 * connection kind (core/connections), the `email.sync` sessions (IDLE with a watchdog, or polling;
 * UIDVALIDITY + UID marks, nothing lost or repeated across restarts) and the email tools. It owns
 * no credentials: they come from the person's vault through core/connections at each use.
 */
import type { ToolDefinition } from "../../core/tools/index.js";
import { organiseTools } from "./tools/organise-tools.js";
import { readTools } from "./tools/read-tools.js";
import { sendTools } from "./tools/send-tools.js";
import type { EmailToolDeps } from "./tools/support.js";
import { watchTool } from "./tools/watch-tool.js";
import type { Store } from "../../core/storage/index.js";

export { ARRIVED, SENT, SENT_AUTOMATIC, arrivalMatches, arrivalOf, observeArrival, type ArrivalData } from "./arrivals.js";
export { EmailError, describeMailError, type EmailErrorCode } from "./errors.js";
export { emailConnectionKind, emailForm, testEmail } from "./kind.js";
export { createParsePool, DEFAULT_LIMITS, type MailParsePool } from "./parse-pool.js";
export { formatRef, parseRef, type MailRef } from "./refs.js";
export { EmailService, type Account, type EmailServiceDeps, type EmailTimings } from "./service.js";
export { emailSettingsSchema, isLoopbackHost, type EmailSettings } from "./settings.js";
export { describeMailFilter, mailFilterSchema, matchesMail, type MailFilter } from "./watch-filter.js";
export type { EmailToolDeps, MailWorkspace } from "./tools/support.js";

/** Every email tool; each is offered only to persons who granted its capability on a mailbox. */
export function emailTools(deps: EmailToolDeps & { store: Pick<Store, "changes" | "tasks" | "goals"> }): ToolDefinition[] {
  return [...readTools(deps), ...sendTools(deps), ...organiseTools(deps), watchTool(deps)];
}
