/**
 * Codes the tool loop itself gives to calls it did not run or that threw:
 * `invalid_json` (arguments not JSON), `invalid_arguments` (schema mismatch), `unknown_tool`,
 * `tool_disabled` (repeatedly invalid in this activation), `tool_threw`, `interrupted` (the
 * activation was stopped before the call ran).
 */
export type LoopToolErrorCode = "invalid_json" | "invalid_arguments" | "unknown_tool" | "tool_disabled" | "tool_threw" | "interrupted";

/** Codes of the journal on resume: `not_run` (a transactional call cut short, safe to run again), `failed` (an outcome recorded before codes existed). */
export type JournalErrorCode = "not_run" | "failed";

/**
 * Sentinel's refusals: `denied` (policy or the person said no), `approval_required` (a card was
 * sent; data carries the approval id), `approvals_paused` (the denial breaker paused the task:
 * `data.pauseTask`, core/approvals/denials.ts) / `approval_deferred` (too many cards open), `egress_denied` (the egress guard refused the destination), `secret_*` (see SecretErrorCode).
 */
export type SentinelErrorCode = "denied" | "approval_required" | "approvals_paused" | "approval_deferred" | "egress_denied";

/** Why an allowed request still failed. */
export type EgressFailureCode = "timeout" | "too_large" | "network" | "aborted";

/**
 * Why the vault refused. `secret_unbound_destination`: a request carried a vault value (in some
 * encoding) to an origin that secret is not bound to — refused whatever the grants say.
 */
export type SecretErrorCode = "secret_unknown" | "secret_not_bound" | "secret_unbound_destination" | "vault_key_invalid" | "vault_corrupt";

/** Why the workspace jail (sandbox/workspace/jail.ts) refused a path or file. */
export type JailErrorCode =
  | "path_outside_workspace"
  | "not_a_regular_file"
  | "linked_file"
  | "not_found"
  | "too_large"
  | "quota_exceeded"
  | "changed_during_access"
  | "jail_unsupported";

/** Codes of the file tools: the jail's, or `file_error` for anything else. */
export type FileErrorCode = JailErrorCode | "file_error";

/** Codes of the browser tools (sandbox/browser). */
export type BrowserErrorCode = "browser_unavailable" | "browser_error" | "no_page" | "unknown_ref" | "page_changed" | "navigation_failed" | "no_download";

/**
 * Codes of the computer and the artifacts (sandbox/exec, sandbox/artifacts): `computer_unavailable`
 * (no sandbox on this host, said why), `computer_failed` (the sandbox could not start this run),
 * `limit_reached` (a run was killed at a limit, named in the message), `artifact_invalid` (content
 * that cannot make that kind of artifact), `pdf_failed` (Chromium could not print it).
 */
export type ComputerErrorCode = "computer_unavailable" | "computer_failed" | "limit_reached" | "artifact_invalid" | "pdf_failed";

/** Codes of the scheduling tools: a schedule that does not parse, or a time already past. */
export type ScheduleErrorCode = "invalid_schedule" | "in_the_past";

/**
 * Codes of the calendar tools (connectors/calendar): `calendar_unavailable` (the server cannot be
 * reached, refused the account, or is not CalDAV), `calendar_conflict` (the event changed on the
 * server since it was read), `calendar_read_only` (a followed feed, or no write access),
 * `calendar_changed` (the change no longer matches the one that was judged or approved).
 */
export type CalendarToolErrorCode = "calendar_unavailable" | "calendar_conflict" | "calendar_read_only" | "calendar_changed";

/**
 * Codes of the email tools (connectors/email): `no_mailbox` (none connected with that capability),
 * `mail_error` (the server failed, said in words), `unreadable` (the message could not be read),
 * `never_answer` (a mail Familiar never answers: its own, a machine's, a list's), `send_limit` (the
 * thread's automatic sends for the day are used up), `already_sent` (this exact message already went
 * out: not sent again), `send_uncertain` (an earlier send of it was cut short mid-transfer: it may
 * have been delivered, so it is not sent again).
 */
export type MailErrorCode = "no_mailbox" | "mail_error" | "unreadable" | "never_answer" | "send_limit" | "already_sent" | "send_uncertain";

/**
 * The closed set of error codes a tool result (`{ ok: false, code }`) may carry — what the model
 * reads in `Error [code]: …`, what the journal and the audit record. Lower-case snake case; a new
 * failure kind is added here, never invented as a free string.
 */
export type ToolErrorCode =
  | LoopToolErrorCode
  | JournalErrorCode
  | SentinelErrorCode
  | EgressFailureCode
  | SecretErrorCode
  | FileErrorCode
  | BrowserErrorCode
  | ComputerErrorCode
  | ScheduleErrorCode
  | CalendarToolErrorCode
  | MailErrorCode;

const ALL: Record<ToolErrorCode, true> = {
  invalid_json: true, invalid_arguments: true, unknown_tool: true, tool_disabled: true, tool_threw: true, interrupted: true,
  not_run: true, failed: true,
  denied: true, approval_required: true, approvals_paused: true, approval_deferred: true, egress_denied: true,
  timeout: true, too_large: true, network: true, aborted: true,
  secret_unknown: true, secret_not_bound: true, secret_unbound_destination: true, vault_key_invalid: true, vault_corrupt: true,
  path_outside_workspace: true, not_a_regular_file: true, linked_file: true, not_found: true, quota_exceeded: true, changed_during_access: true, jail_unsupported: true, file_error: true,
  browser_unavailable: true, browser_error: true, no_page: true, unknown_ref: true, page_changed: true, navigation_failed: true, no_download: true,
  computer_unavailable: true, computer_failed: true, limit_reached: true, artifact_invalid: true, pdf_failed: true,
  invalid_schedule: true, in_the_past: true,
  calendar_unavailable: true, calendar_conflict: true, calendar_read_only: true, calendar_changed: true,
  no_mailbox: true, mail_error: true, unreadable: true, never_answer: true, send_limit: true, already_sent: true, send_uncertain: true,
};

/** Whether a string read back (journal row, older data) is one of the codes. */
export function isToolErrorCode(value: unknown): value is ToolErrorCode {
  return typeof value === "string" && Object.hasOwn(ALL, value);
}
