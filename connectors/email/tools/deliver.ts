/**
 * Sending one approved message exactly once, across crashes and repeated calls.
 *
 * A message's Message-ID is derived from the mailbox, the task and the action's digest (what the card
 * showed), so the same message asked for again in the same piece of work has the same Message-ID.
 * Three steps, each durable before the next:
 * 1. a **claim** of the attempt (`email.sending`) is recorded before SMTP is opened;
 * 2. the SMTP send; once the server accepted it, the **sent record** (`email.sent`, or
 *    `email.sent.automatic` for background work; key the Message-ID) is recorded — and when it
 *    refused, or was never reached, a failure record frees the message for another attempt;
 * 3. the copy in the Sent folder (not on Gmail, which files sent mail itself).
 *
 * A call for a message that already has a sent record sends nothing: it makes the Sent copy if a crash
 * after step 2 left it missing, and says the message went out. A call that finds a claim without a
 * sent record met a crash *during* step 2 — the server may or may not have accepted the message —
 * and sends nothing either: when the Sent folder holds the Message-ID it was sent; otherwise the
 * outcome is unknown and said so (only the person can check with the recipient). Nothing here ever
 * sends a message twice; the one thing it cannot know is whether a send cut short mid-transfer got
 * through.
 */
import { createHash } from "node:crypto";
import { ActionUnavailableError, type ToolContext, type ToolResult } from "../../../core/tools/index.js";
import { SENT, SENT_AUTOMATIC } from "../arrivals.js";
import { composeMail, type OutgoingMail } from "../compose.js";
import { EmailError } from "../errors.js";
import { mintMessageId } from "../safety.js";
import { sendComposed } from "../smtp.js";
import type { Account } from "../service.js";
import { ok, type EmailToolDeps } from "./support.js";

/** Kind of the claim recorded before a message is handed to SMTP (key `sending:<Message-ID>:<attempt>`). */
export const SENDING = "email.sending";
/** Kind of the record of an attempt that certainly did not reach the server (key `failed:<Message-ID>:<attempt>`). */
export const SEND_FAILED = "email.send_failed";
/** Source (within the connection) of the claims and sent records. */
const SOURCE = "sent";

/** A message ready to go: the mailbox, the mail, its thread and whether background work sends it. */
export interface SendPlan {
  account: Account;
  mail: OutgoingMail;
  /** The thread key (safety.ts threadKey) of a reply; null for a new message. */
  thread: string | null;
  automatic: boolean;
}

/**
 * The Message-ID of `digest` (the approved action's) in this piece of work: the same message asked
 * for again by the same task gets the same id; another task, or a changed word, another one.
 */
export function messageIdOf(account: Account, ctx: Pick<ToolContext, "taskId" | "idempotencyKey">, digest: string): string {
  const seed = createHash("sha256").update(`${account.connection.id}\u0000${ctx.taskId ?? ctx.idempotencyKey}\u0000${digest}`).digest();
  return mintMessageId(account.settings.address.split("@")[1] ?? "localhost", seed.subarray(0, 15));
}

const isGmail = (account: Account) => /(^|\.)(gmail|googlemail)\.com$/i.test(account.settings.imap.host);

/** The Sent folder to copy into (null: none, or Gmail, which keeps its own copy). */
async function sentFolder(deps: EmailToolDeps, account: Account): Promise<string | null> {
  if (isGmail(account)) return null;
  return deps.service.client(account).specialFolder("\\Sent").catch(() => null);
}

/** Copies the message into Sent unless it is there already (the Message-ID is looked up first). */
async function ensureSentCopy(deps: EmailToolDeps, plan: SendPlan, messageId: string, date: Date, raw?: Buffer): Promise<boolean> {
  const folder = await sentFolder(deps, plan.account);
  if (!folder) return false;
  const client = deps.service.client(plan.account);
  if (await client.hasMessageId(folder, messageId).catch(() => false)) return true;
  const bytes = raw ?? (await composeMail({ ...plan.mail, automatic: plan.automatic }, { now: date, messageId })).raw;
  return (await client.append(folder, bytes, ["\\Seen"]).catch(() => null)) !== null;
}

async function recordSent(deps: EmailToolDeps, plan: SendPlan, messageId: string, at: Date, accepted: readonly string[]): Promise<void> {
  const { connection } = plan.account;
  await deps.store.changes.commitChanges({
    connectionId: connection.id,
    personId: connection.personId,
    source: SOURCE,
    cursor: {},
    changes: [{ key: messageId, kind: plan.automatic ? SENT_AUTOMATIC : SENT, topic: plan.thread ?? messageId.toLowerCase(), occurredAt: at, data: { to: plan.mail.to, cc: plan.mail.cc, bcc: plan.mail.bcc.length, accepted: [...accepted] }, dispatched: true }],
    now: at,
  });
}

/** Where earlier attempts of a message stand: the next attempt's number, and a claim cut short (no sent record, no failure). */
async function attempts(deps: EmailToolDeps, plan: SendPlan, messageId: string): Promise<{ next: number; open: Date | null }> {
  const find = (key: string) => deps.store.changes.findChange({ connectionId: plan.account.connection.id, source: SOURCE, key });
  for (let n = 1; ; n++) {
    const claim = await find(`sending:${messageId}:${n}`);
    if (!claim) return { next: n, open: null };
    if (!(await find(`failed:${messageId}:${n}`))) return { next: n + 1, open: claim.occurredAt };
  }
}

/**
 * Refuses a message an earlier call already sent or began to send (see the module comment): throws
 * `already_sent` (after making a missing Sent copy) or `send_uncertain`; returns the number of the
 * next attempt when this message never reached the server (or every attempt failed for certain).
 * Called before any card, and again right before sending.
 * @throws ActionUnavailableError
 */
export async function refuseRepeat(deps: EmailToolDeps, plan: SendPlan, messageId: string): Promise<number> {
  const { connection } = plan.account;
  const sent = await deps.store.changes.findChange({ connectionId: connection.id, source: SOURCE, key: messageId });
  if (sent) {
    const copied = await ensureSentCopy(deps, plan, messageId, sent.occurredAt).catch(() => false);
    throw new ActionUnavailableError("already_sent", `This exact message already went out at ${sent.occurredAt.toISOString()} (Message-ID ${messageId}); it was not sent again.${copied ? "" : " (No copy could be kept in the Sent folder.)"}`);
  }
  const { next, open } = await attempts(deps, plan, messageId);
  if (!open) return next;
  const folder = await sentFolder(deps, plan.account);
  if (folder && (await deps.service.client(plan.account).hasMessageId(folder, messageId).catch(() => false))) {
    await recordSent(deps, plan, messageId, open, []);
    throw new ActionUnavailableError("already_sent", `This exact message already went out at ${open.toISOString()} (Message-ID ${messageId}); it was not sent again.`);
  }
  throw new ActionUnavailableError(
    "send_uncertain",
    `Sending this exact message was cut short at ${open.toISOString()} while the mail server was receiving it (Message-ID ${messageId}), so it may or may not have been delivered. It was not sent again. Tell the person, who can check with the recipient and ask again if it must go.`,
  );
}

/** A failed send that certainly left nothing at the server (it refused, or was never reached); anything else may have got through. */
function certainlyNotSent(err: unknown): boolean {
  return err instanceof EmailError && ["auth_failed", "connect_refused", "host_not_found", "tls_failed", "tls_untrusted", "starttls_unavailable", "send_rejected"].includes(err.code);
}

/**
 * Sends `plan` under `messageId` once: claim, SMTP, sent record, Sent copy (module comment).
 * @throws ActionUnavailableError (already sent, uncertain) and EmailError (the server refused)
 */
export async function deliverOnce(deps: EmailToolDeps, plan: SendPlan, messageId: string, now: Date): Promise<ToolResult> {
  const attempt = await refuseRepeat(deps, plan, messageId);
  const { connection } = plan.account;
  const record = (key: string, kind: string) =>
    deps.store.changes.commitChanges({ connectionId: connection.id, personId: connection.personId, source: SOURCE, cursor: {}, changes: [{ key, kind, topic: null, occurredAt: now, data: { to: plan.mail.to, cc: plan.mail.cc, bcc: plan.mail.bcc.length }, dispatched: true }], now });
  // Another worker claimed the same attempt in between: it sends the message, this call does not.
  if ((await record(`sending:${messageId}:${attempt}`, SENDING)).length === 0) await refuseRepeat(deps, plan, messageId);
  const composed = await composeMail({ ...plan.mail, automatic: plan.automatic }, { now, messageId });
  let receipt: Awaited<ReturnType<typeof sendComposed>>;
  try {
    receipt = await sendComposed(plan.account.settings, { password: plan.account.password }, composed);
  } catch (err) {
    if (certainlyNotSent(err)) await record(`failed:${messageId}:${attempt}`, SEND_FAILED);
    throw err;
  }
  await recordSent(deps, plan, messageId, now, receipt.accepted);
  await ensureSentCopy(deps, plan, messageId, now, composed.raw).catch(() => false);
  const refused = receipt.rejected.length ? ` The server refused: ${receipt.rejected.join(", ")}.` : "";
  return ok(`Sent to ${receipt.accepted.join(", ") || "nobody"} (Message-ID ${messageId}).${refused}`, { data: { messageId, accepted: receipt.accepted, rejected: receipt.rejected } });
}
