/**
 * Limits the kernel enforced by itself, found after a run: a process ended by SIGXCPU (the CPU
 * rlimit) or SIGXFSZ (the file size), a file left at the size limit, or the program's own error
 * output saying a fork, an allocation or an open was refused (dash's "Cannot fork", Python's
 * MemoryError and BlockingIOError, Node's "heap out of memory", "Too many open files", …). These
 * name the limit in the result; the supervisor names the ones it killed for.
 */
import { constants } from "node:os";
import { posix } from "node:path";
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

/** A wall of the sandbox a run ran into (not a limit: these hold whatever the run does). */
export interface BoundaryHit {
  /** `network`: a connection or name lookup failed (there is no network); `read_only`: a write outside /workspace and /tmp; `outside_workspace`: a path outside /workspace that does not exist in the sandbox. */
  boundary: "network" | "read_only" | "outside_workspace";
  /** In words, for the model and the person. */
  message: string;
}

const NETWORK = [
  /Couldn't connect to server|Failed to connect to|Could not resolve (host|proxy)|Network is unreachable|Address family not supported|Temporary failure in name resolution|Name or service not known|unable to resolve host|urlopen error|Connection refused/i,
  /\b(EAFNOSUPPORT|ENETUNREACH|ECONNREFUSED|EAI_AGAIN|ENOTFOUND)\b|\bgetaddrinfo\b/,
];
const READ_ONLY = /Read-only file system|EROFS/;
/** `cat: X: No such file…`, Python's `…: 'X'`, Node's `ENOENT: no such file or directory, open 'X'`. */
const MISSING = [/(?:^|\s)([^\s:'"]+): (?:No such file or directory|cannot open|Not a directory)/gm, /No such file or directory: '([^']+)'/g, /ENOENT: no such file or directory, \w+ '([^']+)'/g];
/** Where a program may look without leaving its own computer (the system is there, read-only). */
const INSIDE = ["/workspace", "/tmp", "/usr", "/bin", "/lib", "/lib64", "/sbin", "/proc/self", "/dev"];

function outsideWorkspace(path: string): boolean {
  const resolved = posix.resolve("/workspace", path);
  return !INSIDE.some((top) => resolved === top || resolved.startsWith(`${top}/`));
}

/**
 * The sandbox's walls a failed run's error output shows it met: no network, a read-only system,
 * paths outside the workspace that are not there. Named so the model (and a person reading along)
 * knows it was the sandbox — not a bug to work around by trying again.
 */
export function boundariesMet(exitCode: number | null, stderr: string): BoundaryHit[] {
  if (exitCode === 0) return [];
  const hits: BoundaryHit[] = [];
  if (NETWORK.some((re) => re.test(stderr))) hits.push({ boundary: "network", message: "the sandbox has no network at all — no connection, no name lookup, nothing can be downloaded or installed; data leaves only through Familiar's own tools" });
  if (READ_ONLY.test(stderr)) hits.push({ boundary: "read_only", message: "only /workspace (and /tmp, gone after the run) can be written; the rest of the system is read-only" });
  const missing = MISSING.flatMap((re) => [...stderr.matchAll(re)].map((m) => m[1] as string)).filter(outsideWorkspace);
  if (missing.length > 0) hits.push({ boundary: "outside_workspace", message: `${JSON.stringify(missing[0])} is outside the person's workspace: nothing of DATA_DIR, other persons or the host is there, only /workspace and the read-only system` });
  return hits;
}
