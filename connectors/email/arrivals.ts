/**
 * What the store keeps of a new mail (a connection change of kind `email.arrived`): addresses, the
 * subject **after** the one-time-code filter, whether the sender is verified and whether the mail is
 * automatic (never to be answered) — never the body, never a code. Built from the header section
 * the sync fetched; matched by watches' filters and told to the activation a match wakes.
 */
import { z } from "zod";
import type { ConnectionChange, NewConnectionChange } from "../../core/connections/index.js";
import type { Json } from "../../core/json.js";
import type { ParsedMessage } from "./message.js";
import { neverAnswerReason, verifySender } from "./safety.js";
import { arrivalKey, type ServerFacts } from "./sync.js";
import { formatRef } from "./refs.js";
import { matchesMail, mailFilterSchema } from "./watch-filter.js";

export const ARRIVED = "email.arrived";
export const SENT = "email.sent";
export const SENT_AUTOMATIC = "email.sent.automatic";

const addressSchema = z.object({ name: z.string(), address: z.string() });

/** The stored data of an arrival (validated when read back). */
export const arrivalDataSchema = z.object({
  ref: z.string(),
  messageId: z.string().nullable(),
  from: addressSchema.nullable(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  /** After the one-time-code filter. */
  subject: z.string(),
  removed: z.array(z.object({ kind: z.string(), marker: z.string() })),
  date: z.string().nullable(),
  receivedAt: z.string(),
  listId: z.string().nullable(),
  hasAttachments: z.boolean(),
  size: z.number(),
  sender: z.object({ verified: z.boolean(), detail: z.string() }),
  automatic: z.object({ reason: z.string(), detail: z.string() }).nullable(),
  unreadable: z.string().nullable(),
});
export type ArrivalData = z.infer<typeof arrivalDataSchema>;

/** What the arrival rules need about the mailbox. */
export interface ArrivalContext {
  connectionId: string;
  path: string;
  authservIds: readonly string[];
  /** Every address of the person's mailboxes (mail from them is never answered). */
  ownAddresses: readonly string[];
}

/** The change to record for a new mail (its key: the Message-ID, else UIDVALIDITY/UID). */
export function arrivalChange(parsed: ParsedMessage | { unreadable: string }, facts: ServerFacts, ctx: ArrivalContext): NewConnectionChange {
  const ref = formatRef({ connectionId: ctx.connectionId, path: ctx.path, uidValidity: facts.uidValidity, uid: facts.uid });
  const base = { ref, receivedAt: facts.receivedAt, hasAttachments: facts.hasAttachments, size: facts.size };
  let data: ArrivalData;
  if ("unreadable" in parsed) {
    data = { ...base, messageId: null, from: null, to: [], cc: [], subject: "", removed: [], date: null, listId: null, sender: { verified: false, detail: "the message could not be read" }, automatic: null, unreadable: parsed.unreadable };
  } else {
    const verdict = verifySender(parsed.headerLines, { authservIds: ctx.authservIds });
    const never = neverAnswerReason({ headers: parsed.headerLines, subject: parsed.subject }, { ownAddresses: ctx.ownAddresses });
    data = {
      ...base,
      messageId: parsed.messageId,
      from: parsed.from[0] ?? null,
      to: parsed.to.map((a) => a.address),
      cc: parsed.cc.map((a) => a.address),
      subject: parsed.filtered.subject,
      removed: parsed.filtered.removed,
      date: parsed.date,
      listId: parsed.listId,
      sender: { verified: verdict.verified, detail: verdict.detail },
      automatic: never ? { reason: never.reason, detail: never.detail } : null,
      unreadable: null,
    };
  }
  return { key: arrivalKey("unreadable" in parsed ? null : parsed.messageId, facts), kind: ARRIVED, topic: null, occurredAt: new Date(facts.receivedAt), data };
}

/** The arrival data of a change, or null when it is not (a valid) one. */
export function arrivalOf(change: Pick<ConnectionChange, "kind" | "data">): ArrivalData | null {
  if (change.kind !== ARRIVED) return null;
  const parsed = arrivalDataSchema.safeParse(change.data);
  return parsed.success ? parsed.data : null;
}

/** Whether a change matches a watch's filter (invalid filters and data match nothing). */
export function arrivalMatches(filter: Json, change: ConnectionChange): boolean {
  const f = mailFilterSchema.safeParse(filter);
  const a = arrivalOf(change);
  if (!f.success || !a || a.unreadable) return false;
  return matchesMail(f.data, { from: a.from?.address ?? null, to: a.to, cc: a.cc, subject: a.subject, listId: a.listId, hasAttachments: a.hasAttachments, verified: a.sender.verified });
}

/** One mail's header lines as the model reads them (from, verdict, subject, received, id). */
export function describeArrival(a: ArrivalData): string {
  const from = a.from ? (a.from.name ? `${a.from.name} <${a.from.address}>` : a.from.address) : "(no sender)";
  const lines = [
    `From: ${from} — sender ${a.sender.verified ? "verified" : `NOT verified (${a.sender.detail})`}`,
    `To: ${[...a.to, ...a.cc].join(", ") || "(none)"}`,
    `Subject: ${a.subject || "(no subject)"}`,
    `Received: ${a.receivedAt}${a.hasAttachments ? " · has attachments" : ""}`,
    `Id: ${a.ref}`,
  ];
  if (a.automatic) lines.push(`Automatic mail (${a.automatic.detail}): Familiar never answers it.`);
  if (a.unreadable) lines.push(a.unreadable);
  return lines.join("\n");
}

/** What a watch's activation is told about the mail that woke it (an untrusted observation). */
export function observeArrival(change: ConnectionChange): { source: string; text: string } {
  const a = arrivalOf(change);
  if (!a) return { source: "email", text: "A new mail arrived (its details could not be read)." };
  return { source: `email from ${a.from?.address ?? "an unknown sender"}`, text: `A new mail matched:\n${describeArrival(a)}\nRead it with email_read {"id": "${a.ref}"}.` };
}
