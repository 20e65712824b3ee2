/**
 * The bubblewrap command line of one run. The options go through `--args FD` (NUL-separated) so
 * the host paths in them never show in the sandbox's `/proc/1/cmdline`; only the command after
 * `--` does. Descriptors the child gets (see {@link FD}): the options, the workspace folder (an
 * open handle, bound with `--bind-fd`), the program's source (copied to `/tmp` with `--file`),
 * the seccomp filter and bubblewrap's JSON status.
 *
 * Inside: new user, PID, IPC, UTS, network, mount and cgroup namespaces (`--unshare-all`), nested
 * user namespaces disabled, a new session (no terminal to inject keystrokes into), the sandbox
 * killed with its parent, an empty environment but for PATH, HOME, TMPDIR, LANG and two Python
 * switches; `/usr/bin`, `/usr/lib`, `/usr/lib64`, zoneinfo and `/etc/ld.so.cache` +
 * `/etc/alternatives` read-only; a fresh `/proc` (this PID namespace only) and `/dev` (null,
 * zero, full, random, urandom, tty; read-only); a size-limited tmpfs at `/tmp` and `/dev/shm`;
 * the workspace read-write at `/workspace` (its artifacts folder read-only); the root itself read-only. Limits are applied inside,
 * by `prlimit`, after the user namespace exists: RLIMIT_NPROC then counts this sandbox's tasks
 * only (the kernel counts per user namespace), not every process of the user on the host.
 */
import type { HostLayout, SystemMount } from "./host.js";
import { cpuSecondsOf, type ExecLimits } from "./limits.js";

/** Child descriptor numbers of a run. */
export const FD = { args: 3, workspace: 4, source: 5, seccomp: 6, status: 7, readOnly: 8 } as const;

/** What runs, as the sandbox sees it. */
export interface SandboxCommand {
  /** argv inside the sandbox (argv[0] is looked up on PATH inside when it has no `/`). */
  argv: string[];
  /** Where the program's source goes inside (`/tmp/main.py`), when one is passed through {@link FD.source}. */
  sourcePath?: string;
  /** A top-level workspace folder bound read-only over itself (through {@link FD.readOnly}), e.g. `artifacts`. */
  readOnlyFolder?: string;
}

/** Limits the kernel enforces per process, as `prlimit` options. */
export function rlimitOptions(limits: ExecLimits, fileBytes: number): string[] {
  const cpu = cpuSecondsOf(limits);
  return [
    `--nproc=${limits.processes}`,
    `--nofile=${limits.openFiles}`,
    `--fsize=${fileBytes}`,
    `--data=${limits.memoryBytes}`,
    // Soft CPU limit sends SIGXCPU, the hard one a second later SIGKILL.
    `--cpu=${cpu}:${cpu + 1}`,
    "--core=0",
    "--msgqueue=0",
    "--memlock=0",
  ];
}

function mountArgs(mounts: readonly SystemMount[]): string[] {
  return mounts.flatMap((m) => (m.kind === "bind" ? ["--ro-bind", m.path, m.path] : ["--symlink", m.target, m.path]));
}

/** The options (for `--args`) of a run. */
export function bwrapOptions(host: HostLayout, limits: ExecLimits, command: SandboxCommand): string[] {
  const uid = host.identity.kind === "switch" ? host.identity.uid : (process.getuid?.() ?? 1000);
  const gid = host.identity.kind === "switch" ? host.identity.gid : (process.getgid?.() ?? 1000);
  return [
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--uid", String(uid),
    "--gid", String(gid),
    "--hostname", "familiar",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--setenv", "PATH", host.path,
    "--setenv", "HOME", "/tmp",
    "--setenv", "TMPDIR", "/tmp",
    "--setenv", "LANG", "C.UTF-8",
    "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
    "--setenv", "PYTHONUNBUFFERED", "1",
    ...mountArgs(host.mounts),
    "--proc", "/proc",
    "--dev", "/dev",
    "--remount-ro", "/dev",
    "--size", String(Math.min(16 * 1024 * 1024, limits.tmpBytes)), "--tmpfs", "/dev/shm",
    "--size", String(limits.tmpBytes), "--tmpfs", "/tmp",
    ...(command.sourcePath ? ["--file", String(FD.source), command.sourcePath] : []),
    "--bind-fd", String(FD.workspace), "/workspace",
    ...(command.readOnlyFolder ? ["--ro-bind-fd", String(FD.readOnly), `/workspace/${command.readOnlyFolder}`] : []),
    "--chdir", "/workspace",
    "--remount-ro", "/",
    "--seccomp", String(FD.seccomp),
    "--json-status-fd", String(FD.status),
  ];
}

/** The host command line: `[setpriv …] bwrap --args 3 -- prlimit … -- argv…`. */
export function hostCommand(host: HostLayout, limits: ExecLimits, fileBytes: number, command: SandboxCommand): { file: string; args: string[] } {
  const inner = [host.bwrap, "--args", String(FD.args), "--", host.prlimit, ...rlimitOptions(limits, fileBytes), "--", ...command.argv];
  if (host.identity.kind === "own") return { file: inner[0] as string, args: inner.slice(1) };
  const { uid, gid } = host.identity;
  return {
    file: host.setpriv as string,
    args: [`--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", ...inner],
  };
}
