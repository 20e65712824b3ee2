/**
 * Reading a sandbox's process tree from the host's /proc: every process below bubblewrap (found
 * through `/proc/<pid>/task/<tid>/children`, which lists each thread's children — orphans are
 * re-parented to the sandbox's own init, which is below bubblewrap too), with its CPU time,
 * resident memory, threads and open descriptors. Linux only.
 *
 * Why the CPU sum is exact for the whole tree: a process's `cutime`/`cstime` hold the times of
 * the children it has reaped (and theirs), so utime+stime+cutime+cstime summed over the live
 * processes counts every process that ever ran in the tree once.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on every Linux build we run on). */
const TICKS_PER_SECOND = 100;
/** Page size for `rss` in /proc/<pid>/stat (4 KiB on x86-64 and on Debian's arm64 kernels). */
const PAGE_BYTES = 4096;

/** One sample of the tree. */
export interface TreeSample {
  /** Host pids of the processes seen, the root first. */
  pids: number[];
  /** CPU time of the tree so far, milliseconds. */
  cpuMs: number;
  /** Resident memory summed over the processes, bytes. */
  rssBytes: number;
  /** Threads summed over the processes (what RLIMIT_NPROC counts). */
  tasks: number;
  /** Most open descriptors of any one process. */
  maxOpenFiles: number;
  /**
   * Bytes held by files on the workspace's device that were deleted while still open (inode →
   * size): they fill the disk but no longer show in the workspace.
   */
  deletedOpen: Map<string, number>;
}

interface ProcStat {
  ppid: number;
  cpuTicks: number;
  threads: number;
  rssPages: number;
}

/** Parses /proc/<pid>/stat; null when the process is gone. Fields after the last `)` (comm may hold anything). */
export function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Field numbers from proc(5), minus 3 (pid, comm and state come before the slice).
  const num = (field: number): number => Number(fields[field - 3] ?? 0);
  return { ppid: num(4), cpuTicks: num(14) + num(15) + num(16) + num(17), threads: num(20), rssPages: num(24) };
}

function childrenOf(pid: number): number[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const tid of tids) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/children`, "latin1");
    } catch {
      continue;
    }
    for (const part of text.split(" ")) if (part.trim() !== "") out.push(Number(part));
  }
  return out;
}

/**
 * Samples the tree below (and including) `root`. `watchDevice` (the workspace's `st_dev`) selects
 * which deleted-but-open files count. At most `maxProcesses` processes are visited (a fork bomb
 * cannot make one sample unbounded).
 */
export function sampleTree(root: number, watchDevice: number, maxProcesses = 4096): TreeSample {
  const sample: TreeSample = { pids: [], cpuMs: 0, rssBytes: 0, tasks: 0, maxOpenFiles: 0, deletedOpen: new Map() };
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0 && seen.size < maxProcesses) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const stat = readStat(pid);
    if (stat === null) continue;
    sample.pids.push(pid);
    sample.cpuMs += (stat.cpuTicks * 1000) / TICKS_PER_SECOND;
    sample.rssBytes += stat.rssPages * PAGE_BYTES;
    sample.tasks += stat.threads;
    sample.maxOpenFiles = Math.max(sample.maxOpenFiles, scanDescriptors(pid, watchDevice, sample.deletedOpen));
    queue.push(...childrenOf(pid));
  }
  return sample;
}

/** Counts a process's descriptors and notes deleted files on `device` it still holds open. */
function scanDescriptors(pid: number, device: number, deleted: Map<string, number>): number {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return 0;
  }
  for (const fd of fds) {
    try {
      const info = statSync(`/proc/${pid}/fd/${fd}`);
      if (info.isFile() && info.nlink === 0 && info.dev === device) deleted.set(`${info.dev}:${info.ino}`, info.size);
    } catch {
      // Closed meanwhile.
    }
  }
  return fds.length;
}

/** Whether a process exists (a zombie counts as gone). */
export function alive(pid: number): boolean {
  const stat = readStat(pid);
  if (stat === null) return false;
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return false;
  }
}
