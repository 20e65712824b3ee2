/**
 * Shared set-up of the sandbox tests: a temporary DATA_DIR shaped like Familiar's (a store file,
 * the vault, two persons with workspaces and browser profiles, a folder outside), a real runner
 * (bubblewrap must work here: `.ci/run` installs it; the tests fail with the reason otherwise), and
 * a fingerprint of everything outside the first person's workspace, to prove nothing was written
 * there.
 */
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectSandbox } from "../../../sandbox/exec/probe.js";
import type { ExecLimits } from "../../../sandbox/exec/limits.js";
import type { ExecProgram, ExecResult, SandboxRunner } from "../../../sandbox/exec/runner.js";

/** Marker strings planted outside the workspace; none may ever appear in a run's output. */
export const SECRETS = {
  store: "STORE-SECRET-6c1f",
  vault: "VAULT-SECRET-0b7e",
  other: "OTHER-PERSON-SECRET-93aa",
  browser: "BROWSER-COOKIE-SECRET-51d2",
  outside: "OUTSIDE-FILE-SECRET-e44c",
  env: "ENV-SECRET-2f90",
} as const;

/** A DATA_DIR with two persons and a runner over it. */
export interface SandboxWorld {
  dataDir: string;
  workspace: string;
  otherWorkspace: string;
  outsideFile: string;
  runner: SandboxRunner;
  /** The uid (and gid) this world's sandboxes run as when the tests run as root: its own, so parallel test files never count each other's processes. */
  uid: number;
  run(program: ExecProgram | string, options?: { wallSeconds?: number; quotaBytes?: number; language?: "python" | "javascript" | "shell" }): Promise<ExecResult>;
  /** Paths, sizes and mtimes of everything under DATA_DIR outside the first workspace. */
  outsideFingerprint(): string;
  /** Empties the first workspace (between tests). */
  reset(): void;
  cleanup(): void;
}

/** Builds the world; throws with the sandbox's reason when it is unavailable here. */
export async function sandboxWorld(limits: Partial<ExecLimits> = {}): Promise<SandboxWorld> {
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-exec-"));
  writeFileSync(join(dataDir, "familiar.db"), SECRETS.store);
  writeFileSync(join(dataDir, "vault.json"), SECRETS.vault, { mode: 0o600 });
  const workspace = join(dataDir, "persons", "per_one", "workspace");
  const otherWorkspace = join(dataDir, "persons", "per_two", "workspace");
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  mkdirSync(otherWorkspace, { recursive: true, mode: 0o700 });
  writeFileSync(join(otherWorkspace, "diary.txt"), SECRETS.other);
  mkdirSync(join(dataDir, "persons", "per_one", "browser"), { mode: 0o700 });
  writeFileSync(join(dataDir, "persons", "per_one", "browser", "Cookies"), SECRETS.browser);
  mkdirSync(join(dataDir, "outside"), { mode: 0o777 });
  const outsideFile = join(dataDir, "outside", "victim.txt");
  writeFileSync(outsideFile, SECRETS.outside, { mode: 0o666 });
  process.env.FAMILIAR_TEST_SECRET = SECRETS.env;
  const uid = 62000 + Math.floor(Math.random() * 30000);
  const status = await detectSandbox({ dataDir, limits, uid, gid: uid });
  if (!status.available) throw new Error(`the sandbox is unavailable here: ${status.reason}`);
  const runner = status.runner;
  const fingerprint = (): string => {
    const lines: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir).sort()) {
        const path = join(dir, name);
        if (path === workspace) continue;
        const info = lstatSync(path);
        lines.push(`${path} ${info.isDirectory() ? "dir" : info.size} ${info.isDirectory() ? "" : info.mtimeMs}`);
        if (info.isDirectory()) walk(path);
      }
    };
    walk(dataDir);
    return lines.join("\n");
  };
  return {
    dataDir,
    workspace,
    otherWorkspace,
    outsideFile,
    runner,
    uid,
    run: (program, options = {}) =>
      runner.run({
        workspaceRoot: workspace,
        quotaBytes: options.quotaBytes ?? 1024 * 1024 * 1024,
        program: typeof program === "string" ? { kind: "code", language: options.language ?? "shell", code: program } : program,
        ...(options.wallSeconds !== undefined && { wallSeconds: options.wallSeconds }),
      }),
    outsideFingerprint: fingerprint,
    reset: () => {
      for (const name of readdirSync(workspace)) rmSync(join(workspace, name), { recursive: true, force: true });
    },
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** Everything a run showed, for asserting that no secret leaked. */
export function shown(result: ExecResult): string {
  return `${result.stdout.text}\n${result.stderr.text}`;
}

/** Whether any secret marker appears in `text`. */
export function leaks(text: string): string[] {
  return Object.values(SECRETS).filter((secret) => text.includes(secret));
}

/**
 * Live (not zombie) processes of a sandbox user on the host — none may outlive a run. Only
 * meaningful when the tests run as root (sandboxes then run as that uid: a world's own, or the
 * COMPUTER_UID an app test sets — give each test file its own, as files run in parallel); as
 * another user it returns 0.
 */
export function liveSandboxProcesses(uid: number): number {
  if (process.getuid?.() !== 0) return 0;
  let count = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      continue;
    }
    const owner = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    if (owner === uid && !/^State:\s+Z/m.test(status)) count++;
  }
  return count;
}
