/**
 * Familiar's computer: code and commands run in bubblewrap, one sandbox per run, over the person's
 * workspace — new namespaces (no network at all), the system read-only, an empty environment, an
 * unprivileged user when Familiar is root, every limit enforced with the whole process tree killed
 * on any of them — and the tools `run_code` / `run_command`. `detectSandbox` says whether this host
 * can run sandboxes (and why not); where it cannot, nothing runs. Owns no network access.
 */
export { detectSandbox, explainBwrapFailure, type SandboxOptions, type SandboxStatus } from "./probe.js";
export { SandboxRunner, ExecError, type ExecProgram, type ExecRequest, type ExecResult } from "./runner.js";
export { computerTools, type ComputerToolsDeps } from "./tools.js";
export { formatResult } from "./format.js";
export { DEFAULT_LIMITS, DEFAULT_WALL_SECONDS, MAX_WALL_SECONDS, describeLimits, execLimitsSchema, formatBytes, type ExecLimits, type LimitHit, type LimitName } from "./limits.js";
export { DEFAULT_SANDBOX_ID, type Language } from "./host.js";
export { BLOCKED_SYSCALLS } from "./seccomp.js";
