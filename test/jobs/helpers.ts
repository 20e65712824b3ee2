/** Shared helpers of the jobs tests: temporary database files and waiting on conditions. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobParameters } from "agenda";

/** A fresh directory for database files; `cleanup` removes it. */
export function tempDir(): { dir: string; file: (name?: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "familiar-jobs-"));
  return { dir, file: (name = "jobs.db") => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Polls `check` every 10 ms until it is true; rejects with `what` after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A minimal job for repository calls. */
export function job(name: string, over: Partial<JobParameters> = {}): JobParameters {
  return { name, priority: 0, nextRunAt: new Date(), type: "normal", data: {}, ...over };
}
