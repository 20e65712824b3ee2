/**
 * Watching a running sandbox from the host: wall time, the process tree's CPU time, resident
 * memory, tasks and open files (every 100 ms from /proc), the workspace's bytes and entries, files
 * deleted while open, and the disk's free space (walked as often as the walk's own cost allows,
 * at least every 250 ms). The first limit reached is recorded and the whole tree is killed:
 * SIGKILL to bubblewrap and to the sandbox's init (which takes every process of its PID namespace
 * with it); `--die-with-parent` does the same should Familiar itself die.
 */
import { statfs } from "node:fs/promises";
import { formatBytes, type ExecLimits, type LimitHit } from "./limits.js";
import { alive, sampleTree } from "./proc.js";
import { touched, walk, type Snapshot } from "./scan.js";

const PROCESS_TICK_MS = 100;
const MIN_WALK_MS = 250;

/** Peaks a supervisor saw. */
export interface Peaks {
  cpuMs: number;
  rssBytes: number;
  tasks: number;
}

/** What the supervisor watches. */
export interface Watched {
  /** Host pid of bubblewrap (the spawned process). */
  pid: number;
  limits: ExecLimits;
  /** CPU limit of the tree, seconds. */
  cpuSeconds: number;
  workspaceRoot: string;
  /** Bytes the workspace may hold (the person's quota). */
  quotaBytes: number;
  /** The per-file limit in force (RLIMIT_FSIZE): a file at this size has hit it. */
  fileBytes: number;
  /** The workspace before the run (files it did not touch never count against the file size). */
  before: Snapshot;
  /** Whether {@link fileBytes} was lowered to the free quota (then reaching it is the quota). */
  fileLimitIsQuota: boolean;
}

/** Watches one run until {@link stop}. */
export class Supervisor {
  private hit: LimitHit | null = null;
  private readonly peaks: Peaks = { cpuMs: 0, rssBytes: 0, tasks: 0 };
  private knownPids = new Set<number>();
  private deletedOpenBytes = 0;
  private device: number | null = null;
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private walking: Promise<void> = Promise.resolve();

  constructor(private readonly watched: Watched) {}

  /** Starts the watches. */
  start(): void {
    const { limits } = this.watched;
    this.timers.push(setTimeout(() => this.trip({ limit: "wall_time", message: `it ran for ${limits.wallSeconds} s, the wall-time limit` }), limits.wallSeconds * 1000));
    this.timers.push(setInterval(() => this.sampleProcesses(), PROCESS_TICK_MS));
    this.scheduleWalk(MIN_WALK_MS);
  }

  /** Records a limit reached (also outside the supervisor: the output budget) and kills the tree. */
  trip(hit: Omit<LimitHit, "by">): void {
    if (this.hit === null) this.hit = { ...hit, by: "killed" };
    this.kill();
  }

  /** The first limit reached, or null. */
  get limit(): LimitHit | null {
    return this.hit;
  }

  /** Highest CPU, memory and task counts seen. */
  get peak(): Peaks {
    return { ...this.peaks };
  }

  /** Kills the tree (idempotent). */
  kill(): void {
    for (const pid of [this.watched.pid, ...this.knownPids]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }

  /** Stops watching; waits for a walk in progress and for every process seen (and the sandbox's init) to be gone (at most 2 s). */
  async stop(initPid?: number): Promise<void> {
    this.stopped = true;
    if (initPid !== undefined) this.knownPids.add(initPid);
    for (const timer of this.timers) clearTimeout(timer);
    await this.walking.catch(() => undefined);
    const deadline = Date.now() + 2000;
    while ([...this.knownPids].some(alive) && Date.now() < deadline) {
      this.kill();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private sampleProcesses(): void {
    if (this.stopped) return;
    const { limits, cpuSeconds } = this.watched;
    const sample = sampleTree(this.watched.pid, this.device ?? -1, limits.processes * 4);
    for (const pid of sample.pids) this.knownPids.add(pid);
    this.peaks.cpuMs = Math.max(this.peaks.cpuMs, sample.cpuMs);
    this.peaks.rssBytes = Math.max(this.peaks.rssBytes, sample.rssBytes);
    this.peaks.tasks = Math.max(this.peaks.tasks, sample.tasks);
    if (sample.cpuMs >= cpuSeconds * 1000) return this.trip({ limit: "cpu_time", message: `its processes used ${cpuSeconds} s of CPU time, the limit` });
    if (sample.rssBytes >= limits.memoryBytes) return this.trip({ limit: "memory", message: `its processes held ${formatBytes(sample.rssBytes)} of memory; the limit is ${formatBytes(limits.memoryBytes)}` });
    // bubblewrap itself runs outside the sandbox's user namespace and is not counted by RLIMIT_NPROC.
    if (sample.tasks - 1 >= limits.processes) return this.trip({ limit: "processes", message: `it reached ${limits.processes} processes and threads, the limit` });
    if (sample.maxOpenFiles >= limits.openFiles) return this.trip({ limit: "open_files", message: `a process reached ${limits.openFiles} open files, the limit` });
    const deleted = [...sample.deletedOpen.values()].reduce((a, b) => a + b, 0);
    this.deletedOpenBytes = deleted;
  }

  private scheduleWalk(delayMs: number): void {
    if (this.stopped) return;
    this.timers.push(
      setTimeout(() => {
        const started = Date.now();
        this.walking = this.checkWorkspace()
          .catch((error: unknown) => this.unwatchable(error))
          .finally(() => this.scheduleWalk(Math.max(MIN_WALK_MS, (Date.now() - started) * 4)));
      }, delayMs),
    );
  }

  /** A workspace that cannot be walked (gone, unreadable) cannot be held to its quota: the run is ended. */
  private unwatchable(error: unknown): void {
    if (this.stopped) return;
    const reason = error instanceof Error && "code" in error ? String(error.code) : error instanceof Error ? error.message : String(error);
    this.trip({ limit: "workspace_quota", message: `the workspace could no longer be read (${reason}), so its quota could not be held` });
  }

  private async checkWorkspace(): Promise<void> {
    if (this.stopped) return;
    const { limits, quotaBytes, workspaceRoot, fileBytes, fileLimitIsQuota } = this.watched;
    const snapshot = await walk(workspaceRoot, limits.workspaceEntries + 1);
    this.device = snapshot.device;
    if (this.stopped) return;
    const used = snapshot.bytes + this.deletedOpenBytes;
    if (snapshot.truncated) return this.trip({ limit: "workspace_entries", message: `the workspace reached ${limits.workspaceEntries.toLocaleString("en-US")} files and folders, the limit` });
    if (used > quotaBytes) return this.trip(quotaHit(used, quotaBytes));
    for (const [path, entry] of snapshot.entries) {
      if (entry.type !== "file" || entry.size === 0 || entry.size < fileBytes || !touched(this.watched.before, path, entry)) continue;
      return this.trip(fileLimitIsQuota ? quotaHit(used, quotaBytes) : fileHit(path, fileBytes));
    }
    const disk = await statfs(workspaceRoot);
    if (disk.bavail * disk.bsize < limits.diskReserveBytes) {
      return this.trip({ limit: "disk_reserve", message: `the disk holding the workspace is down to ${formatBytes(disk.bavail * disk.bsize)} free; ${formatBytes(limits.diskReserveBytes)} must stay free` });
    }
  }
}

/** The quota limit in words. */
export function quotaHit(used: number, quotaBytes: number): Omit<LimitHit, "by"> {
  return { limit: "workspace_quota", message: `the workspace would hold ${formatBytes(used)}; its quota is ${formatBytes(quotaBytes)}` };
}

/** The file-size limit in words. */
export function fileHit(path: string, fileBytes: number): Omit<LimitHit, "by"> {
  return { limit: "file_size", message: `${JSON.stringify(path)} reached ${formatBytes(fileBytes)}, the largest a file may be` };
}
