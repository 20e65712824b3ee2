/**
 * Reading mail: `email_search`, `email_read` and `email_save_attachment`. Everything a result shows of
 * a mail went through the one-time-code filter in the mail worker; results are untrusted content
 * (they taint the activation); the sender is shown verified or not (only the receiving server's
 * Authentication-Results counts). Search terms are matched again against what the model may see,
 * so a search cannot tell whether a removed code contains some digits (no oracle).
 *
 * Sentinel: search and read need the person's `read` grant on the mailbox and run without a card;
 * saving an attachment writes the workspace (`files.write`) and asks like any file write.
 */
import { z } from "zod";
import type { PersonId } from "../../../core/ids.js";
import { defineTool, type ToolDefinition } from "../../../core/tools/index.js";
import type { ParsedMessage } from "../message.js";
import type { FetchedMessage } from "../mailbox-client.js";
import { formatRef } from "../refs.js";
import { trustedAuthservIds } from "../settings.js";
import { neverAnswerReason, verifySender } from "../safety.js";
import { accountFor, bytesInWords, fail, isResult, mailFailure, messageFor, ok, type EmailToolDeps } from "./support.js";

/** Longest body the model reads of one mail, characters (the rest is said to be cut). */
export const READ_BODY_CHARS = 20_000;
/** Largest attachment saved to the workspace, bytes. */
export const MAX_SAVED_ATTACHMENT_BYTES = 20 * 1024 * 1024;

const fold = (s: string) => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
const address = (a: { name: string; address: string } | undefined) => (a ? (a.name ? `${a.name} <${a.address}>` : a.address) : "(no sender)");

function verdictLine(m: ParsedMessage, authservIds: readonly string[]): { verified: boolean; line: string } {
  const v = verifySender(m.headerLines, { authservIds });
  return { verified: v.verified, line: v.verified ? `sender verified (${v.method.toUpperCase()}, ${v.domain})` : `sender NOT verified (${v.detail})` };
}

function snippet(m: ParsedMessage): string {
  return m.filtered.body.replace(/\s+/g, " ").trim().slice(0, 200);
}

/** Whether a search term shows in what the model may see (subject and body after the filter). */
function visibleMatch(m: ParsedMessage, query: { subject?: string; text?: string }): boolean {
  if (query.subject && !fold(m.filtered.subject).includes(fold(query.subject))) return false;
  if (query.text && !fold(m.filtered.text).includes(fold(query.text))) return false;
  return true;
}

const searchArgs = z.object({
  mailbox: z.string().max(320).optional().describe("The mailbox address to search (default: the first connected)"),
  folder: z.string().max(200).optional().describe("Folder, default INBOX"),
  from: z.string().max(200).optional(),
  to: z.string().max(200).optional(),
  subject: z.string().max(200).optional(),
  text: z.string().max(200).optional().describe("Words anywhere in the mail"),
  since: z.iso.date().optional().describe("Received on or after (YYYY-MM-DD)"),
  before: z.iso.date().optional().describe("Received before (YYYY-MM-DD)"),
  unread: z.boolean().optional(),
  has_attachment: z.boolean().optional(),
  limit: z.number().int().min(1).max(20).default(10),
});

function searchTool(deps: EmailToolDeps): ToolDefinition {
  return defineTool({
    name: "email_search",
    description: "Search the person's mailbox (newest first). Returns id, from, subject, date, a snippet and whether the sender is verified. One-time codes and sign-in links are removed from everything shown.",
    parameters: searchArgs,
    sideEffect: false,
    capability: "email.read",
    offered: (pid: PersonId) => deps.connections.granted(pid, "email", "read"),
    async execute(args, ctx) {
      const account = await accountFor(deps, ctx.personId, "read", args.mailbox);
      if (isResult(account)) return account;
      try {
        const client = deps.service.client(account);
        const query = { from: args.from, to: args.to, subject: args.subject, text: args.text, since: args.since, before: args.before, unread: args.unread, hasAttachment: args.has_attachment, path: args.folder };
        const found = await client.searchUids(query, args.limit * 3);
        const fetched = await client.fetch(found.uids.map((uid) => ({ path: found.path, uidValidity: found.uidValidity, uid })), { maxBytes: 1024 * 1024 });
        const byUid = new Map(fetched.map((f) => [f.ref.uid, f]));
        const ids = trustedAuthservIds(account.settings);
        const hits: Record<string, unknown>[] = [];
        for (const uid of found.uids) {
          const f = byUid.get(uid);
          if (!f || hits.length >= args.limit) continue;
          const id = formatRef({ connectionId: account.connection.id, ...f.ref });
          if (!f.parsed.ok) {
            if (!args.subject && !args.text) hits.push({ id, unreadable: f.parsed.reason, date: f.facts.receivedAt });
            continue;
          }
          const m = f.parsed.message;
          if (m.headersOnly && args.text) continue;
          if (!visibleMatch(m, args)) continue;
          const v = verdictLine(m, ids);
          hits.push({ id, from: address(m.from[0]), subject: m.filtered.subject, date: m.date ?? f.facts.receivedAt, snippet: m.headersOnly ? "(large message: open it with email_read)" : snippet(m), sender_verified: v.verified, unread: !f.facts.seen, has_attachment: f.facts.hasAttachments });
        }
        const content = hits.length ? JSON.stringify(hits, null, 1) : `No mail in ${account.connection.label}/${found.path} matches.`;
        return ok(content, { untrusted: { source: `email search in ${account.connection.label}` } });
      } catch (err) {
        return mailFailure(err);
      }
    },
  });
}

/** The mail as the model reads it: the headers that matter, the verdicts, attachments, the filtered body. */
export function renderMail(f: FetchedMessage & { parsed: { ok: true; message: ParsedMessage } }, ctx: { id: string; authservIds: readonly string[]; ownAddresses: readonly string[] }): string {
  const m = f.parsed.message;
  const v = verdictLine(m, ctx.authservIds);
  const never = neverAnswerReason({ headers: m.headerLines, subject: m.subject }, { ownAddresses: ctx.ownAddresses });
  const lines = [`Id: ${ctx.id}`, `From: ${address(m.from[0])} — ${v.line}`];
  if (m.replyTo.length) lines.push(`Reply-To: ${m.replyTo.map(address).join(", ")}`);
  lines.push(`To: ${m.to.map(address).join(", ") || "(none)"}`);
  if (m.cc.length) lines.push(`Cc: ${m.cc.map(address).join(", ")}`);
  lines.push(`Date: ${m.date ?? f.facts.receivedAt}`, `Subject: ${m.filtered.subject || "(no subject)"}`);
  if (m.listId) lines.push(`Mailing list: ${m.listId}`);
  if (never) lines.push(`Automatic mail (${never.detail}): Familiar never answers it.`);
  if (m.filtered.removed.length) lines.push(`Removed by the safety filter: ${[...new Set(m.filtered.removed.map((r) => r.marker))].join(", ")} (Familiar cannot read these to anyone).`);
  if (m.attachments.length) {
    lines.push(`Attachments (${m.attachmentCount}):`);
    m.attachments.forEach((a, i) => lines.push(`  ${i + 1}. ${a.filename ?? "(unnamed)"} — ${a.contentType}, ${bytesInWords(a.size)}${a.related ? " (embedded image)" : ""}`));
  }
  const body = m.filtered.body;
  const cut = body.length > READ_BODY_CHARS || m.filtered.truncated || m.textCut || m.htmlCut;
  lines.push("", m.headersOnly ? "(The message is larger than Familiar reads; only its headers are shown.)" : body.slice(0, READ_BODY_CHARS));
  if (cut) lines.push(`\n(The text was cut; it is ${body.length} characters.)`);
  return lines.join("\n");
}

function readTool(deps: EmailToolDeps): ToolDefinition {
  return defineTool({
    name: "email_read",
    description: "Read one mail by its id: sender (verified or not), recipients, date, subject, the text (HTML turned into text) and its attachments (save one with email_save_attachment). One-time codes and sign-in links are removed.",
    parameters: z.object({ id: z.string().min(1).max(700) }),
    sideEffect: false,
    capability: "email.read",
    offered: (pid: PersonId) => deps.connections.granted(pid, "email", "read"),
    async execute(args, ctx) {
      const target = await messageFor(deps, ctx.personId, "read", args.id);
      if (isResult(target)) return target;
      try {
        const [f] = await deps.service.client(target.account).fetch([target.ref]);
        if (!f) return fail("not_found", "That message is no longer in the folder.");
        if (!f.parsed.ok) return fail("unreadable", f.parsed.reason);
        const content = renderMail({ ...f, parsed: f.parsed }, { id: args.id, authservIds: trustedAuthservIds(target.account.settings), ownAddresses: await deps.service.ownAddresses(ctx.personId) });
        return ok(content, { untrusted: { source: `email ${args.id}` } });
      } catch (err) {
        return mailFailure(err);
      }
    },
  });
}

const textLike = (type: string) => type.startsWith("text/") || type === "message/rfc822" || type === "application/json" || type === "application/xml";

function saveTool(deps: EmailToolDeps): ToolDefinition {
  return defineTool({
    name: "email_save_attachment",
    description: "Save an attachment of a mail (its number from email_read) into the person's workspace at `path`. Text attachments are saved after the one-time-code filter.",
    parameters: z.object({ id: z.string().min(1).max(700), attachment: z.number().int().min(1).max(100), path: z.string().min(1).max(500) }),
    sideEffect: true,
    capability: "files.write",
    policy: { capability: "files.write", access: "write", method: { fixed: "WRITE" }, destinationArgs: [], fileArgs: ["path"], exfiltrationArgs: [] },
    offered: (pid: PersonId) => deps.connections.granted(pid, "email", "read"),
    async execute(args, ctx) {
      const target = await messageFor(deps, ctx.personId, "read", args.id);
      if (isResult(target)) return target;
      try {
        const client = deps.service.client(target.account);
        const [f] = await client.fetch([target.ref]);
        if (!f) return fail("not_found", "That message is no longer in the folder.");
        if (!f.parsed.ok) return fail("unreadable", f.parsed.reason);
        const a = f.parsed.message.attachments[args.attachment - 1];
        if (!a?.partId) return fail("not_found", `The mail has no attachment number ${args.attachment}.`);
        let bytes: Buffer = await client.attachment(target.ref, a.partId, MAX_SAVED_ATTACHMENT_BYTES);
        let note = "";
        if (textLike(a.contentType)) {
          const wrapped = Buffer.concat([Buffer.from(`Subject:\r\nContent-Type: ${a.contentType}; charset=utf-8\r\n\r\n`), bytes]);
          const filtered = await deps.service.deps.parser.parse(wrapped);
          if (!filtered.ok) return fail("unreadable", filtered.reason);
          bytes = Buffer.from(filtered.message.filtered.body, "utf8");
          if (filtered.message.filtered.removed.length) note = ` (${filtered.message.filtered.removed.length} code(s) or access link(s) removed)`;
        }
        const written = await deps.workspace.writeFile(ctx.personId, args.path, bytes);
        return ok(`Saved ${a.filename ?? "the attachment"} (${bytesInWords(written)}) to ${args.path}${note}.`);
      } catch (err) {
        if (err instanceof Error && !(err.name === "EmailError")) return fail("file_error", err.message.slice(0, 300));
        return mailFailure(err);
      }
    },
  });
}

/** The reading tools. */
export function readTools(deps: EmailToolDeps): ToolDefinition[] {
  return [searchTool(deps), readTool(deps), saveTool(deps)];
}
