/**
 * Opening an IMAP session with imapflow, safely: an `error` listener is attached before
 * `connect()` (imapflow emits socket timeouts as `error` events; with no listener Node ends the
 * process — field case E3), encryption follows the settings exactly (STARTTLS is required, never
 * optional, when asked for), and literals are capped so a hostile server cannot exhaust memory.
 */
import { ImapFlow } from "imapflow";
import { describeMailError, type EmailError } from "./errors.js";
import { loginUser, type EmailCredentials, type EmailSettings } from "./settings.js";

/** Largest single IMAP literal accepted, bytes (a whole message we read is capped lower, see parse caps). */
export const MAX_LITERAL_BYTES = 40 * 1024 * 1024;

export interface ImapOpenOptions {
  /** Called for an error the session reports after it connected (the session then closes). */
  onError?: (error: EmailError) => void;
  /** Socket inactivity before the session is considered dead, ms (default 5 min; IDLE keeps it busy). */
  socketTimeoutMs?: number;
  /** Budget for DNS, TCP and TLS together, ms (default 30 s). */
  connectionTimeoutMs?: number;
}

/** `host:port` of an endpoint, for messages. */
export function where(settings: EmailSettings, side: "imap" | "smtp"): string {
  return `${settings[side].host}:${settings[side].port}`;
}

/** imapflow options for the settings (exported for tests of the TLS mapping). */
export function imapOptions(settings: EmailSettings, credentials: EmailCredentials, options: ImapOpenOptions = {}): ConstructorParameters<typeof ImapFlow>[0] {
  const e = settings.imap;
  return {
    host: e.host,
    port: e.port,
    secure: e.tls === "implicit",
    doSTARTTLS: e.tls === "starttls" ? true : e.tls === "none" ? false : undefined,
    tls: { minVersion: "TLSv1.2", ...(e.ca ? { ca: e.ca } : {}) },
    auth: { user: loginUser(settings, "imap"), pass: credentials.password },
    logger: false,
    disableAutoIdle: true,
    clientInfo: { name: "Familiar" },
    connectionTimeout: options.connectionTimeoutMs ?? 30_000,
    greetingTimeout: 16_000,
    socketTimeout: options.socketTimeoutMs ?? 5 * 60_000,
    maxLiteralSize: MAX_LITERAL_BYTES,
    maxResponseSize: MAX_LITERAL_BYTES + 1024 * 1024,
  };
}

/**
 * Connects and logs in. @throws EmailError (auth_failed, connect_refused, tls_untrusted, timeout, …)
 */
export async function openImap(settings: EmailSettings, credentials: EmailCredentials, options: ImapOpenOptions = {}): Promise<ImapFlow> {
  const client = new ImapFlow(imapOptions(settings, credentials, options));
  let connected = false;
  // Attached before connect(): an unhandled 'error' event would end the process.
  client.on("error", (err: unknown) => {
    if (connected) options.onError?.(describeMailError(err, "imap", where(settings, "imap"), credentials.password));
  });
  try {
    await client.connect();
  } catch (err) {
    client.close();
    throw describeMailError(err, "imap", where(settings, "imap"), credentials.password);
  }
  connected = true;
  return client;
}

/** Logs out, or closes the socket when LOGOUT does not finish within `ms`; never throws. */
export async function closeImap(client: ImapFlow, ms = 5_000): Promise<void> {
  if (client.isClosed) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([client.logout().catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
  if (!client.isClosed) client.close();
}
