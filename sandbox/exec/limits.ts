/**
 * The limits of one sandboxed run: what they are, their defaults, and the names a result gives
 * the one that stopped it. Every limit here is enforced (see `runner.ts` and `supervisor.ts`):
 * the kernel's rlimits bound each process, the supervisor bounds the whole process tree, and on
 * any limit the whole tree is killed.
 */
import { z } from "zod";

/** Wall time of a run when the caller gives none, seconds. */
export const DEFAULT_WALL_SECONDS = 30;
/** Longest wall time a caller may ask for, seconds (5 minutes). */
export const MAX_WALL_SECONDS = 300;

const MiB = 1024 * 1024;

/** Limits of a run. Sizes in bytes, times in seconds. */
export interface ExecLimits {
  /** Wall time, seconds (1–300; default 30). */
  wallSeconds: number;
  /**
   * CPU time of the whole process tree, seconds, summed over every process and thread (default:
   * the run's wall time — on average one core). Each process also has it as RLIMIT_CPU.
   */
  cpuSeconds: number | null;
  /** Resident memory of the whole tree, bytes (default 512 MiB); each process has it as RLIMIT_DATA. */
  memoryBytes: number;
  /** Processes and threads at once (RLIMIT_NPROC, counted in the sandbox's own user namespace; default 64). */
  processes: number;
  /** Open files per process (RLIMIT_NOFILE; default 256). */
  openFiles: number;
  /** Largest file a process may write, bytes (RLIMIT_FSIZE; default 100 MiB; lowered to the free quota). */
  fileBytes: number;
  /** Bytes of stdout plus stderr read from the run before it is killed (default 8 MiB). */
  outputBytes: number;
  /** Of the output, bytes shown per stream in the result (head and tail, the middle cut visibly; default 16 KiB). */
  shownOutputBytes: number;
  /** Size of the fresh `/tmp` (a tmpfs in memory), bytes (default 64 MiB). */
  tmpBytes: number;
  /** Entries (files, folders, links) the workspace may hold after a run (default 100,000). */
  workspaceEntries: number;
  /** The disk holding the workspace keeps at least this many bytes free, bytes (default 256 MiB). */
  diskReserveBytes: number;
}

/** Defaults (README "Computer" lists them). */
export const DEFAULT_LIMITS: Readonly<ExecLimits> = Object.freeze({
  wallSeconds: DEFAULT_WALL_SECONDS,
  cpuSeconds: null,
  memoryBytes: 512 * MiB,
  processes: 64,
  openFiles: 256,
  fileBytes: 100 * MiB,
  outputBytes: 8 * MiB,
  shownOutputBytes: 16 * 1024,
  tmpBytes: 64 * MiB,
  workspaceEntries: 100_000,
  diskReserveBytes: 256 * MiB,
});

/** Settings an operator may change (FAMILIAR_CONFIG `sandbox.limits`); validated, every key optional. */
export const execLimitsSchema = z
  .object({
    wallSeconds: z.number().int().min(1).max(MAX_WALL_SECONDS),
    cpuSeconds: z.number().int().min(1).max(3600).nullable(),
    memoryBytes: z.number().int().min(16 * MiB).max(64 * 1024 * MiB),
    processes: z.number().int().min(4).max(4096),
    openFiles: z.number().int().min(16).max(65536),
    fileBytes: z.number().int().min(0),
    outputBytes: z.number().int().min(1024),
    shownOutputBytes: z.number().int().min(256).max(1024 * 1024),
    tmpBytes: z.number().int().min(MiB),
    workspaceEntries: z.number().int().min(10),
    diskReserveBytes: z.number().int().min(0),
  })
  .partial()
  .strict();

/** Which limit stopped a run. */
export type LimitName =
  | "wall_time"
  | "cpu_time"
  | "memory"
  | "processes"
  | "open_files"
  | "file_size"
  | "output"
  | "workspace_quota"
  | "workspace_entries"
  | "disk_reserve";

/** A limit a run reached, with the numbers, in words for the model and the person. */
export interface LimitHit {
  limit: LimitName;
  /** "it ran for 30 s, the wall-time limit" — plain words. */
  message: string;
  /**
   * `killed`: the whole process tree was killed for it; `refused`: the kernel refused the request
   * (a fork, an allocation, an open, a write past the file size) and the program ended by itself —
   * seen in its error output or its exit signal.
   */
  by: "killed" | "refused";
}

/** The CPU limit in effect for these limits, seconds. */
export function cpuSecondsOf(limits: ExecLimits): number {
  return limits.cpuSeconds ?? limits.wallSeconds;
}

/** Bytes as the README writes them ("512 MiB", "64 KiB", "1.5 GiB"). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * MiB) return `${trim(bytes / (1024 * MiB))} GiB`;
  if (bytes >= MiB) return `${trim(bytes / MiB)} MiB`;
  if (bytes >= 1024) return `${trim(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

function trim(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** One line per limit, for tool descriptions and the setup page. */
export function describeLimits(limits: ExecLimits, quotaBytes: number): string {
  return [
    `wall time ${limits.wallSeconds} s by default (at most ${MAX_WALL_SECONDS} s)`,
    limits.cpuSeconds === null ? "CPU time equal to the wall time (all processes together)" : `CPU time ${limits.cpuSeconds} s (all processes together)`,
    `memory ${formatBytes(limits.memoryBytes)}`,
    `${limits.processes} processes and threads`,
    `${limits.openFiles} open files per process`,
    `files up to ${formatBytes(limits.fileBytes)}`,
    `output ${formatBytes(limits.outputBytes)} (the result shows ${formatBytes(limits.shownOutputBytes)} of each stream)`,
    `/tmp ${formatBytes(limits.tmpBytes)}`,
    `workspace quota ${formatBytes(quotaBytes)}`,
  ].join("; ");
}
