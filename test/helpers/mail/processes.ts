/**
 * Server processes the mail tests start (Dovecot, Postfix): each runs in a process group of its own,
 * so stopping it ends every child it forked; groups still alive when the test process exits are
 * killed then, so a failed or interrupted test leaves nothing behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

const live = new Set<number>();
const livePids = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pgid of live) killGroup(pgid, "SIGKILL");
    for (const pid of livePids) signalPid(pid, "SIGKILL");
  });
}

function signalPid(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a daemon that left our process group (Postfix's master makes a session of its own): SIGTERM,
 * SIGKILL after `graceMs`; resolves once the pid is gone. Until then it is killed if the tests exit.
 */
export async function stopDaemon(pid: number, graceMs = 5_000): Promise<void> {
  installExitHook();
  livePids.add(pid);
  signalPid(pid, "SIGTERM");
  const end = Date.now() + graceMs;
  while (signalPid(pid, 0)) {
    if (Date.now() > end) signalPid(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 50));
  }
  livePids.delete(pid);
}

/** Registers a daemon's pid to be killed if the test process exits before `stopDaemon`. */
export function trackDaemon(pid: number): void {
  installExitHook();
  livePids.add(pid);
}

function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** A started server process (the leader of its own process group). */
export interface ServerProcess {
  readonly pid: number;
  /** Output the process wrote (stdout and stderr), for error messages. */
  output(): string;
  /** Whether the leader has exited. */
  exited(): boolean;
  /** SIGTERM to the group, SIGKILL after `graceMs` (default 5 s); resolves once the leader exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the whole group at once (a crash); resolves once the leader exited. */
  kill(): Promise<void>;
}

/** Starts `command` in a new process group. @throws when it cannot be spawned */
export function startProcess(command: string, args: readonly string[], options: SpawnOptions = {}): ServerProcess {
  installExitHook();
  const child: ChildProcess = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = child.pid;
  live.add(pid);
  let text = "";
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let done = false;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", () => {
      done = true;
      resolve();
    });
    child.once("error", (err) => {
      text += `\n${String(err)}`;
      done = true;
      resolve();
    });
  });
  const finish = async (graceMs: number, first: NodeJS.Signals) => {
    if (!killGroup(pid, first) && done) {
      live.delete(pid);
      return;
    }
    const timer = setTimeout(() => killGroup(pid, "SIGKILL"), graceMs);
    await exit;
    clearTimeout(timer);
    // Children that outlived the leader (none should) go with the group.
    killGroup(pid, "SIGKILL");
    live.delete(pid);
  };
  return {
    pid,
    output: () => text,
    exited: () => done,
    stop: (graceMs = 5_000) => finish(graceMs, "SIGTERM"),
    kill: () => finish(0, "SIGKILL"),
  };
}

/** Runs a short command to completion; resolves with its output. @throws with the output when it fails */
export function runCommand(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout?.on("data", (c: Buffer) => (text += c.toString("utf8")));
    child.stderr?.on("data", (c: Buffer) => (text += c.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`${command} ${args.join(" ")} failed (${code}): ${text}`))));
  });
}
