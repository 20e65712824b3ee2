/**
 * Real mail servers for the email tests, on loopback: Dovecot (IMAP with STARTTLS on a self-signed
 * certificate made at test time, LMTP) and — when the tests run as root — Postfix (submission with
 * STARTTLS and AUTH, delivering by LMTP into Dovecot), with two test accounts. Mail for other domains
 * is relayed to a capture server (`outside`), so nothing a test sends leaves 127.0.0.1.
 *
 *     const servers = await startMailServers();
 *     try { … servers.deliver("ana@example.test", eml) … } finally { await servers.close(); }
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import { ImapFlow } from "imapflow";
import { freePort } from "../child.js";
import { emailSettingsSchema, type EmailSettings } from "../../../connectors/email/settings.js";
import { Dovecot, type TestAccount } from "./dovecot.js";
import { Postfix, postfixUnavailable } from "./postfix.js";
import { makeCertificate, type TestCertificate } from "./tls.js";

export type { TestAccount } from "./dovecot.js";
export { postfixUnavailable } from "./postfix.js";

/** The test domain: Dovecot holds its mailboxes and Postfix delivers it locally. */
export const TEST_DOMAIN = "example.test";

/** Where a client connects (the settings a person would type). */
export interface TestEndpoint {
  host: "127.0.0.1";
  port: number;
  tls: "starttls" | "implicit";
  /** The servers' self-signed certificate, as the CA to trust. */
  ca: string;
}

/** A mail that Postfix relayed towards another domain, as the capture server received it. */
export interface OutsideMail {
  from: string;
  to: string[];
  raw: string;
}

export interface MailServersOptions {
  /** Dovecot offers IDLE (default true); false for the polling tests. */
  idle?: boolean;
  /** Start Postfix too (default true; needs root — see `postfixUnavailable`). */
  smtp?: boolean;
}

export interface MailServers {
  dir: string;
  cert: TestCertificate;
  /** ana@example.test and ben@example.test. */
  accounts: readonly [TestAccount, TestAccount];
  imap: TestEndpoint;
  /** IMAP with implicit TLS (like port 993). */
  imaps: TestEndpoint;
  /** Postfix's submission endpoint (STARTTLS); null when started with `smtp: false`. */
  smtp: TestEndpoint | null;
  /** Postfix's submission with implicit TLS (like port 465); null without Postfix. */
  smtps: TestEndpoint | null;
  dovecot: Dovecot;
  postfix: Postfix | null;
  /** Mail Postfix relayed to other domains (in arrival order). */
  outside: OutsideMail[];
  /** Delivers a whole RFC 822 message into `to`'s INBOX by LMTP, as the receiving server would. */
  deliver(to: string, raw: string | Buffer, from?: string): Promise<void>;
  /** Opens an IMAP session for `account` (verified TLS); the caller logs out. */
  imapClient(account: TestAccount): Promise<ImapFlow>;
  /** Subjects of the messages in `account`'s `mailbox`, oldest first. */
  subjects(account: TestAccount, mailbox?: string): Promise<string[]>;
  /** Stops every server and removes the temp dir. */
  close(): Promise<void>;
}

/**
 * The settings a person would enter for `account` on these servers (STARTTLS, or `implicit` TLS; the
 * test CA); `imapPort` overrides the IMAP port (to go through a proxy).
 */
export function settingsFor(servers: MailServers, account: TestAccount, overrides: { imapPort?: number; implicit?: boolean } = {}): EmailSettings {
  const imap = overrides.implicit ? servers.imaps : servers.imap;
  const smtp = overrides.implicit ? servers.smtps : servers.smtp;
  return emailSettingsSchema.parse({
    address: account.address,
    imap: { host: "127.0.0.1", port: overrides.imapPort ?? imap.port, tls: imap.tls, user: account.address, ca: servers.cert.certPem },
    smtp: { host: "127.0.0.1", port: smtp?.port ?? 1, tls: smtp?.tls ?? "starttls", user: account.address, ca: servers.cert.certPem },
  });
}

/** A plain test message; `extra` adds header lines. */
export function testMail(subject: string, options: { from?: string; to?: string; id?: string; body?: string; extra?: string } = {}): string {
  const id = options.id ?? `<${Math.random().toString(36).slice(2)}@outside.test>`;
  return [
    `From: ${options.from ?? "Carla <carla@outside.test>"}`,
    `To: ${options.to ?? "ana@example.test"}`,
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${id}`,
    ...(options.extra ? [options.extra] : []),
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    options.body ?? `Body of ${subject}`,
    "",
  ].join("\r\n");
}

/** Starts the servers. @throws with the servers' logs when one does not start */
export async function startMailServers(options: MailServersOptions = {}): Promise<MailServers> {
  const dir = await mkdtemp(join(tmpdir(), "familiar-mail-"));
  await chmod(dir, 0o755);
  const accounts = [
    { address: `ana@${TEST_DOMAIN}`, password: "ana-app-password-1" },
    { address: `ben@${TEST_DOMAIN}`, password: "ben-app-password-2" },
  ] as const;
  const outside: OutsideMail[] = [];
  let capture: SMTPServer | null = null;
  let dovecot: Dovecot | null = null;
  let postfix: Postfix | null = null;
  const close = async () => {
    await postfix?.stop();
    await dovecot?.stop();
    await new Promise<void>((resolve) => (capture ? capture.close(() => resolve()) : resolve()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const cert = await makeCertificate(dir);
    const [imapPort, imapsPort, lmtpPort] = [await freePort(), await freePort(), await freePort()];
    dovecot = new Dovecot({ dir: join(dir, "dovecot"), imapPort, imapsPort, lmtpPort, accounts, cert, idle: options.idle ?? true });
    await dovecot.start();
    let smtp: TestEndpoint | null = null;
    let smtps: TestEndpoint | null = null;
    if (options.smtp ?? true) {
      const why = postfixUnavailable();
      if (why) throw new Error(`cannot start Postfix: ${why}`);
      capture = await startCapture(outside);
      const relayPort = (capture.server.address() as { port: number }).port;
      const [submissionPort, smtpsPort] = [await freePort(), await freePort()];
      postfix = new Postfix({ dir: join(dir, "postfix"), submissionPort, smtpsPort, lmtpPort, authSocket: dovecot.authSocket, relayPort, domain: TEST_DOMAIN, cert });
      await postfix.start();
      smtp = { host: "127.0.0.1", port: submissionPort, tls: "starttls", ca: cert.certPem };
      smtps = { host: "127.0.0.1", port: smtpsPort, tls: "implicit", ca: cert.certPem };
    }
    const imap: TestEndpoint = { host: "127.0.0.1", port: imapPort, tls: "starttls", ca: cert.certPem };
    const imaps: TestEndpoint = { host: "127.0.0.1", port: imapsPort, tls: "implicit", ca: cert.certPem };
    const lmtp = nodemailer.createTransport({ host: "127.0.0.1", port: lmtpPort, lmtp: true, ignoreTLS: true, logger: false });
    const imapClient = async (account: TestAccount) => {
      const client = new ImapFlow({ host: "127.0.0.1", port: imapPort, secure: false, doSTARTTLS: true, tls: { ca: cert.certPem, servername: "localhost" }, auth: { user: account.address, pass: account.password }, logger: false });
      client.on("error", () => undefined);
      await client.connect();
      return client;
    };
    return {
      dir, cert, accounts, imap, imaps, smtp, smtps, dovecot, postfix, outside, imapClient,
      async deliver(to, raw, from = `sender@outside.test`) {
        await lmtp.sendMail({ envelope: { from, to: [to] }, raw: typeof raw === "string" ? raw : raw.toString("binary") });
      },
      async subjects(account, mailbox = "INBOX") {
        const client = await imapClient(account);
        try {
          const lock = await client.getMailboxLock(mailbox);
          try {
            const out: string[] = [];
            if (client.mailbox && client.mailbox.exists > 0) for await (const m of client.fetch("1:*", { envelope: true })) out.push(m.envelope?.subject ?? "");
            return out;
          } finally {
            lock.release();
          }
        } finally {
          await client.logout().catch(() => undefined);
        }
      },
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}

async function startCapture(outside: OutsideMail[]): Promise<SMTPServer> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        outside.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString("utf8") });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return server;
}
