/**
 * A private Postfix for one test file: submission with STARTTLS and SMTP AUTH through Dovecot's SASL
 * socket on a free 127.0.0.1 port; mail for the test domain goes by LMTP into that Dovecot, mail for
 * any other domain to `relayPort` (the tests' capture server stands in for the rest of the world).
 *
 * Postfix needs root: its master process must start as root (it refuses otherwise) and drops to the
 * `postfix` user for every service. The tests that need SMTP therefore run as root — here and in CI
 * (`.ci/run` runs as root) — and skip visibly as any other user (see `postfixAvailable`).
 */
import { chmod, chown, mkdir, writeFile, readFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { startProcess, stopDaemon, trackDaemon, type ServerProcess } from "./processes.js";
import { waitForPort } from "./dovecot.js";
import type { TestCertificate } from "./tls.js";

export interface PostfixOptions {
  dir: string;
  submissionPort: number;
  /** Submission with TLS from the first byte (implicit, like port 465). */
  smtpsPort: number;
  /** Dovecot's LMTP port on 127.0.0.1. */
  lmtpPort: number;
  /** Dovecot's auth socket for SMTP AUTH. */
  authSocket: string;
  /** Where mail for other domains is relayed (plain SMTP on 127.0.0.1). */
  relayPort: number;
  /** The test domain delivered into Dovecot. */
  domain: string;
  cert: TestCertificate;
}

/** Why Postfix cannot run here, or null when it can (root, and the postfix user and binaries exist). */
export function postfixUnavailable(): string | null {
  if ((process.getuid?.() ?? -1) !== 0) return "Postfix's master must start as root; these tests run as root (as in CI)";
  try {
    execFileSync("postconf", ["-h", "mail_version"], { stdio: "ignore" });
    execFileSync("id", ["postfix"], { stdio: "ignore" });
  } catch {
    return "Postfix is not installed (Debian package postfix)";
  }
  return null;
}

function mainCf(o: PostfixOptions): string {
  return `compatibility_level = 3.6
queue_directory = ${o.dir}/queue
data_directory = ${o.dir}/data
mail_owner = postfix
setgid_group = postdrop
meta_directory = /etc/postfix
myhostname = mx.${o.domain}
mydomain = ${o.domain}
myorigin = ${o.domain}
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
virtual_mailbox_domains = ${o.domain}
virtual_transport = lmtp:inet:127.0.0.1:${o.lmtpPort}
relayhost = [127.0.0.1]:${o.relayPort}
smtp_tls_security_level = none
smtp_dns_support_level = disabled
smtp_host_lookup = native
lmtp_host_lookup = native
alias_maps =
alias_database =
local_recipient_maps =
smtpd_sasl_type = dovecot
smtpd_sasl_path = ${o.authSocket}
smtpd_tls_cert_file = ${o.cert.certFile}
smtpd_tls_key_file = ${o.cert.keyFile}
smtpd_relay_restrictions = permit_sasl_authenticated reject_unauth_destination
maillog_file = ${o.dir}/maillog
maillog_file_prefixes = ${o.dir}

`;
}

function masterCf(o: PostfixOptions): string {
  const services = [
    `127.0.0.1:${o.submissionPort} inet n - n - - smtpd -o smtpd_tls_security_level=encrypt -o smtpd_sasl_auth_enable=yes -o smtpd_tls_auth_only=yes`,
    `127.0.0.1:${o.smtpsPort} inet n - n - - smtpd -o smtpd_tls_wrappermode=yes -o smtpd_sasl_auth_enable=yes`,
    "pickup unix n - n 60 1 pickup",
    "cleanup unix n - n - 0 cleanup",
    "qmgr unix n - n 300 1 qmgr",
    "tlsmgr unix - - n 1000? 1 tlsmgr",
    "rewrite unix - - n - - trivial-rewrite",
    "bounce unix - - n - 0 bounce",
    "defer unix - - n - 0 bounce",
    "trace unix - - n - 0 bounce",
    "verify unix - - n - 1 verify",
    "flush unix n - n 1000? 0 flush",
    "proxymap unix - - n - - proxymap",
    "smtp unix - - n - - smtp",
    "relay unix - - n - - smtp",
    "showq unix n - n - - showq",
    "error unix - - n - - error",
    "retry unix - - n - - error",
    "discard unix - - n - - discard",
    "lmtp unix - - n - - lmtp",
    "anvil unix - - n - 1 anvil",
    "scache unix - - n - 1 scache",
    "postlog unix-dgram n - n - 1 postlogd",
  ];
  return services.join("\n") + "\n";
}

/** A running Postfix instance. */
export class Postfix {
  private process: ServerProcess | null = null;
  private masterPid: number | null = null;
  constructor(readonly options: PostfixOptions) {}

  /** Writes the configuration and starts Postfix in the foreground; resolves once submission accepts connections. */
  async start(): Promise<void> {
    const d = this.options.dir;
    const conf = join(d, "conf");
    await mkdir(conf, { recursive: true });
    await mkdir(join(d, "data"), { recursive: true });
    await mkdir(join(d, "queue"), { recursive: true });
    await chmod(d, 0o755);
    await chown(join(d, "data"), uidOf("postfix"), 0);
    await writeFile(join(conf, "main.cf"), mainCf(this.options));
    await writeFile(join(conf, "master.cf"), masterCf(this.options));
    const started = startProcess("postfix", ["-c", conf, "start-fg"]);
    this.process = started;
    try {
      await waitForPort(this.options.submissionPort, started, 20_000);
      // The master makes a session of its own (it leaves our process group): stop it by its pid file.
      this.masterPid = Number((await readFile(join(d, "queue", "pid", "master.pid"), "utf8")).trim());
      trackDaemon(this.masterPid);
    } catch (err) {
      const log = await this.log();
      await this.stop();
      throw new Error(`Postfix did not start: ${(err as Error).message}\n${started.output()}\n${log.slice(-3000)}`);
    }
  }

  async stop(): Promise<void> {
    const p = this.process;
    const pid = this.masterPid;
    this.process = null;
    this.masterPid = null;
    if (pid !== null) await stopDaemon(pid);
    await p?.stop();
  }

  /** Postfix's log (deliveries, rejections). */
  async log(): Promise<string> {
    return readFile(join(this.options.dir, "maillog"), "utf8").catch(() => "");
  }
}

function uidOf(user: string): number {
  return Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
}
