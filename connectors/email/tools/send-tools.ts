/**
 * Writing mail: `email_send`, `email_reply` and `email_draft`. Each call describes exactly what it
 * would do (core/tools ActionDescription): the card shows From, To, Cc, Bcc, the subject, the whole
 * text and the attachments, and an approval covers only that digest (a changed word needs a new one).
 * In a tainted activation only "Approve once" is offered (core/approvals). Before any card:
 * a reply to a mail Familiar never answers (its own, the person's own address, automatic, lists,
 * bounces, out-of-office, no-reply — safety.ts `neverAnswerReason`) is refused, and an automatic
 * send (from background work, not the person's own words) beyond the thread's daily budget too.
 * Automatic sends carry `Auto-Submitted: auto-replied` (RFC 3834).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { PersonId } from "../../../core/ids.js";
import { ActionUnavailableError, actionDigest, defineTool, type ActionDescription, type ToolContext, type ToolDefinition, type ToolResult } from "../../../core/tools/index.js";
import { SENT_AUTOMATIC } from "../arrivals.js";
import { composeMail, replySubject, type OutgoingAttachment, type OutgoingMail } from "../compose.js";
import { neverAnswerReason, replyThreadHeaders, threadKey, verifySender } from "../safety.js";
import { trustedAuthservIds } from "../settings.js";
import type { Account } from "../service.js";
import { deliverOnce, messageIdOf, refuseRepeat } from "./deliver.js";
import { accountFor, bytesInWords, fail, isResult, mailFailure, messageFor, ok, type EmailToolDeps } from "./support.js";

/** Longest text a card shows whole (and so the longest a send may have), characters. */
export const MAX_BODY_CHARS = 32_000;
const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

const recipients = z.array(z.email().max(320)).max(50);
const attachmentsArg = z.array(z.string().min(1).max(500)).max(10).optional().describe("Workspace paths of files to attach");

/** A prepared message: what would go out, and the card's lines. */
interface Prepared {
  account: Account;
  mail: OutgoingMail;
  thread: string | null;
  automatic: boolean;
  extraFields: { name: string; value: string }[];
}

/** Turns a refusal found while describing into the error the gate hands to the model (no card). */
const throwIf = (r: unknown): void => {
  if (!isResult(r) || r.ok) return;
  throw new ActionUnavailableError(r.code === "not_found" ? "not_found" : r.code === "no_mailbox" ? "no_mailbox" : "mail_error", r.error);
};

async function readAttachments(deps: EmailToolDeps, personId: PersonId, paths: readonly string[] | undefined): Promise<OutgoingAttachment[]> {
  const out: OutgoingAttachment[] = [];
  for (const path of paths ?? []) {
    try {
      out.push({ filename: path.split("/").pop() ?? path, content: await deps.workspace.readFile(personId, path, MAX_ATTACHMENT_BYTES) });
    } catch (err) {
      throw new ActionUnavailableError("file_error", `Cannot attach ${path}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** Whether a send from this activation is automatic: background work, not the person's own words. */
const isAutomatic = (ctx: ToolContext) => (ctx.chainDepth ?? 0) > 0;

async function checkBudget(deps: EmailToolDeps, p: Pick<Prepared, "account" | "thread" | "automatic">, now: Date): Promise<void> {
  if (!p.automatic || p.thread === null) return;
  const used = await deps.store.changes.countChanges({ connectionId: p.account.connection.id, kind: SENT_AUTOMATIC, topic: p.thread, since: new Date(now.getTime() - DAY_MS) });
  if (used >= deps.automaticPerThread)
    throw new ActionUnavailableError("send_limit", `This thread already had ${used} automatic send(s) in the last 24 hours (the limit is ${deps.automaticPerThread}). Nothing was sent; tell the person instead.`);
}

function describePrepared(p: Prepared, verb: "SEND" | "DRAFT", summary: string): ActionDescription {
  const m = p.mail;
  const attachments = m.attachments.map((a) => `${a.filename} (${bytesInWords(a.content.length)})`).join(", ") || "none";
  const fields = [
    { name: "From", value: m.from.name ? `${m.from.name} <${m.from.address}>` : m.from.address },
    { name: "To", value: m.to.join(", ") || "(none)" },
    { name: "Cc", value: m.cc.join(", ") || "(none)" },
    { name: "Bcc", value: m.bcc.join(", ") || "(none)" },
    { name: "Subject", value: m.subject },
    ...p.extraFields,
    { name: "Attachments", value: attachments },
    { name: "Body", value: m.text },
  ];
  if (p.automatic && verb === "SEND") fields.push({ name: "Sent on its own", value: "yes: background work, not your words (marked Auto-Submitted: auto-replied)" });
  const digest = actionDigest({
    verb,
    account: p.account.connection.id,
    from: m.from.address,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    subject: m.subject,
    text: m.text,
    inReplyTo: m.inReplyTo ?? null,
    attachments: m.attachments.map((a) => [a.filename, createHash("sha256").update(a.content).digest("hex")]),
  });
  return {
    capability: "email.send",
    access: "write",
    hardToUndo: verb === "SEND",
    method: verb,
    destinations: verb === "SEND" ? [...m.to, ...m.cc, ...m.bcc] : [],
    carriesData: verb === "SEND",
    summary,
    page: null,
    fields,
    purchase: null,
    onceOnly: false,
    digest,
  };
}

/** The message a SEND card describes, under its Message-ID (see deliver.ts: one per task and digest). */
function messageIdFor(p: Prepared, ctx: ToolContext, verb: "SEND" | "DRAFT"): string {
  return messageIdOf(p.account, ctx, describePrepared(p, verb, "").digest);
}

/** What differs between `email_send`, `email_reply` and `email_draft`; the policy, the card and the approval check are shared. */
interface WritingSpec<S extends z.ZodType> {
  name: string;
  description: string;
  parameters: S;
  verb: "SEND" | "DRAFT";
  /** Arguments naming where the mail goes (Sentinel's destination check), and carrying data out. */
  destinationArgs: string[];
  exfiltrationArgs: string[];
  prepare(deps: EmailToolDeps, args: z.infer<S>, ctx: ToolContext): Promise<Prepared>;
  /** The card's one-line summary. */
  summary(p: Prepared): string;
  /** Does it, once the approval is known to cover exactly `p` (its card's digest is `digest`). */
  run(deps: EmailToolDeps, p: Prepared, ctx: ToolContext, digest: string): Promise<ToolResult>;
}

/**
 * A tool that writes mail: Sentinel judges the exact message (`describe`: the card's fields and
 * digest; a message already sent, or cut short mid-send, is refused before any card), and `execute`
 * acts only if the approval still covers that message.
 */
function writingTool<S extends z.ZodType>(deps: EmailToolDeps, spec: WritingSpec<S>): ToolDefinition {
  return defineTool({
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    sideEffect: true,
    capability: "email.send",
    offered: (pid: PersonId) => deps.connections.granted(pid, "email", "send"),
    policy: {
      capability: "email.send",
      access: "write",
      hardToUndo: spec.verb === "SEND",
      method: { fixed: spec.verb },
      destinationArgs: spec.destinationArgs,
      exfiltrationArgs: spec.exfiltrationArgs,
      describe: async (args, ctx) => {
        const p = await spec.prepare(deps, spec.parameters.parse(args), ctx);
        if (spec.verb === "SEND") await refuseRepeat(deps, p, messageIdFor(p, ctx, "SEND"));
        return describePrepared(p, spec.verb, spec.summary(p));
      },
    },
    async execute(args, ctx) {
      try {
        const p = await spec.prepare(deps, args, ctx);
        const { digest } = describePrepared(p, spec.verb, "");
        if (ctx.action && ctx.action.digest !== digest) return fail("denied", `The ${spec.verb === "SEND" ? "message" : "draft"} changed after it was approved; nothing was ${spec.verb === "SEND" ? "sent" : "saved"}. Ask again with the new text.`);
        return await spec.run(deps, p, ctx, digest);
      } catch (err) {
        if (err instanceof ActionUnavailableError) return fail(err.code, err.message);
        return mailFailure(err);
      }
    },
  });
}

/** Sends a prepared, approved message (deliver.ts sends it once). */
async function sendPrepared(deps: EmailToolDeps, p: Prepared, ctx: ToolContext, digest: string): Promise<ToolResult> {
  await checkBudget(deps, p, ctx.now);
  return deliverOnce(deps, p, messageIdOf(p.account, ctx, digest), ctx.now);
}

/** Saves a prepared, approved draft in Drafts (not twice: the same draft in this task has the same Message-ID). */
async function saveDraft(deps: EmailToolDeps, p: Prepared, ctx: ToolContext, digest: string): Promise<ToolResult> {
  const client = deps.service.client(p.account);
  const drafts = (await client.specialFolder("\\Drafts")) ?? "Drafts";
  const messageId = messageIdOf(p.account, ctx, digest);
  if (await client.hasMessageId(drafts, messageId).catch(() => false)) return ok(`The draft is already in ${drafts} of ${p.account.connection.label}.`);
  const composed = await composeMail(p.mail, { now: ctx.now, messageId, keepBcc: true });
  await client.append(drafts, composed.raw, ["\\Draft"]);
  return ok(`Saved the draft in ${drafts} of ${p.account.connection.label}.`);
}

const sendArgs = z.object({
  mailbox: z.string().max(320).optional().describe("Send from this connected address (default: the first that may send)"),
  to: recipients.min(1),
  cc: recipients.optional(),
  bcc: recipients.optional(),
  subject: z.string().max(998),
  body: z.string().max(MAX_BODY_CHARS),
  attachments: attachmentsArg,
});

async function prepareSend(deps: EmailToolDeps, args: z.infer<typeof sendArgs>, ctx: ToolContext): Promise<Prepared> {
  const account = await accountFor(deps, ctx.personId, "send", args.mailbox);
  throwIf(account);
  const a = account as Account;
  const mail: OutgoingMail = { from: { name: a.settings.name ?? "", address: a.settings.address }, to: args.to, cc: args.cc ?? [], bcc: args.bcc ?? [], subject: args.subject, text: args.body, attachments: await readAttachments(deps, ctx.personId, args.attachments) };
  return { account: a, mail, thread: null, automatic: isAutomatic(ctx), extraFields: [] };
}

function sendTool(deps: EmailToolDeps): ToolDefinition {
  return writingTool(deps, {
    name: "email_send",
    verb: "SEND",
    run: sendPrepared,
    description: "Send an email. The person sees the whole message on a card and it goes out only when they approve.",
    parameters: sendArgs,
    destinationArgs: ["to[]", "cc[]", "bcc[]"],
    exfiltrationArgs: ["subject", "body"],
    prepare: prepareSend,
    summary: (p) => `Send an email from ${p.mail.from.address} to ${[...p.mail.to, ...p.mail.cc, ...p.mail.bcc].join(", ")}`,
  });
}

const replyArgs = z.object({
  id: z.string().min(1).max(700).describe("The id of the mail to answer"),
  body: z.string().max(MAX_BODY_CHARS),
  reply_all: z.boolean().default(false),
  attachments: attachmentsArg,
});

async function prepareReply(deps: EmailToolDeps, args: z.infer<typeof replyArgs>, ctx: ToolContext): Promise<Prepared> {
  const target = await messageFor(deps, ctx.personId, "send", args.id);
  throwIf(target);
  const { account, ref } = target as Exclude<typeof target, ToolResult>;
  const [f] = await deps.service.client(account).fetch([ref], { maxBytes: 0 });
  if (!f) throw new ActionUnavailableError("not_found", "That message is no longer in the folder.");
  if (!f.parsed.ok) throw new ActionUnavailableError("unreadable", f.parsed.reason);
  const m = f.parsed.message;
  const own = await deps.service.ownAddresses(ctx.personId);
  const never = neverAnswerReason({ headers: m.headerLines, subject: m.subject }, { ownAddresses: own });
  if (never) throw new ActionUnavailableError("never_answer", `Familiar never answers this mail (${never.detail}). Nothing was sent or shown.`);
  const to = (m.replyTo.length ? m.replyTo : m.from).map((x) => x.address);
  const cc = args.reply_all ? [...m.to, ...m.cc].map((x) => x.address).filter((x) => !own.includes(x) && !to.includes(x)) : [];
  const thread = threadKey(m.headerLines);
  const threading = replyThreadHeaders(m.headerLines);
  const v = verifySender(m.headerLines, { authservIds: trustedAuthservIds(account.settings) });
  const mail: OutgoingMail = {
    from: { name: account.settings.name ?? "", address: account.settings.address },
    to,
    cc,
    bcc: [],
    subject: replySubject(m.filtered.subject),
    text: args.body,
    attachments: await readAttachments(deps, ctx.personId, args.attachments),
    inReplyTo: threading.inReplyTo ?? null,
    references: threading.references ? threading.references.split(/\s+/).filter(Boolean) : [],
  };
  const sender = `${m.from[0]?.address ?? "(no sender)"} — ${v.verified ? "verified" : `NOT verified (${v.detail})`}`;
  const prepared: Prepared = { account, mail, thread, automatic: isAutomatic(ctx), extraFields: [{ name: "In reply to", value: sender }] };
  await checkBudget(deps, prepared, ctx.now);
  return prepared;
}

function replyTool(deps: EmailToolDeps): ToolDefinition {
  return writingTool(deps, {
    name: "email_reply",
    verb: "SEND",
    run: sendPrepared,
    description: "Answer a mail by its id (to its sender; reply_all adds the other recipients). The person sees the whole reply on a card and it goes out only when they approve. Automatic mail, lists and Familiar's own mail are never answered.",
    parameters: replyArgs,
    destinationArgs: [],
    exfiltrationArgs: ["body"],
    prepare: prepareReply,
    summary: (p) => `Reply from ${p.mail.from.address} to ${[...p.mail.to, ...p.mail.cc].join(", ")}`,
  });
}

const draftArgs = sendArgs.extend({ to: recipients });

function draftTool(deps: EmailToolDeps): ToolDefinition {
  return writingTool(deps, {
    name: "email_draft",
    verb: "DRAFT",
    description: "Save an email as a draft in the mailbox's Drafts folder (nothing is sent). The person approves the draft on a card.",
    parameters: draftArgs,
    destinationArgs: [],
    exfiltrationArgs: [],
    prepare: async (d, args, ctx) => ({ ...(await prepareSend(d, args, ctx)), automatic: false }),
    summary: (p) => `Save a draft in ${p.account.connection.label}'s Drafts folder`,
    run: saveDraft,
  });
}

/** The writing tools. */
export function sendTools(deps: EmailToolDeps): ToolDefinition[] {
  return [sendTool(deps), replyTool(deps), draftTool(deps)];
}
