/**
 * Mailbox errors in words a person can act on. Every IMAP and SMTP failure becomes an
 * {@link EmailError} with a stable code and a sentence naming the server and what to check; the
 * server's own reply is quoted only after the password is scrubbed from it, and never the password.
 */

/** Closed set of mailbox failure kinds. */
export type EmailErrorCode =
  | "auth_failed"
  | "connect_refused"
  | "host_not_found"
  | "timeout"
  | "tls_failed"
  | "tls_untrusted"
  | "starttls_unavailable"
  | "mailbox_missing"
  | "connection_lost"
  | "protocol"
  | "too_large"
  | "unreadable"
  | "not_found"
  | "send_rejected"
  | "refused";

/** Which side of the mailbox failed. */
export type EmailSide = "imap" | "smtp";

/** A mailbox failure; `message` is a sentence for the person, `code` is for decisions (retry or not). */
export class EmailError extends Error {
  override readonly name = "EmailError";
  constructor(
    readonly code: EmailErrorCode,
    message: string,
    /** Whether trying again later may help (network, timeouts, server busy). */
    readonly transient: boolean,
  ) {
    super(message);
  }
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  authenticationFailed?: unknown;
  tlsFailed?: unknown;
  mailboxMissing?: unknown;
  responseText?: unknown;
  response?: unknown;
  responseCode?: unknown;
  serverResponseCode?: unknown;
  reason?: unknown;
  _err?: unknown;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The server's words, password removed, one line, at most 200 characters; "" when there are none. */
function serverSaid(err: ErrorLike, secret: string | undefined): string {
  let text = str(err.responseText) || str(err.response) || str(err.reason);
  if (!text) return "";
  if (secret) text = text.split(secret).join("[password]");
  text = text.replace(/\s+/g, " ").trim().slice(0, 200);
  return text ? ` The server said: "${text}".` : "";
}

function nodeCode(err: ErrorLike): string {
  const inner = err._err as ErrorLike | undefined;
  return str(err.code) || str(inner?.code);
}

function tlsTrouble(err: ErrorLike): "untrusted" | "failed" | null {
  const code = nodeCode(err);
  const message = `${str(err.message)} ${str((err._err as ErrorLike | undefined)?.message)}`;
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|CERT_|ERR_TLS_CERT_ALTNAME|unable to get local issuer|certificate/i.test(code + " " + message)) return "untrusted";
  if (err.tlsFailed === true || /ERR_SSL|ETLS|EPROTO|wrong version number|handshake/i.test(code + " " + message)) return "failed";
  return null;
}

/**
 * Turns any IMAP or SMTP failure into an {@link EmailError}. `where` names the server for the
 * sentence (`imap.example.com:993`); `secret` is the password, scrubbed from any quoted reply.
 */
export function describeMailError(error: unknown, side: EmailSide, where: string, secret?: string): EmailError {
  if (error instanceof EmailError) return error;
  const err = (typeof error === "object" && error !== null ? error : { message: String(error) }) as ErrorLike;
  const code = nodeCode(err);
  const label = side === "imap" ? "The IMAP server" : "The SMTP server";
  const said = serverSaid(err, secret);
  if (err.authenticationFailed === true || code === "EAUTH" || str(err.serverResponseCode) === "AUTHENTICATIONFAILED")
    return new EmailError("auth_failed", `${label} at ${where} refused the user name or app password. Check both; most providers need an app password, not the account password.${said}`, false);
  if (code === "ECONNREFUSED") return new EmailError("connect_refused", `Nothing answered at ${where} (connection refused). Check the host and port.`, true);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EDNS") return new EmailError("host_not_found", `The host of ${where} could not be found. Check the spelling of the server name.`, code === "EAI_AGAIN");
  const tls = tlsTrouble(err);
  if (tls === "untrusted") return new EmailError("tls_untrusted", `${label} at ${where} showed a certificate that is not trusted. If it is your own server, paste its CA certificate in the settings.`, false);
  if (/STARTTLS/i.test(str(err.message)) && /not|support|unavailable|required/i.test(str(err.message)))
    return new EmailError("starttls_unavailable", `${label} at ${where} does not offer STARTTLS. Try encryption "implicit" (usually port ${side === "imap" ? 993 : 465}).`, false);
  if (tls === "failed") return new EmailError("tls_failed", `The encrypted connection to ${where} failed. Check the encryption setting: "implicit" for ports ${side === "imap" ? 993 : 465}, "starttls" for ${side === "imap" ? 143 : 587}.`, false);
  if (/TIMEOUT|ETIMEDOUT|ETIMEOUT/i.test(code)) return new EmailError("timeout", `${label} at ${where} did not answer in time.`, true);
  if (err.mailboxMissing === true || code === "NotFound") return new EmailError("mailbox_missing", `${label} at ${where} has no such folder.${said}`, false);
  if (code === "NoConnection" || code === "EConnectionClosed" || code === "ECONNRESET" || code === "EPIPE" || code === "ESOCKET" || code === "ECONNECTION")
    return new EmailError("connection_lost", `The connection to ${where} was lost.${said}`, true);
  if (side === "smtp" && (code === "EENVELOPE" || code === "EMESSAGE"))
    return new EmailError("send_rejected", `${label} at ${where} did not accept the message.${said}`, false);
  return new EmailError("protocol", `${label} at ${where} answered in a way Familiar did not expect.${said}`, true);
}
