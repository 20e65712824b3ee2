/**
 * What the host offers the sandbox: the tools it runs (bubblewrap, util-linux's `setpriv` and
 * `prlimit`), the read-only system the interpreters need, the interpreters themselves, and the
 * identity sandboxes run as.
 *
 * Identity: when Familiar runs as root, sandboxes run as an unprivileged user (uid/gid 61000 by
 * default) through `setpriv`, because the kernel ignores RLIMIT_NPROC for root — a fork bomb from
 * a sandbox started by root would not be stopped. That user must be able to pass through the
 * folders down to the workspace (bubblewrap resolves the workspace's path as that user before it
 * mounts it): Familiar's own folders (DATA_DIR, `persons`, the person's folder) get that group
 * with search-only permission (`g+x`, mode 0710 — the user can pass through but list or read
 * nothing), and the person's workspace is handed to that user before each run. Folders above
 * DATA_DIR are not changed: when one of them is closed to the user the sandbox is unavailable,
 * and the reason names the folder. As any other user, sandboxes run as Familiar's own user.
 */
import { accessSync, constants, existsSync, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { chmod, chown, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";

/** Default uid and gid of sandboxes when Familiar runs as root. */
export const DEFAULT_SANDBOX_ID = 61000;

/** A language `run_code` accepts. */
export type Language = "python" | "javascript" | "shell";

/** Who the sandbox runs as. */
export type SandboxIdentity = { kind: "own" } | { kind: "switch"; uid: number; gid: number };

/** One piece of the read-only system, as bubblewrap arguments. */
export type SystemMount = { kind: "bind"; path: string } | { kind: "symlink"; path: string; target: string };

/** The host side of the sandbox, found once at start. */
export interface HostLayout {
  bwrap: string;
  setpriv: string | null;
  prlimit: string;
  mounts: SystemMount[];
  /** Interpreter paths inside the sandbox (the same as on the host), by language; absent when missing. */
  interpreters: Partial<Record<Language, string>>;
  /** PATH inside the sandbox. */
  path: string;
  identity: SandboxIdentity;
}

/** Why the host cannot run sandboxes, in words a person can act on. */
export class HostUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostUnavailable";
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function firstExecutable(paths: readonly string[]): string | null {
  return paths.find(executable) ?? null;
}

/** The folders and links of a Debian system (merged /usr or not) the interpreters need, read-only. */
function systemMounts(extraFiles: readonly string[]): SystemMount[] {
  const mounts: SystemMount[] = [];
  for (const dir of ["/usr/bin", "/usr/lib", "/usr/lib64", "/usr/share/zoneinfo"]) if (existsSync(dir)) mounts.push({ kind: "bind", path: dir });
  for (const top of ["/bin", "/lib", "/lib64", "/sbin"]) {
    let info;
    try {
      info = lstatSync(top);
    } catch {
      continue;
    }
    if (info.isSymbolicLink()) mounts.push({ kind: "symlink", path: top, target: readlinkSync(top) });
    else if (info.isDirectory()) mounts.push({ kind: "bind", path: top });
  }
  for (const file of ["/etc/ld.so.cache", "/etc/alternatives", ...extraFiles]) if (existsSync(file)) mounts.push({ kind: "bind", path: file });
  return mounts;
}

function covered(path: string, mounts: readonly SystemMount[]): boolean {
  return mounts.some((m) => m.kind === "bind" && (path === m.path || path.startsWith(m.path + "/")));
}

/**
 * Finds what the sandbox needs on this host. `node` is Debian's `/usr/bin/node` or else the Node
 * running Familiar (bound read-only at its own path). `bwrap` overrides where bubblewrap is.
 * @throws HostUnavailable naming what is missing
 */
export function findHost(options: { uid?: number; gid?: number; bwrap?: string } = {}): HostLayout {
  if (process.platform !== "linux") throw new HostUnavailable(`the sandbox needs Linux (this is ${process.platform})`);
  const bwrap = firstExecutable(options.bwrap ? [options.bwrap] : ["/usr/bin/bwrap", "/bin/bwrap"]);
  if (bwrap === null) throw new HostUnavailable(`bubblewrap is not installed (no ${options.bwrap ?? "/usr/bin/bwrap"}; apt-get install bubblewrap)`);
  const prlimit = firstExecutable(["/usr/bin/prlimit", "/bin/prlimit"]);
  if (prlimit === null) throw new HostUnavailable("prlimit (util-linux) is not installed");
  const root = process.getuid?.() === 0;
  const setpriv = root ? firstExecutable(["/usr/bin/setpriv", "/bin/setpriv"]) : null;
  if (root && setpriv === null) throw new HostUnavailable("Familiar runs as root and setpriv (util-linux) is not installed: sandboxes cannot run as an unprivileged user");
  const python = firstExecutable(["/usr/bin/python3"]);
  const shell = firstExecutable(["/bin/sh", "/usr/bin/sh"]);
  let node = firstExecutable(["/usr/bin/node", "/usr/bin/nodejs"]);
  const extra: string[] = [];
  if (node === null && executable(process.execPath)) {
    node = realpathSync(process.execPath);
    extra.push(node);
  }
  const mounts = systemMounts(extra);
  const interpreters: Partial<Record<Language, string>> = {};
  if (python !== null && covered(realpathSync(python), mounts)) interpreters.python = python;
  if (node !== null && covered(realpathSync(node), mounts)) interpreters.javascript = node;
  if (shell !== null && covered(realpathSync(shell), mounts)) interpreters.shell = shell;
  if (interpreters.shell === undefined) throw new HostUnavailable("no POSIX shell at /bin/sh");
  const pathDirs = ["/usr/bin", "/bin"];
  if (node !== null && !pathDirs.includes(dirname(node))) pathDirs.push(dirname(node));
  const identity: SandboxIdentity = root ? { kind: "switch", uid: options.uid ?? DEFAULT_SANDBOX_ID, gid: options.gid ?? DEFAULT_SANDBOX_ID } : { kind: "own" };
  if (identity.kind === "switch" && (identity.uid === 0 || identity.gid === 0)) throw new HostUnavailable("the sandbox user must not be root (uid and gid other than 0)");
  return { bwrap, setpriv, prlimit, mounts, interpreters, path: pathDirs.join(":"), identity };
}

/** Whether uid/gid (no supplementary groups) may search (pass through) a folder with these stats. */
function searchable(info: { uid: number; gid: number; mode: number }, uid: number, gid: number): boolean {
  if (info.uid === uid) return (info.mode & 0o100) !== 0;
  if (info.gid === gid) return (info.mode & 0o010) !== 0;
  return (info.mode & 0o001) !== 0;
}

/**
 * Lets the sandbox user pass through every folder from `/` down to `workspaceRoot`'s parent:
 * folders at or below `dataDir` are given its group with `g+x` (owner-only folders become 0710);
 * folders above must already allow it. @throws HostUnavailable naming a closed folder above DATA_DIR
 */
export async function openPathFor(identity: SandboxIdentity, dataDir: string, workspaceRoot: string): Promise<void> {
  if (identity.kind === "own") return;
  const rel = relative(dataDir, dirname(workspaceRoot));
  if (rel.startsWith("..")) throw new HostUnavailable(`the workspace ${workspaceRoot} is not inside DATA_DIR ${dataDir}`);
  const ours = [dataDir, ...(rel === "" ? [] : rel.split(sep).map((_, i, parts) => join(dataDir, ...parts.slice(0, i + 1))))];
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    const info = statSync(dir);
    if (!searchable(info, identity.uid, identity.gid)) {
      throw new HostUnavailable(`the sandbox user (uid ${identity.uid}) cannot pass through ${dir}, above DATA_DIR: allow it (chmod o+x ${dir}) or move DATA_DIR`);
    }
    if (dir === "/") break;
  }
  for (const dir of ours) {
    const info = await stat(dir);
    if (searchable(info, identity.uid, identity.gid)) continue;
    await chown(dir, info.uid, identity.gid);
    await chmod(dir, (info.mode & 0o7707) | 0o010);
  }
}
