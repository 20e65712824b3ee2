/**
 * Runs one program in a bubblewrap sandbox over a person's workspace and reports what happened:
 * exit status, output cut to a budget, the limit that stopped it (if any), and the files created,
 * changed or deleted in the workspace.
 *
 * A run, in order: wait for a free slot (at most `concurrency` sandboxes at once, one per
 * workspace); walk the workspace (refused above the entry limit), remove names of files whose
 * other links lie outside it, hand it to the sandbox user when Familiar is root; lower the file
 * size limit to the free quota; start `[setpriv] bwrap … prlimit … program` with an empty
 * environment; watch it (supervisor.ts) and read its output; on exit walk again and compare. When
 * the quota was exceeded, files the run created are removed (largest first) until the workspace
 * fits again. Nothing here ever runs a program outside bubblewrap.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { constants, readFileSync, readdirSync } from "node:fs";
import { lstat, mkdir, open, unlink, type FileHandle } from "node:fs/promises";
import { constants as osConstants } from "node:os";
import { KeyedQueue } from "../../core/scheduling/index.js";
import { FD, bwrapOptions, hostCommand, type SandboxCommand } from "./bwrap.js";
import { openPathFor, type HostLayout, type Language } from "./host.js";
import { DEFAULT_LIMITS, MAX_WALL_SECONDS, cpuSecondsOf, formatBytes, type ExecLimits, type LimitHit } from "./limits.js";
import { OutputBudget, type CapturedOutput } from "./output.js";
import { diff, handOver, neutraliseOutsideLinks, unlinkInside, walk, type Snapshot, type WorkspaceChanges } from "./scan.js";
import { buildSeccompFilter } from "./seccomp.js";
import { boundariesMet, refusedLimit, type BoundaryHit } from "./refusals.js";
import { Supervisor, quotaHit, type Peaks } from "./supervisor.js";

/** What to run. */
export type ExecProgram = { kind: "code"; language: Language; code: string } | { kind: "command"; command: string; args: string[] };

/** One run's request. */
export interface ExecRequest {
  /** Absolute path of the person's workspace (made when missing). */
  workspaceRoot: string;
  /** Bytes the workspace may hold. */
  quotaBytes: number;
  program: ExecProgram;
  /** Wall time, seconds (default the configured limit, at most 300). */
  wallSeconds?: number;
  /**
   * A folder at the workspace's top level the program may read but not change (the artifacts'
   * versions). Made a real folder before the run: a link or file of that name is removed first.
   */
  readOnlyFolder?: string;
  signal?: AbortSignal;
}

/** What a run did. */
export interface ExecResult {
  /** `exited`: the program ended by itself (exitCode, or signal); `limit`: a limit stopped it; `aborted`: the caller stopped it. */
  outcome: "exited" | "limit" | "aborted";
  exitCode: number | null;
  /** Signal that ended the program (`SIGSEGV`), when it did not exit. */
  signal: string | null;
  limit: LimitHit | null;
  /** The sandbox's walls the error output shows the run met (no network, read-only system, outside the workspace). */
  boundaries: BoundaryHit[];
  stdout: CapturedOutput;
  stderr: CapturedOutput;
  files: WorkspaceChanges;
  /** Files removed before the run: names of files linked to something outside the workspace. */
  unlinked: string[];
  /** Files the run created and that were removed afterwards because the quota was exceeded. */
  removedOverQuota: string[];
  durationMs: number;
  cpuMs: number;
  peakMemoryBytes: number;
  peakTasks: number;
}

/** A run that could not start (the sandbox failed to set up, or the workspace was refused). */
export class ExecError extends Error {
  constructor(
    readonly code: "sandbox_failed" | "workspace_refused",
    message: string,
  ) {
    super(message);
    this.name = "ExecError";
  }
}

const SOURCE_FILES: Record<Language, string> = { python: "/tmp/main.py", javascript: "/tmp/main.js", shell: "/tmp/main.sh" };
const SIGNALS = Object.entries(osConstants.signals);

/** Runs programs in sandboxes on one host. */
export class SandboxRunner {
  readonly limits: ExecLimits;
  private readonly seccomp = buildSeccompFilter();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly busy = new KeyedQueue();

  constructor(
    private readonly host: HostLayout,
    private readonly options: { dataDir: string; limits?: Partial<ExecLimits>; concurrency?: number },
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  /** Languages whose interpreter this host has. */
  get languages(): Language[] {
    return (Object.keys(this.host.interpreters) as Language[]).sort();
  }

  /** Runs a program. @throws ExecError when the sandbox cannot start or the workspace is refused */
  async run(request: ExecRequest): Promise<ExecResult> {
    return this.busy.run(request.workspaceRoot, () => this.withSlot(() => this.runNow(request)));
  }

  private async withSlot<T>(fn: () => Promise<T>): Promise<T> {
    const max = this.options.concurrency ?? 2;
    while (this.running >= max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private command(program: ExecProgram): SandboxCommand & { source?: string } {
    if (program.kind === "command") return { argv: [program.command, ...program.args] };
    const interpreter = this.host.interpreters[program.language];
    if (interpreter === undefined) throw new ExecError("sandbox_failed", `${program.language} is not installed on this computer`);
    const sourcePath = SOURCE_FILES[program.language];
    return { argv: [interpreter, sourcePath], sourcePath, source: program.code };
  }

  private async prepare(request: ExecRequest): Promise<{ before: Snapshot; unlinked: string[] }> {
    await mkdir(request.workspaceRoot, { recursive: true, mode: 0o700 });
    if (request.readOnlyFolder !== undefined) await realFolder(request.workspaceRoot, request.readOnlyFolder);
    await openPathFor(this.host.identity, this.options.dataDir, request.workspaceRoot).catch((error: unknown) => {
      throw new ExecError("sandbox_failed", error instanceof Error ? error.message : String(error));
    });
    const before = await walk(request.workspaceRoot, this.limits.workspaceEntries).catch((error: unknown) => {
      throw new ExecError("workspace_refused", `the workspace cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)}): it must be a folder, not a link`);
    });
    if (before.truncated) throw new ExecError("workspace_refused", `the workspace holds more than ${this.limits.workspaceEntries.toLocaleString("en-US")} files and folders; remove some first`);
    const unlinked = await neutraliseOutsideLinks(request.workspaceRoot, before);
    if (this.host.identity.kind === "switch") await handOver(request.workspaceRoot, before, this.host.identity.uid, this.host.identity.gid);
    return { before, unlinked };
  }

  private async runNow(request: ExecRequest): Promise<ExecResult> {
    const limits: ExecLimits = { ...this.limits, wallSeconds: Math.min(MAX_WALL_SECONDS, request.wallSeconds ?? this.limits.wallSeconds) };
    const command = { ...this.command(request.program), ...(request.readOnlyFolder !== undefined && { readOnlyFolder: request.readOnlyFolder }) };
    const { before, unlinked } = await this.prepare(request);
    const free = Math.max(0, request.quotaBytes - before.bytes);
    const fileBytes = Math.min(limits.fileBytes, free);
    const started = Date.now();
    const workspace = await open(request.workspaceRoot, DIR_FLAGS);
    const devNull = await open("/dev/null", "r+");
    const readOnly = request.readOnlyFolder === undefined ? null : await open(`/proc/self/fd/${workspace.fd}/${request.readOnlyFolder}`, DIR_FLAGS);
    let child: ChildProcess;
    try {
      const { file, args } = hostCommand(this.host, limits, fileBytes, command);
      child = spawn(file, args, { env: {}, stdio: childStdio(workspace.fd, devNull.fd, readOnly?.fd), detached: false });
    } catch (error) {
      await workspace.close();
      await devNull.close();
      await readOnly?.close();
      throw new ExecError("sandbox_failed", `bubblewrap did not start: ${error instanceof Error ? error.message : String(error)}`);
    }
    const supervisor = new Supervisor({
      pid: child.pid ?? -1,
      limits,
      cpuSeconds: cpuSecondsOf(limits),
      workspaceRoot: request.workspaceRoot,
      quotaBytes: request.quotaBytes,
      fileBytes,
      before,
      fileLimitIsQuota: fileBytes < limits.fileBytes,
    });
    await devNull.close();
    await readOnly?.close();
    const exit = this.supervise(child, supervisor, limits, command, workspace, request.signal);
    const { stdout, stderr, status, code, signal, aborted } = await exit;
    const after = await walk(request.workspaceRoot, limits.workspaceEntries + 1).catch((error: unknown) => {
      throw new ExecError("workspace_refused", `the workspace could no longer be read after the run (${(error as NodeJS.ErrnoException).code ?? String(error)}); ${supervisor.limit?.message ?? "it was removed or replaced while the run went on"}`);
    });
    let hit = supervisor.limit;
    const failedToStart = status.exitCode === undefined && hit === null && !aborted;
    if (failedToStart) throw new ExecError("sandbox_failed", `the sandbox did not start: ${stderr.text.trim().split("\n").slice(-3).join(" ") || `bubblewrap exited with ${code ?? signal}`}`);
    hit ??= refusedLimit({ exitCode: status.exitCode ?? null, stderr: stderr.text, before, after, quotaBytes: request.quotaBytes, fileBytes, limits });
    const removedOverQuota = after.bytes > request.quotaBytes ? await this.trimToQuota(request, before, after) : [];
    if (removedOverQuota.length > 0 && hit === null) hit = { ...quotaHit(after.bytes, request.quotaBytes), by: "refused" };
    const peaks: Peaks = supervisor.peak;
    return {
      outcome: aborted ? "aborted" : hit?.by === "killed" ? "limit" : "exited",
      ...exitStatus(status.exitCode),
      limit: hit,
      boundaries: hit === null && !aborted ? boundariesMet(status.exitCode ?? null, stderr.text) : [],
      stdout,
      stderr,
      files: diff(before, after),
      unlinked,
      removedOverQuota,
      durationMs: Date.now() - started,
      cpuMs: peaks.cpuMs,
      peakMemoryBytes: peaks.rssBytes,
      peakTasks: Math.max(0, peaks.tasks - 1),
    };
  }

  private async supervise(child: ChildProcess, supervisor: Supervisor, limits: ExecLimits, command: SandboxCommand & { source?: string }, workspace: FileHandle, signal?: AbortSignal) {
    const out = new OutputBudget(limits.shownOutputBytes);
    const err = new OutputBudget(limits.shownOutputBytes);
    let statusText = "";
    const count = (budget: OutputBudget) => (chunk: Buffer) => {
      budget.push(chunk);
      if (out.bytes + err.bytes > limits.outputBytes) supervisor.trip({ limit: "output", message: `it wrote more than ${formatBytes(limits.outputBytes)} of output, the limit` });
    };
    child.stdout?.on("data", count(out));
    child.stderr?.on("data", count(err));
    const pipes = child.stdio as unknown as Array<NodeJS.ReadWriteStream | null>;
    for (const pipe of pipes.slice(3)) pipe?.on("error", () => undefined);
    pipes[FD.status]?.on("data", (chunk: Buffer) => (statusText += chunk.toString("utf8")));
    pipes[FD.args]?.end(Buffer.from(bwrapOptions(this.host, limits, command).join("\0") + "\0"));
    pipes[FD.source]?.end(command.source ?? "");
    pipes[FD.seccomp]?.end(this.seccomp);
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      supervisor.kill();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    supervisor.start();
    const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.once("error", () => resolve([null, null]));
      child.once("close", (c, s) => resolve([c, s]));
    });
    signal?.removeEventListener("abort", onAbort);
    const status = parseStatus(statusText);
    await supervisor.stop(status.childPid);
    await workspace.close();
    return { stdout: out.result(), stderr: err.result(), status, code, signal: sig, aborted };
  }

  /** Removes files the run created, largest first, until the workspace fits its quota. */
  private async trimToQuota(request: ExecRequest, before: Snapshot, after: Snapshot): Promise<string[]> {
    const created = [...after.entries].filter(([path, e]) => e.type === "file" && !before.entries.has(path)).sort((a, b) => b[1].size - a[1].size);
    const removed: string[] = [];
    let bytes = after.bytes;
    for (const [path, entry] of created) {
      if (bytes <= request.quotaBytes) break;
      await unlinkInside(request.workspaceRoot, path).catch(() => undefined);
      after.entries.delete(path);
      bytes -= entry.size;
      removed.push(path);
    }
    after.bytes = bytes;
    return removed;
  }
}

const O_CLOEXEC = 0o2000000;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Makes `name` under `root` a real folder: a link or anything else of that name is removed first (never followed). */
async function realFolder(root: string, name: string): Promise<void> {
  const at = `${root}/${name}`;
  const info = await lstat(at).catch(() => null);
  if (info?.isDirectory()) return;
  if (info !== null) await unlink(at);
  await mkdir(at, { mode: 0o700 });
}

/**
 * The child's descriptors: stdin from /dev/null, stdout and stderr, then {@link FD}'s pipes and the
 * workspace handle — and /dev/null over every descriptor Familiar inherited from its own parent
 * without close-on-exec (a service manager's socket, a log pipe). Node opens its own descriptors
 * close-on-exec, but inherited ones would pass through bubblewrap into the sandbox.
 */
function childStdio(workspaceFd: number, devNull: number, readOnlyFd?: number): Array<"ignore" | "pipe" | number> {
  const stdio: Array<"ignore" | "pipe" | number> = ["ignore", "pipe", "pipe", "pipe", workspaceFd, "pipe", "pipe", "pipe", readOnlyFd ?? devNull];
  let names: string[] = [];
  try {
    names = readdirSync("/proc/self/fdinfo");
  } catch {
    return stdio;
  }
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < stdio.length) continue;
    let flags: number;
    try {
      flags = parseInt(/^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "latin1"))?.[1] ?? "0", 8);
    } catch {
      continue;
    }
    if ((flags & O_CLOEXEC) !== 0) continue;
    while (stdio.length < fd) stdio.push("ignore");
    stdio[fd] = devNull;
  }
  return stdio;
}

function parseStatus(text: string): { exitCode?: number; childPid?: number } {
  const status: { exitCode?: number; childPid?: number } = {};
  for (const match of text.matchAll(/\{[^}]*\}/g)) {
    try {
      const parsed = JSON.parse(match[0]) as Record<string, unknown>;
      if (typeof parsed["exit-code"] === "number") status.exitCode = parsed["exit-code"];
      if (typeof parsed["child-pid"] === "number") status.childPid = parsed["child-pid"];
    } catch {
      // bubblewrap writes one JSON object per line; a partial one is ignored
    }
  }
  return status;
}

/** bubblewrap reports a program killed by signal N as exit code 128 + N. */
function exitStatus(exitCode: number | undefined): { exitCode: number | null; signal: string | null } {
  if (exitCode === undefined) return { exitCode: null, signal: "SIGKILL" };
  if (exitCode > 128 && exitCode < 128 + 65) {
    const name = SIGNALS.find(([, n]) => n === exitCode - 128)?.[0];
    if (name) return { exitCode: null, signal: name };
  }
  return { exitCode, signal: null };
}
