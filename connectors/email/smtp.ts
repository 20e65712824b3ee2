/**
 * Sending over SMTP with nodemailer: the composed message goes out as it is (`raw`), with the
 * envelope built from its To, Cc and Bcc. Encryption follows the settings exactly: `implicit` is TLS
 * from the first byte, `starttls` requires the upgrade before AUTH (nodemailer `requireTLS`), `none`
 * (loopback only, see settings.ts) never upgrades.
 */
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import type { ComposedMail } from "./compose.js";
import { describeMailError } from "./errors.js";
import { where } from "./imap-connect.js";
import { loginUser, type EmailCredentials, type EmailSettings } from "./settings.js";

/** nodemailer options for the settings (exported for tests of the TLS mapping). */
export function smtpOptions(settings: EmailSettings, credentials: EmailCredentials): SMTPTransport.Options {
  const e = settings.smtp;
  return {
    host: e.host,
    port: e.port,
    secure: e.tls === "implicit",
    requireTLS: e.tls === "starttls",
    ignoreTLS: e.tls === "none",
    tls: { minVersion: "TLSv1.2", ...(e.ca ? { ca: e.ca } : {}) },
    auth: { user: loginUser(settings, "smtp"), pass: credentials.password },
    connectionTimeout: 30_000,
    greetingTimeout: 16_000,
    socketTimeout: 60_000,
    logger: false,
    debug: false,
  };
}

/** What the server answered to a send. */
export interface SendReceipt {
  accepted: string[];
  rejected: string[];
  /** The server's final reply line ("250 2.0.0 Ok: queued as …"). */
  response: string;
}

/** Sends a composed message. @throws EmailError (auth_failed, send_rejected, connect_refused, …) */
export async function sendComposed(settings: EmailSettings, credentials: EmailCredentials, mail: ComposedMail): Promise<SendReceipt> {
  const transport = nodemailer.createTransport(smtpOptions(settings, credentials));
  try {
    const info = await transport.sendMail({ envelope: mail.envelope, raw: mail.raw });
    const list = (v: unknown): string[] => (Array.isArray(v) ? v.map((a) => (typeof a === "string" ? a : String((a as { address?: string }).address ?? a))) : []);
    return { accepted: list(info.accepted), rejected: list(info.rejected), response: String(info.response ?? "") };
  } catch (err) {
    throw describeMailError(err, "smtp", where(settings, "smtp"), credentials.password);
  } finally {
    transport.close();
  }
}

/** Connects and authenticates without sending anything. @throws EmailError */
export async function testSmtp(settings: EmailSettings, credentials: EmailCredentials): Promise<void> {
  const transport = nodemailer.createTransport(smtpOptions(settings, credentials));
  try {
    await transport.verify();
  } catch (err) {
    throw describeMailError(err, "smtp", where(settings, "smtp"), credentials.password);
  } finally {
    transport.close();
  }
}
