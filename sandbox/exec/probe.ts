/**
 * Whether this host can run sandboxes, found by running one: bubblewrap, unprivileged user
 * namespaces (Debian allows them; Docker's default seccomp profile and Ubuntu's AppArmor may
 * not), the interpreters. The answer is a runner, or a plain reason the setup page and `/healthz`
 * show — and the tools are then not offered. Nothing ever runs unsandboxed.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { HostUnavailable, findHost } from "./host.js";
import type { ExecLimits } from "./limits.js";
import { ExecError, SandboxRunner } from "./runner.js";

/** The sandbox's availability. */
export type SandboxStatus = { available: true; runner: SandboxRunner } | { available: false; reason: string };

/** Options of {@link detectSandbox}. */
export interface SandboxOptions {
  dataDir: string;
  limits?: Partial<ExecLimits>;
  concurrency?: number;
  /** uid/gid of sandboxes when Familiar runs as root (default 61000). */
  uid?: number;
  gid?: number;
  /** Where bubblewrap is (default /usr/bin/bwrap). */
  bwrap?: string;
  /** False turns the computer off (FAMILIAR_CONFIG `sandbox.enabled`). */
  enabled?: boolean;
}

/** Turns bubblewrap's own complaint into words an operator can act on. */
export function explainBwrapFailure(message: string): string {
  if (/uid map|user namespace|No permissions to creat|Operation not permitted|Permission denied|setting up/i.test(message)) {
    return `user namespaces are not allowed here (${message}); in Docker run the container with --security-opt seccomp=unconfined (and on Ubuntu hosts allow unprivileged user namespaces in AppArmor), or leave the computer off`;
  }
  return message;
}

/**
 * Finds the host's tools and runs `echo ok` in a sandbox over a scratch workspace under DATA_DIR.
 * Never throws: an unavailable sandbox is a status with a reason.
 */
export async function detectSandbox(options: SandboxOptions): Promise<SandboxStatus> {
  if (options.enabled === false) return { available: false, reason: "the computer is turned off in the settings (sandbox.enabled: false)" };
  let runner: SandboxRunner;
  try {
    const host = findHost({ ...(options.uid !== undefined && { uid: options.uid }), ...(options.gid !== undefined && { gid: options.gid }), ...(options.bwrap && { bwrap: options.bwrap }) });
    runner = new SandboxRunner(host, { dataDir: options.dataDir, ...(options.limits && { limits: options.limits }), ...(options.concurrency && { concurrency: options.concurrency }) });
  } catch (error) {
    if (error instanceof HostUnavailable) return { available: false, reason: error.message };
    return { available: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const root = join(options.dataDir, "sandbox-probe", "workspace");
  try {
    const result = await runner.run({ workspaceRoot: root, quotaBytes: 1024 * 1024, program: { kind: "command", command: "/bin/sh", args: ["-c", "echo ok"] }, wallSeconds: 20 });
    if (result.exitCode === 0 && result.stdout.text === "ok\n") return { available: true, runner };
    return { available: false, reason: `a test run in the sandbox failed (${result.limit?.message ?? `exit ${result.exitCode ?? result.signal}`}: ${result.stderr.text.trim().slice(0, 300)})` };
  } catch (error) {
    const message = error instanceof ExecError ? error.message : error instanceof Error ? error.message : String(error);
    return { available: false, reason: explainBwrapFailure(message) };
  } finally {
    await rm(join(options.dataDir, "sandbox-probe"), { recursive: true, force: true }).catch(() => undefined);
  }
}
