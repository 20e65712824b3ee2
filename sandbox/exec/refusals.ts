/**
 * Limits the kernel enforced by itself, found after a run: a process ended by SIGXCPU (the CPU
 * rlimit) or SIGXFSZ (the file size), a file left at the size limit, or the program's own error
 * output saying a fork, an allocation or an open was refused (dash's "Cannot fork", Python's
 * MemoryError and BlockingIOError, Node's "heap out of memory", "Too many open files", …). These
 * name the limit in the result; the supervisor names the ones it killed for.
 */
import { constants } from "node:os";
import { cpuSecondsOf, formatBytes, type ExecLimits, type LimitHit } from "./limits.js";
import { touched, type Snapshot } from "./scan.js";
import { fileHit, quotaHit } from "./supervisor.js";

const PATTERNS: Array<{ test: RegExp; hit: (limits: ExecLimits) => Omit<LimitHit, "by"> }> = [
  {
    test: /Cannot fork|fork: Resource temporarily unavailable|fork: retry|BlockingIOError: \[Errno 11\]|spawn EAGAIN|pthread_create.*(EAGAIN|Resource temporarily unavailable)|Cannot create thread/i,
    hit: (l) => ({ limit: "processes", message: `it tried to run more than ${l.processes} processes and threads, the limit; the system refused` }),
  },
  {
    test: /MemoryError|Cannot allocate memory|out of memory|std::bad_alloc|Array buffer allocation failed|Fatal process out of memory|ENOMEM/i,
    hit: (l) => ({ limit: "memory", message: `it asked for more memory than the ${formatBytes(l.memoryBytes)} limit; the system refused` }),
  },
  {
    test: /Too many open files|EMFILE/,
    hit: (l) => ({ limit: "open_files", message: `a process tried to open more than ${l.openFiles} files, the limit; the system refused` }),
  },
];

/** The limit a finished run reached without being killed for it, or null. */
export function refusedLimit(input: {
  exitCode: number | null;
  stderr: string;
  before: Snapshot;
  after: Snapshot;
  quotaBytes: number;
  fileBytes: number;
  limits: ExecLimits;
}): LimitHit | null {
  const { exitCode, before, after, quotaBytes, fileBytes, limits } = input;
  const refused = (hit: Omit<LimitHit, "by">): LimitHit => ({ ...hit, by: "refused" });
  if (exitCode === 128 + constants.signals.SIGXCPU) return refused({ limit: "cpu_time", message: `a process used ${cpuSecondsOf(limits)} s of CPU time, the limit` });
  const atLimit = [...after.entries].find(([path, e]) => e.type === "file" && e.size > 0 && e.size >= fileBytes && touched(before, path, e));
  if (atLimit !== undefined || exitCode === 128 + constants.signals.SIGXFSZ || /File too large|File size limit exceeded|EFBIG/.test(input.stderr)) {
    if (fileBytes < limits.fileBytes) return refused(quotaHit(Math.max(after.bytes, quotaBytes), quotaBytes));
    return refused(fileHit(atLimit?.[0] ?? "a file", fileBytes));
  }
  for (const pattern of PATTERNS) if (pattern.test.test(input.stderr)) return refused(pattern.hit(limits));
  return null;
}
