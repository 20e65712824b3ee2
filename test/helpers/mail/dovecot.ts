/**
 * A private Dovecot (IMAP with STARTTLS, LMTP) for one test file: its own config, base and mail
 * directories under a temp dir, listeners on free 127.0.0.1 ports, accounts in a passwd-file.
 *
 * Dovecot runs unprivileged: as the current user, or — when the tests run as root (CI, this machine)
 * — dropped to `nobody` with `setpriv`, so both cases use the same configuration. Chroots are off
 * and every internal user is the running user (Dovecot allows this for a single-uid install).
 */
import { chown, mkdir, writeFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "node:net";
import { execFileSync } from "node:child_process";
import { startProcess, type ServerProcess } from "./processes.js";
import type { TestCertificate } from "./tls.js";

/** One test account: the address is also the IMAP/SMTP user name. */
export interface TestAccount {
  address: string;
  password: string;
}

/** Dovecot 2.3's post-login capabilities without IDLE (for the polling tests). */
const CAPABILITIES_WITHOUT_IDLE =
  "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE SORT SORT=DISPLAY THREAD=REFERENCES THREAD=REFS " +
  "THREAD=ORDEREDSUBJECT MULTIAPPEND URL-PARTIAL CATENATE UNSELECT CHILDREN NAMESPACE UIDPLUS LIST-EXTENDED " +
  "I18NLEVEL=1 CONDSTORE QRESYNC ESEARCH ESORT SEARCHRES WITHIN CONTEXT=SEARCH LIST-STATUS BINARY MOVE " +
  "SNIPPET=FUZZY PREVIEW=FUZZY PREVIEW STATUS=SIZE SAVEDATE LITERAL+ NOTIFY";

export interface DovecotOptions {
  dir: string;
  imapPort: number;
  /** IMAP with TLS from the first byte (implicit, like port 993). */
  imapsPort: number;
  lmtpPort: number;
  accounts: readonly TestAccount[];
  cert: TestCertificate;
  /** Offer IDLE (default true). */
  idle?: boolean;
}

/** The uid/gid Dovecot runs as: the current user, or nobody/nogroup under root. */
export function dovecotIdentity(): { user: string; group: string; uid: number; gid: number; drop: boolean } {
  const uid = process.getuid?.() ?? 0;
  if (uid === 0) return { user: "nobody", group: "nogroup", uid: 65534, gid: 65534, drop: true };
  const gid = process.getgid?.() ?? uid;
  const name = (flag: string) => execFileSync("id", [flag], { encoding: "utf8" }).trim();
  return { user: name("-un"), group: name("-gn"), uid, gid, drop: false };
}

function config(o: DovecotOptions, who: ReturnType<typeof dovecotIdentity>): string {
  const d = o.dir;
  return `
base_dir = ${d}/run
state_dir = ${d}/state
instance_name = familiar-test-${o.imapPort}
protocols = imap lmtp
listen = 127.0.0.1
log_path = ${d}/dovecot.log
ssl = yes
ssl_cert = <${o.cert.certFile}
ssl_key = <${o.cert.keyFile}
disable_plaintext_auth = yes
auth_mechanisms = plain login
# Tests of wrong passwords need no 2-second penalty.
auth_failure_delay = 0
default_internal_user = ${who.user}
default_internal_group = ${who.group}
default_login_user = ${who.user}
first_valid_uid = 1
first_valid_gid = 1
mail_location = maildir:${d}/mail/%u
${o.idle === false ? `imap_capability = ${CAPABILITIES_WITHOUT_IDLE}` : ""}
namespace inbox {
  inbox = yes
  mailbox Drafts {
    special_use = \\Drafts
    auto = subscribe
  }
  mailbox Sent {
    special_use = \\Sent
    auto = subscribe
  }
  mailbox Archive {
    special_use = \\Archive
    auto = subscribe
  }
  mailbox Trash {
    special_use = \\Trash
    auto = subscribe
  }
  mailbox Junk {
    special_use = \\Junk
    auto = subscribe
  }
}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${d}/users
}
userdb {
  driver = static
  args = uid=${who.uid} gid=${who.gid} home=${d}/mail/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${o.imapPort}
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = ${o.imapsPort}
    ssl = yes
  }
}
service anvil {
  chroot =
  # No growing delay after failed logins: the tests try wrong passwords on purpose.
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service pop3-login {
  chroot =
}
service submission-login {
  chroot =
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = ${o.lmtpPort}
  }
}
service auth {
  unix_listener auth-client {
    mode = 0666
  }
}
protocol lmtp {
  postmaster_address = postmaster@example.test
}
`;
}

/** A running Dovecot; `start()` again after `stop()` brings it back on the same ports and mail. */
export class Dovecot {
  private process: ServerProcess | null = null;
  constructor(readonly options: DovecotOptions) {}

  /** Path of the auth socket Postfix uses for SMTP AUTH (Dovecot SASL). */
  get authSocket(): string {
    return join(this.options.dir, "run", "auth-client");
  }

  /** Writes the configuration (first time) and starts Dovecot; resolves once IMAP and LMTP accept connections. */
  async start(): Promise<void> {
    const who = dovecotIdentity();
    const d = this.options.dir;
    for (const sub of ["run", "state", "mail"]) await mkdir(join(d, sub), { recursive: true });
    await writeFile(join(d, "dovecot.conf"), config(this.options, who));
    await writeFile(join(d, "users"), this.options.accounts.map((a) => `${a.address}:{PLAIN}${a.password}::::::`).join("\n") + "\n");
    if (who.drop) await chownTree(d, who.uid, who.gid);
    const args = ["-c", join(d, "dovecot.conf"), "-F"];
    const started = who.drop
      ? startProcess("setpriv", ["--reuid", String(who.uid), "--regid", String(who.gid), "--clear-groups", "dovecot", ...args])
      : startProcess("dovecot", args);
    this.process = started;
    try {
      await Promise.all([waitForPort(this.options.imapPort, started), waitForPort(this.options.lmtpPort, started)]);
    } catch (err) {
      const log = await readFile(join(d, "dovecot.log"), "utf8").catch(() => "");
      await this.stop();
      throw new Error(`Dovecot did not start: ${(err as Error).message}\n${started.output()}\n${log.slice(-3000)}`);
    }
  }

  /** Stops Dovecot gracefully (every IMAP session is closed). */
  async stop(): Promise<void> {
    const p = this.process;
    this.process = null;
    await p?.stop();
  }

  /** Kills Dovecot at once (no BYE to clients): a crashed or unplugged server. */
  async kill(): Promise<void> {
    const p = this.process;
    this.process = null;
    await p?.kill();
  }

  /** The last lines of Dovecot's log. */
  async log(): Promise<string> {
    return readFile(join(this.options.dir, "dovecot.log"), "utf8").catch(() => "");
  }
}

async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  const { readdir, stat } = await import("node:fs/promises");
  await chown(path, uid, gid);
  if ((await stat(path)).isDirectory()) for (const entry of await readdir(path)) await chownTree(join(path, entry), uid, gid);
}

/** Resolves once 127.0.0.1:`port` accepts a TCP connection. @throws after 10 s or when the process exits */
export async function waitForPort(port: number, process: ServerProcess, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (process.exited()) throw new Error("the process exited");
    const open = await new Promise<boolean>((resolve) => {
      const s = connect({ host: "127.0.0.1", port });
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > end) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
