/**
 * Building outgoing mail with nodemailer's MailComposer: one RFC 822 message serves the SMTP send,
 * the copy in Sent and a draft, so what was approved is byte for byte what goes out. Replies get
 * RFC 5322 threading (In-Reply-To, References, "Re:"); automatic sends carry
 * `Auto-Submitted: auto-replied` (RFC 3834) and `X-Auto-Response-Suppress: All` (Exchange) so
 * well-behaved responders do not answer them.
 */
import MailComposer from "nodemailer/lib/mail-composer";
import { AUTOMATIC_SEND_HEADERS } from "./automatic.js";
import type { MailAddress } from "./message.js";

/** An attachment to send: bytes and a name (from the person's workspace). */
export interface OutgoingAttachment {
  filename: string;
  content: Buffer;
  contentType?: string;
}

/** A message to send or keep as a draft. Addresses are plain `name <addr>` or `addr` strings. */
export interface OutgoingMail {
  from: MailAddress;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  text: string;
  attachments: OutgoingAttachment[];
  /** The Message-ID answered, angle brackets included. */
  inReplyTo?: string | null;
  references?: string[];
  /** Sent by Familiar on its own (not at the person's word in this turn): `AUTOMATIC_SEND_HEADERS`. */
  automatic?: boolean;
}

/** A composed message: its Message-ID, envelope and bytes. */
export interface ComposedMail {
  messageId: string;
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

/** "Re: " once, in front of a subject that does not have it (any case, also "RE:" or "Re[2]:"). */
export function replySubject(subject: string): string {
  const s = subject.trim();
  return /^re(\[\d+\])?\s*:/i.test(s) ? s : `Re: ${s}`;
}

/** The References of a reply: the original's References plus its Message-ID, at most 20 (RFC 5322 §3.6.4). */
export function replyReferences(original: { messageId: string | null; references: string[] }): string[] {
  const refs = [...original.references, ...(original.messageId ? [original.messageId] : [])];
  return [...new Set(refs)].slice(-20);
}

/**
 * Composes `mail` under `messageId` (one of Familiar's, minted by the mail-safety rules'
 * `mintMessageId`, so answers to it are recognised). `keepBcc` keeps the Bcc header (drafts show it;
 * sent mail must not). @throws when nodemailer cannot build it (an address it cannot parse)
 */
export async function composeMail(mail: OutgoingMail, options: { now: Date; messageId: string; keepBcc?: boolean }): Promise<ComposedMail> {
  const messageId = options.messageId;
  const composer = new MailComposer({
    from: mail.from.name ? { name: mail.from.name, address: mail.from.address } : mail.from.address,
    to: mail.to,
    cc: mail.cc,
    bcc: mail.bcc,
    subject: mail.subject,
    text: mail.text,
    messageId,
    date: options.now,
    inReplyTo: mail.inReplyTo ?? undefined,
    references: mail.references?.length ? mail.references : undefined,
    attachments: mail.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
    headers: mail.automatic ? { ...AUTOMATIC_SEND_HEADERS } : {},
    disableFileAccess: true,
    disableUrlAccess: true,
    xMailer: false,
  });
  const node = composer.compile();
  if (options.keepBcc) node.keepBcc = true;
  const envelope = node.getEnvelope();
  const raw = await node.build();
  return { messageId, envelope: { from: envelope.from || mail.from.address, to: envelope.to }, raw };
}
